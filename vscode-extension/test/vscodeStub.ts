// The `vscode` module in the unit tests (the test build aliases `vscode` to this file): the parts
// of the API the session, the hosts and the commands touch, the workspace's files in memory, and
// the user's answers set by each test. Notifications and opened documents are kept for asserts.
import path from 'node:path';

export class Uri {
  private constructor(readonly scheme: string, readonly authority: string, readonly path: string) {}
  get fsPath(): string {
    return this.path;
  }
  static file(p: string): Uri {
    return new Uri('file', '', path.posix.normalize(p));
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...segments));
  }
}

export enum FileType { File = 1, Directory = 2, SymbolicLink = 64 }
export enum ViewColumn { Beside = -2 }

export class FileSystemError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

interface Disposable { dispose(): void }
type Listener = (e: unknown) => void;

/** The workspace's files by absolute path; a folder is any prefix of one. */
export const files = new Map<string, Uint8Array>();

const notFound = (uri: Uri) => new FileSystemError(`no such file: ${uri.path}`, 'FileNotFound');
const under = (dir: string) => [...files.keys()].filter((k) => k.startsWith(`${dir.replace(/\/$/, '')}/`));

export const workspace = {
  workspaceFolders: undefined as Array<{ uri: Uri; name: string; index: number }> | undefined,
  /** The `contextWorkbench.*` settings, by key without the prefix. */
  settings: {} as Record<string, unknown>,
  getConfiguration: () => ({ get: (key: string) => workspace.settings[key] }),
  openTextDocument: async (options: { content: string }) => ({ getText: () => options.content }),
  fs: {
    async stat(uri: Uri) {
      const file = files.get(uri.path);
      if (file) return { type: FileType.File, size: file.length, mtime: 1, ctime: 1 };
      if (under(uri.path).length > 0) return { type: FileType.Directory, size: 0, mtime: 1, ctime: 1 };
      throw notFound(uri);
    },
    async readFile(uri: Uri): Promise<Uint8Array> {
      const file = files.get(uri.path);
      if (!file) throw notFound(uri);
      return file;
    },
    async writeFile(uri: Uri, bytes: Uint8Array): Promise<void> {
      files.set(uri.path, bytes);
    },
    async rename(from: Uri, to: Uri): Promise<void> {
      const file = files.get(from.path);
      if (!file) throw notFound(from);
      files.set(to.path, file);
      files.delete(from.path);
    },
    async delete(uri: Uri): Promise<void> {
      for (const k of [uri.path, ...under(uri.path)]) files.delete(k);
    },
    async readDirectory(uri: Uri): Promise<Array<[string, FileType]>> {
      const names = new Map<string, FileType>();
      for (const k of under(uri.path)) {
        const [name, ...rest] = k.slice(uri.path.replace(/\/$/, '').length + 1).split('/');
        names.set(name, rest.length > 0 ? FileType.Directory : FileType.File);
      }
      return [...names];
    },
  },
};

const listeners = (set: Set<Listener>) => (listener: Listener): Disposable => {
  set.add(listener);
  return { dispose: () => set.delete(listener) };
};

const endListeners = new Set<Listener>();

export const window = {
  /** Every notification shown, oldest first. */
  messages: [] as string[],
  /** The text of every document shown. */
  documents: [] as string[],
  /** The button the user picks in a warning (the command confirmation's "Run"). */
  answer: undefined as string | undefined,
  activeTextEditor: undefined as unknown,
  /** What createTerminal returns. */
  terminal: undefined as unknown,
  /** Who listens for the end of a command. */
  endListeners,
  async showWarningMessage(message: string) {
    window.messages.push(message);
    return window.answer;
  },
  async showErrorMessage(message: string) {
    window.messages.push(message);
    return undefined;
  },
  async showInformationMessage(message: string) {
    window.messages.push(message);
    return undefined;
  },
  showQuickPick: async <T>(items: T[]) => items[0],
  async showTextDocument(doc: { getText(): string }) {
    window.documents.push(doc.getText());
  },
  createTerminal: () => window.terminal,
  onDidStartTerminalShellExecution: listeners(new Set()),
  onDidEndTerminalShellExecution: listeners(endListeners),
  onDidChangeTerminalShellIntegration: listeners(new Set()),
};
