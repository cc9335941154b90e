// browserFsHost: the workspace in the browser's origin-private file system (OPFS), under a
// directory of its root. Works in windows and workers of Chromium, Firefox and Safari, headless
// too. Paths are workspace-relative; OPFS itself has no links or `..` to escape through.
import type { DirEntry, FileStat, Host } from '../types.js';
import { type Llm, hostError, noLlm, segments } from './shared.js';

export interface BrowserFsHostOptions {
  /** The directory of the OPFS root that holds the workspace (`workspace` by default). */
  directory?: string;
  llm?: Llm;
  /** The clock; `Date.now` by default. */
  now?: () => number;
}

export function browserFsHost(options: BrowserFsHostOptions = {}): Host {
  const rootName = options.directory ?? 'workspace';
  let root: Promise<FileSystemDirectoryHandle> | undefined;
  const workspace = () => {
    if (typeof navigator === 'undefined' || !navigator.storage?.getDirectory) {
      throw hostError('io', 'this browser has no origin-private file system (navigator.storage.getDirectory)');
    }
    root ??= navigator.storage.getDirectory().then((r) => r.getDirectoryHandle(rootName, { create: true }));
    return root;
  };
  /** The directory `parts` names; created on the way when `create`. */
  const directory = async (parts: string[], create: boolean, path: string) => {
    let dir = await workspace();
    for (const part of parts) dir = await opfs(path, () => dir.getDirectoryHandle(part, { create }));
    return dir;
  };
  /** The parent directory of `path` and its last segment. */
  const parentOf = async (path: string, create: boolean) => {
    const parts = await segments(path);
    const name = parts.pop();
    if (name === undefined) throw hostError('io', `not a file path: '${path}'`);
    return { dir: await directory(parts, create, path), name };
  };
  const fileOf = async (path: string, create = false) => {
    const { dir, name } = await parentOf(path, create);
    return opfs(path, () => dir.getFileHandle(name, { create }));
  };
  const write = async (path: string, data: string, append: boolean) => {
    const handle = await fileOf(path, true);
    await opfs(path, async () => {
      const writable = await handle.createWritable({ keepExistingData: append });
      if (append) await writable.seek((await handle.getFile()).size);
      await writable.write(data);
      await writable.close();
    });
  };
  return {
    complete: async (request) => (options.llm ?? noLlm)(request),
    readFile: async (path) => {
      const file = await opfs(path, async () => (await fileOf(path)).getFile());
      return { text: await file.text(), mtimeMs: file.lastModified };
    },
    stat: async (path): Promise<FileStat | null> => {
      const parts = await segments(path);
      if (parts.length === 0) return { isDir: true, size: 0, mtimeMs: 0 };
      const name = parts.pop() as string;
      let dir: FileSystemDirectoryHandle;
      try {
        dir = await directory(parts, false, path);
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
      for await (const [entry, handle] of dir.entries()) {
        if (entry !== name) continue;
        if (handle.kind === 'directory') return { isDir: true, size: 0, mtimeMs: 0 };
        const file = await (handle as FileSystemFileHandle).getFile();
        return { isDir: false, size: file.size, mtimeMs: file.lastModified };
      }
      return null;
    },
    writeFile: (path, data) => write(path, data, false),
    appendFile: (path, data) => write(path, data, true),
    rename: async (from, to) => {
      const text = await (await opfs(from, async () => (await fileOf(from)).getFile())).text();
      await write(to, text, false);
      const { dir, name } = await parentOf(from, false);
      await opfs(from, () => dir.removeEntry(name));
    },
    remove: async (path) => {
      try {
        const { dir, name } = await parentOf(path, false);
        await opfs(path, () => dir.removeEntry(name));
      } catch (error) {
        if ((error as { code?: string }).code !== 'not_found') throw error;
      }
    },
    listDir: async (path): Promise<DirEntry[]> => {
      const dir = await directory(await segments(path), false, path);
      const entries: DirEntry[] = [];
      for await (const [name, handle] of dir.entries()) entries.push({ name, isDir: handle.kind === 'directory' });
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    nowMs: options.now ?? (() => Date.now()),
  };
}

/** An OPFS call whose DOMException becomes a host error (`NotFoundError` is `not_found`). */
async function opfs<T>(path: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    if (typeof (error as { code?: unknown })?.code === 'string') throw error;
    const code = (error as { name?: string })?.name === 'NotFoundError' ? 'not_found' : 'io';
    throw hostError(code, `${path}: ${(error as Error)?.message ?? String(error)}`);
  }
}
