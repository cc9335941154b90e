// The engine's and the agent's file access over `vscode.workspace.fs`: workspace-relative paths,
// nothing outside the workspace folders, symbolic links that lead outside included.
import * as vscode from 'vscode';
import { PathRefused, isInsideAny, joinRelative, normalizeRelative, splitFolder } from './workspacePaths';
import { errorText } from '../errorText';

/** Resolves a `file:` path through its symbolic links (Node's `fs.realpath`); absent in browsers. */
export type RealPath = (fsPath: string) => Promise<string>;

export interface FileContent { text: string; mtimeMs: number }
export interface FileStat { isDir: boolean; size: number; mtimeMs: number }
export interface DirEntry { name: string; isDir: boolean }

/** A failure the engine classifies by `code` (see the package's `Host` interface). */
export function hostError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export class NoWorkspaceError extends Error {
  readonly code = 'no_workspace';
  constructor() {
    super('Context Workbench needs an open folder: open a folder or workspace first.');
  }
}

export class WorkspaceFiles {
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly folders: readonly vscode.WorkspaceFolder[],
    private readonly realPath?: RealPath,
  ) {
    if (folders.length === 0) throw new NoWorkspaceError();
  }

  /** The URI of a workspace-relative path, refused before any access when it leaves the workspace. */
  uriOf(relative: string): vscode.Uri {
    const normalized = normalizeRelative(relative);
    const { folder, rest } = splitFolder(normalized, this.folders.map((f) => f.name));
    const root = this.folders[folder].uri;
    return rest === '' ? root : vscode.Uri.joinPath(root, ...rest.split('/'));
  }

  /** The workspace-relative path of a URI inside the workspace, or undefined. */
  relativeOf(uri: vscode.Uri): string | undefined {
    for (const f of this.folders) {
      const root = f.uri.path.replace(/\/+$/, '');
      if (uri.scheme !== f.uri.scheme || uri.authority !== f.uri.authority) continue;
      if (uri.path === root || uri.path.startsWith(`${root}/`)) {
        const rest = uri.path.slice(root.length + 1);
        return this.folders.length > 1 ? joinRelative(f.name, rest) : rest;
      }
    }
    return undefined;
  }

  async readFile(path: string): Promise<FileContent> {
    const uri = await this.checked(path);
    const [bytes, stat] = await this.fs(path, async () => [await vscode.workspace.fs.readFile(uri), await vscode.workspace.fs.stat(uri)] as const);
    return { text: this.decoder.decode(bytes), mtimeMs: stat.mtime };
  }

  async stat(path: string): Promise<FileStat | null> {
    const uri = await this.checked(path);
    try {
      const s = await vscode.workspace.fs.stat(uri);
      return { isDir: (s.type & vscode.FileType.Directory) !== 0, size: s.size, mtimeMs: s.mtime };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw toHostError(path, e);
    }
  }

  async writeFile(path: string, data: string): Promise<void> {
    const uri = await this.checked(path);
    await this.fs(path, () => vscode.workspace.fs.writeFile(uri, this.encoder.encode(data)));
  }

  /** workspace.fs cannot append: the whole file is written beside it, then renamed over it. */
  async appendFile(path: string, data: string): Promise<void> {
    const existing = (await this.stat(path)) ? (await this.readFile(path)).text : '';
    await this.writeFile(`${path}.tmp`, existing + data);
    await this.rename(`${path}.tmp`, path);
  }

  async rename(from: string, to: string): Promise<void> {
    const [source, target] = [await this.checked(from), await this.checked(to)];
    await this.fs(from, () => vscode.workspace.fs.rename(source, target, { overwrite: true }));
  }

  async remove(path: string): Promise<void> {
    const uri = await this.checked(path);
    try {
      await vscode.workspace.fs.delete(uri, { recursive: true, useTrash: false });
    } catch (e) {
      if (!isNotFound(e)) throw toHostError(path, e);
    }
  }

  async listDir(path: string): Promise<DirEntry[]> {
    const uri = await this.checked(path);
    const entries = await this.fs(path, () => vscode.workspace.fs.readDirectory(uri));
    return entries
      .map(([name, type]) => ({ name, isDir: (type & vscode.FileType.Directory) !== 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The URI of `path` after checking that no symbolic link on the way leads outside the
   * workspace. With `realPath` (desktop, `file:` URIs) the nearest existing ancestor is resolved
   * and must stay inside a resolved workspace folder; without it (browsers, remote schemes) a
   * symbolic link anywhere on the path is refused, since where it leads cannot be seen.
   */
  private async checked(path: string): Promise<vscode.Uri> {
    let uri: vscode.Uri;
    try {
      uri = this.uriOf(path);
    } catch (e) {
      if (e instanceof PathRefused) throw hostError('outside_workspace', e.message);
      throw e;
    }
    if (this.realPath && uri.scheme === 'file') {
      await this.checkResolved(path, uri);
    } else {
      await this.refuseLinks(path, uri);
    }
    return uri;
  }

  private async checkResolved(path: string, uri: vscode.Uri): Promise<void> {
    const realPath = this.realPath as RealPath;
    const roots = await Promise.all(this.folders.filter((f) => f.uri.scheme === 'file').map((f) => realPath(f.uri.fsPath).catch(() => f.uri.fsPath)));
    let probe = uri;
    for (;;) {
      try {
        const real = await realPath(probe.fsPath);
        if (!isInsideAny(real.replace(/\\/g, '/'), roots.map((r) => r.replace(/\\/g, '/')))) {
          throw hostError('outside_workspace', `a symbolic link leads outside the workspace: ${JSON.stringify(path)}`);
        }
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== 'ENOENT') throw e;
        const parent = vscode.Uri.joinPath(probe, '..');
        if (parent.path === probe.path) return;
        probe = parent;
      }
    }
  }

  private async refuseLinks(path: string, uri: vscode.Uri): Promise<void> {
    const root = this.folders.find((f) => uri.path === f.uri.path || uri.path.startsWith(`${f.uri.path.replace(/\/+$/, '')}/`));
    if (!root) return;
    const segments = uri.path.slice(root.uri.path.replace(/\/+$/, '').length).split('/').filter(Boolean);
    let probe = root.uri;
    for (const segment of segments) {
      probe = vscode.Uri.joinPath(probe, segment);
      let type: vscode.FileType;
      try {
        type = (await vscode.workspace.fs.stat(probe)).type;
      } catch (e) {
        if (isNotFound(e)) return;
        throw toHostError(path, e);
      }
      if (type & vscode.FileType.SymbolicLink) {
        throw hostError('outside_workspace', `symbolic links cannot be followed here: ${JSON.stringify(path)}`);
      }
    }
  }

  private async fs<T>(path: string, operation: () => Thenable<T> | Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (e) {
      throw toHostError(path, e);
    }
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof vscode.FileSystemError ? e.code === 'FileNotFound' : (e as { code?: string })?.code === 'ENOENT';
}

function toHostError(path: string, e: unknown): Error {
  if (isNotFound(e)) return hostError('not_found', `no such file: ${path}`);
  const message = errorText(e);
  return hostError('io', `${path}: ${message}`);
}
