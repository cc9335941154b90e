// nodeFsHost: the workspace under `root` on disk, with Node's fs/promises. Every path is
// workspace-relative; absolute paths, `..` and symbolic links that lead out or dangle are refused.
import { appendFile, lstat, mkdir, readFile, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DirEntry, Host } from '../types.js';
import { type Llm, hostError, noLlm, segments } from './shared.js';

export interface NodeFsHostOptions {
  llm?: Llm;
  /** The clock; `Date.now` by default. */
  now?: () => number;
}

export function nodeFsHost(root: string, options: NodeFsHostOptions = {}): Host {
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
        const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
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
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, data, 'utf8');
      });
    },
    appendFile: async (p, data) => {
      const file = await resolve(p);
      await attempt(p, async () => {
        await mkdir(path.dirname(file), { recursive: true });
        await appendFile(file, data, 'utf8');
      });
    },
    rename: async (from, to) => {
      const [a, b] = [await resolve(from), await resolve(to)];
      await attempt(from, async () => {
        await mkdir(path.dirname(b), { recursive: true });
        await rename(a, b);
      });
    },
    remove: async (p) => {
      const file = await resolve(p);
      await attempt(p, () => rm(file, { force: true }));
    },
    listDir: async (p): Promise<DirEntry[]> => {
      const dir = await resolve(p);
      const entries = await attempt(p, () => readdir(dir, { withFileTypes: true }));
      return entries
        .map((e) => ({ name: e.name, isDir: e.isDirectory() }))
        .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    },
    nowMs: options.now ?? (() => Date.now()),
  };
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
