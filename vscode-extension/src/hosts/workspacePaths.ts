// Workspace-relative paths as the engine and the agent's tools use them: `/`-separated, no
// leading slash, never leaving the workspace. Pure, so the rules are tested without VS Code.

/** A path was refused: absolute, escaping the workspace, or malformed. */
export class PathRefused extends Error {
  readonly code = 'outside_workspace';
  constructor(readonly path: string, reason: string) {
    super(`${reason}: ${JSON.stringify(path)}`);
    this.name = 'PathRefused';
  }
}

/**
 * Normalize `input` to a workspace-relative path (`''` is the workspace root). Backslashes count
 * as separators; `.` segments go; `..` is refused wherever it would climb above the root.
 */
export function normalizeRelative(input: string): string {
  if (typeof input !== 'string') throw new PathRefused(String(input), 'a path must be a string');
  if (input.includes('\0')) throw new PathRefused(input, 'a path may not contain NUL');
  const slashed = input.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed) || /^[a-z][a-z0-9+.-]*:\/\//i.test(slashed)) {
    throw new PathRefused(input, 'absolute paths are refused; give a path relative to the workspace');
  }
  const kept: string[] = [];
  for (const segment of slashed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (kept.length === 0) throw new PathRefused(input, 'the path leaves the workspace');
      kept.pop();
    } else {
      kept.push(segment);
    }
  }
  return kept.join('/');
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
