// Desktop only: resolve a path through its symbolic links, refusing a dangling link (its target
// cannot be checked, and writing through it would create a file wherever it points).
import { lstat, realpath } from 'node:fs/promises';
import { hostError } from './workspaceFiles';

export async function realPathRefusingDangling(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ENOENT') throw e;
    const link = await lstat(path).catch(() => undefined);
    if (link?.isSymbolicLink()) throw hostError('outside_workspace', `a dangling symbolic link cannot be followed: ${path}`);
    throw e;
  }
}
