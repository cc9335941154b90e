// nodeFsHost: the workspace under `root` on disk, with Node's fs. Every path is
// workspace-relative; absolute paths, `..` and symbolic links that lead out or dangle are refused.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { DirEntry, Host } from '../types.js';
import { type Llm, hostError, noLlm, segments } from './shared.js';

export interface NodeFsHostOptions {
  llm?: Llm;
  /** The clock; `Date.now` by default. */
  now?: () => number;
  /**
   * Run each file operation on the calling thread instead of libuv's thread pool. For a thread
   * whose only work is the engine's (the proxy's engine threads): there a call's dozen small
   * writes cost ~0.1 ms each as trips through the pool, a few microseconds each in place.
   */
  blocking?: boolean;
}

/** The file operations the host uses (text in UTF-8, directories made with their parents), as promises either way. */
interface FileOps {
  appendFile(file: string, text: string): Promise<void>;
  lstat(file: string): Promise<fs.Stats>;
  mkdir(dir: string): Promise<unknown>;
  readFile(file: string): Promise<string>;
  readdir(dir: string): Promise<fs.Dirent[]>;
  realpath(file: string): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  rm(file: string): Promise<void>;
  stat(file: string): Promise<fs.Stats>;
  writeFile(file: string, text: string): Promise<void>;
}

const throughPool: FileOps = {
  appendFile: (file, text) => fsp.appendFile(file, text, 'utf8'),
  lstat: (file) => fsp.lstat(file),
  mkdir: (dir) => fsp.mkdir(dir, { recursive: true }),
  readFile: (file) => fsp.readFile(file, 'utf8'),
  readdir: (dir) => fsp.readdir(dir, { withFileTypes: true }),
  realpath: (file) => fsp.realpath(file),
  rename: (from, to) => fsp.rename(from, to),
  rm: (file) => fsp.rm(file, { force: true }),
  stat: (file) => fsp.stat(file),
  writeFile: (file, text) => fsp.writeFile(file, text, 'utf8'),
};

const inPlace: FileOps = {
  appendFile: async (file, text) => fs.appendFileSync(file, text, 'utf8'),
  lstat: async (file) => fs.lstatSync(file),
  mkdir: async (dir) => fs.mkdirSync(dir, { recursive: true }),
  readFile: async (file) => fs.readFileSync(file, 'utf8'),
  readdir: async (dir) => fs.readdirSync(dir, { withFileTypes: true }),
  // realpath(3): Node's own realpathSync walks the path in JavaScript, a tenth of a millisecond more per managed call.
  realpath: async (file) => fs.realpathSync.native(file),
  rename: async (from, to) => fs.renameSync(from, to),
  rm: async (file) => fs.rmSync(file, { force: true }),
  stat: async (file) => fs.statSync(file),
  writeFile: async (file, text) => fs.writeFileSync(file, text, 'utf8'),
};

export function nodeFsHost(root: string, options: NodeFsHostOptions = {}): Host {
  const { appendFile, lstat, mkdir, readFile, readdir, realpath, rename, rm, stat, writeFile } = options.blocking ? inPlace : throughPool;
  const top = path.resolve(root);
  let realTop: Promise<string> | undefined;
  /** The absolute path of `relative`, after checking that what exists of it stays under root. */
  const resolve = async (relative: string): Promise<string> => {
    const absolute = path.join(top, ...(await segments(relative)));
    realTop ??= realpath(top);
    const base = await realTop;
    // The deepest part of the path that exists, with links resolved, must stay inside root.
    let existing = absolute;
    for (;;) {
      try {
        const real = await realpath(existing);
        if (real !== base && !real.startsWith(base + path.sep)) {
          throw hostError('outside_workspace', `path leads out of the workspace through a link: ${relative}`);
        }
        return absolute;
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOENT' || existing === top) throw classify(error, relative);
        // A dangling link is ENOENT too, but writing through it would create its target, wherever that is.
        if ((await lstat(existing).catch(() => undefined))?.isSymbolicLink()) {
          throw hostError('outside_workspace', `a dangling symbolic link cannot be followed: ${relative}`);
        }
        existing = path.dirname(existing);
      }
    }
  };
  return {
    complete: async (request) => (options.llm ?? noLlm)(request),
    readFile: async (p) => {
      const file = await resolve(p);
      try {
        const [text, info] = await Promise.all([readFile(file), stat(file)]);
        return { text, mtimeMs: Math.trunc(info.mtimeMs) };
      } catch (error) {
        throw classify(error, p);
      }
    },
    stat: async (p) => {
      const file = await resolve(p);
      try {
        const info = await stat(file);
        return { isDir: info.isDirectory(), size: info.size, mtimeMs: Math.trunc(info.mtimeMs) };
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') return null;
        throw classify(error, p);
      }
    },
    writeFile: async (p, data) => {
      const file = await resolve(p);
      await attempt(p, async () => {
        await mkdir(path.dirname(file));
        await writeFile(file, data);
      });
    },
    appendFile: async (p, data) => {
      const file = await resolve(p);
      await attempt(p, async () => {
        await mkdir(path.dirname(file));
        await appendFile(file, data);
      });
    },
    rename: async (from, to) => {
      const [a, b] = [await resolve(from), await resolve(to)];
      await attempt(from, async () => {
        await mkdir(path.dirname(b));
        await rename(a, b);
      });
    },
    remove: async (p) => {
      const file = await resolve(p);
      await attempt(p, () => rm(file));
    },
    listDir: async (p): Promise<DirEntry[]> => {
      const dir = await resolve(p);
      const entries = await attempt(p, () => readdir(dir));
      return entries
        .map((e) => ({ name: e.name, isDir: e.isDirectory() }))
        .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    },
    // Node has no advisory lock: the holder's process id is in the file, and a lock whose holder
    // is gone (or one an OS-locking holder let go, leaving the file empty) is taken over.
    tryLock: async (p) => {
      const file = await resolve(p);
      return attempt(p, async () => {
        await mkdir(path.dirname(file));
        for (;;) {
          try {
            fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
            return true;
          } catch (error) {
            if ((error as { code?: string }).code !== 'EEXIST') throw error;
          }
          const holder = lockHolder(file);
          if (holder === process.pid) return true;
          if (holder !== undefined && alive(holder)) return false;
          fs.rmSync(file, { force: true });
        }
      });
    },
    unlock: async (p) => {
      const file = await resolve(p);
      if (lockHolder(file) === process.pid) await attempt(p, () => rm(file));
    },
    nowMs: options.now ?? (() => Date.now()),
  };
}

/** The process id a lock file names, if it names one. */
function lockHolder(file: string): number | undefined {
  const text = (() => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  })();
  const pid = Number.parseInt(text.trim(), 10);
  return pid > 0 ? pid : undefined;
}

/** Whether a process `pid` is running (one of another user's counts: it cannot be signalled). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

async function attempt<T>(relative: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    throw classify(error, relative);
  }
}

/** A Node fs error as a host error: ENOENT is `not_found`, the rest `io`, with the path. */
function classify(error: unknown, relative: string): Error {
  const code = (error as { code?: string })?.code;
  if (code === 'outside_workspace') return error as Error;
  const message = `${relative}: ${(error as Error)?.message ?? String(error)}`;
  return hostError(code === 'ENOENT' ? 'not_found' : 'io', message);
}
