// pickedFolderHost: a read-only workspace over the files of a folder the user picked in a browser
// (`<input type="file" webkitdirectory>`) or dropped on a page. A file is read when the engine
// asks for it, in the page: nothing is uploaded, copied or written. For reading a trace store
// with `TraceStore` (which never writes).
import type { DirEntry, FileContent, FileStat, Host } from '../types.js';
import { entriesOf, hostError, isDirOf, noLlm, normalise } from './shared.js';

/** The files of the folder by their paths inside it (`abc/meta.json`, not the folder's own name). */
export type PickedFiles = Iterable<readonly [string, PickedFile]>;

/** A picked file: a `File`, or any `Blob` (its time, when it has one). */
type PickedFile = Blob & { lastModified?: number };

export function pickedFolderHost(picked: PickedFiles, options: { now?: () => number } = {}): Host {
  const entries = [...picked];
  let byPath: Promise<Map<string, PickedFile>> | undefined;
  const files = () => (byPath ??= (async () => {
    const map = new Map<string, PickedFile>();
    for (const [path, blob] of entries) map.set(await normalise(path), blob);
    return map;
  })());
  const readOnly = async (path: string): Promise<never> => {
    throw hostError('io', `the picked folder is read-only: ${path} was not written`);
  };
  return {
    complete: noLlm,
    readFile: async (path): Promise<FileContent> => {
      const file = (await files()).get(await normalise(path));
      if (!file) throw hostError('not_found', `no such file: ${path}`);
      try {
        return { text: await file.text(), mtimeMs: file.lastModified ?? 0 };
      } catch (error) {
        throw hostError('io', `${path} could not be read: ${(error as Error).message}`);
      }
    },
    stat: async (path): Promise<FileStat | null> => {
      const [all, key] = [await files(), await normalise(path)];
      const file = all.get(key);
      if (file) return { isDir: false, size: file.size, mtimeMs: file.lastModified ?? 0 };
      return isDirOf(all.keys(), key) ? { isDir: true, size: 0, mtimeMs: 0 } : null;
    },
    writeFile: readOnly,
    appendFile: readOnly,
    rename: readOnly,
    remove: readOnly,
    listDir: async (path): Promise<DirEntry[]> => {
      const [all, dir] = [await files(), await normalise(path)];
      if (!isDirOf(all.keys(), dir)) throw hostError('not_found', `no such directory: ${path}`);
      return entriesOf(all.keys(), dir);
    },
    nowMs: options.now ?? Date.now,
  };
}
