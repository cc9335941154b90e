// memoryHost: a workspace held in a Map, for tests and demos. Its LLM is whatever function
// you give it (none by default: `llm_not_configured`); its clock is fixed unless you pass one.
import type { DirEntry, FileContent, FileStat, Host } from '../types.js';
import { engineLoaded } from '../init.js';
import { type Llm, entriesOf, hostError, isDirOf, noLlm, normalise, normaliseLoaded } from './shared.js';

export interface MemoryHostOptions {
  /** Initial files: workspace-relative path → text. */
  files?: Record<string, string>;
  llm?: Llm;
  /** The clock; by default fixed at 2026-01-01T00:00:00Z so runs are reproducible. */
  now?: () => number;
}

/** A memory host, with `files` to look at what the engine wrote. */
export interface MemoryHost extends Host {
  readonly files: Map<string, FileContent>;
}

export const FIXED_CLOCK_MS = Date.UTC(2026, 0, 1);

export function memoryHost(options: MemoryHostOptions = {}): MemoryHost {
  const now = options.now ?? (() => FIXED_CLOCK_MS);
  const files = new Map<string, FileContent>();
  // The initial files take the engine's normal form of their paths once the engine is loaded
  // (the first call of the host loads it if need be).
  let seed: Record<string, string> | undefined = options.files;
  const seeded = () => {
    if (seed && engineLoaded()) {
      for (const [path, text] of Object.entries(seed)) files.set(normaliseLoaded(path), { text, mtimeMs: now() });
      seed = undefined;
    }
    return files;
  };
  const normal = async (path: string) => {
    const key = await normalise(path);
    seeded();
    return key;
  };
  const isDir = (dir: string) => isDirOf(files.keys(), dir);
  const read = async (path: string): Promise<FileContent> => {
    const file = files.get(await normal(path));
    if (!file) throw hostError('not_found', `no such file: ${path}`);
    return file;
  };
  return {
    get files() {
      return seeded();
    },
    complete: async (request) => (options.llm ?? noLlm)(request),
    readFile: async (path) => ({ ...(await read(path)) }),
    stat: async (path): Promise<FileStat | null> => {
      const key = await normal(path);
      const file = files.get(key);
      if (file) return { isDir: false, size: new TextEncoder().encode(file.text).length, mtimeMs: file.mtimeMs };
      return isDir(key) ? { isDir: true, size: 0, mtimeMs: 0 } : null;
    },
    writeFile: async (path, data) => void files.set(await normal(path), { text: data, mtimeMs: now() }),
    appendFile: async (path, data) => {
      const key = await normal(path);
      files.set(key, { text: (files.get(key)?.text ?? '') + data, mtimeMs: now() });
    },
    rename: async (from, to) => {
      const file = await read(from);
      const target = await normal(to);
      files.delete(await normal(from));
      files.set(target, file);
    },
    remove: async (path) => void files.delete(await normal(path)),
    listDir: async (path): Promise<DirEntry[]> => {
      const dir = await normal(path);
      if (!isDir(dir)) throw hostError('not_found', `no such directory: ${path}`);
      return entriesOf(files.keys(), dir);
    },
    nowMs: now,
  };
}
