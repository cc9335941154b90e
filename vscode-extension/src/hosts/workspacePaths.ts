// Workspace-relative paths as the engine and the agent's tools use them: `/`-separated, no
// leading slash, never leaving the workspace, by the engine's rule. Tested without VS Code.
import { normalizeWorkspacePath } from 'context-workbench';

/** A path was refused: absolute, escaping the workspace, or malformed. */
export class PathRefused extends Error {
  readonly code = 'outside_workspace';
  constructor(readonly path: string, reason: string) {
    super(`${reason}: ${JSON.stringify(path)}`);
    this.name = 'PathRefused';
  }

  /** The engine's refusal, whose message already names the path. */
  static byEngine(path: string, message: string): PathRefused {
    return Object.assign(new PathRefused(path, ''), { message });
  }
}

/**
 * Normalize `input` to a workspace-relative path (`''` is the workspace root) by the engine's one
 * rule for paths (`normalizeWorkspacePath`: backslashes are separators, `.` segments go, `..` is
 * refused wherever it would climb above the root, absolute paths and URLs are refused). Needs the
 * engine loaded, as everything that reaches a file here does.
 */
export function normalizeRelative(input: string): string {
  if (typeof input !== 'string') throw new PathRefused(String(input), 'a path must be a string');
  try {
    return normalizeWorkspacePath(input);
  } catch (error) {
    if ((error as { code?: string }).code === 'host_outside_workspace') throw PathRefused.byEngine(input, (error as Error).message);
    throw error;
  }
}

/** Join a workspace-relative directory and an entry name. */
export function joinRelative(dir: string, name: string): string {
  return normalizeRelative(dir === '' ? name : `${dir}/${name}`);
}

/**
 * Whether the absolute, resolved `target` lies inside one of the absolute, resolved `roots`
 * (equal to a root counts as inside). Paths use `/`.
 */
export function isInsideAny(target: string, roots: readonly string[]): boolean {
  const strip = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
  const t = strip(target);
  return roots.some((root) => {
    const r = strip(root);
    return t === r || t.startsWith(r === '/' ? '/' : `${r}/`);
  });
}

/**
 * Split a multi-root reference: with more than one workspace folder, paths start with the
 * folder's name (`api/src/x.ts`); with one, they are relative to it.
 */
export function splitFolder(relative: string, folderNames: readonly string[]): { folder: number; rest: string } {
  if (folderNames.length <= 1) return { folder: 0, rest: relative };
  const [first, ...rest] = relative.split('/');
  const folder = folderNames.indexOf(first);
  if (folder < 0) {
    throw new PathRefused(relative, `with several workspace folders a path starts with one of ${folderNames.join(', ')}`);
  }
  return { folder, rest: rest.join('/') };
}
