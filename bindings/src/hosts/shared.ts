// What the ready-made hosts share: workspace-relative paths by the engine's rule, host errors the
// engine classifies by code, and the LLM a host is given.
import type { Completion, CompletionRequest, DirEntry } from '../types.js';
import { engineLoaded, init } from '../init.js';
import { normalizeWorkspacePath } from '../wasm/context_workbench.js';

/** An LLM as the hosts take it: a completion for a request (see openAiCompatibleLlm). */
export type Llm = (request: CompletionRequest) => Promise<Completion> | Completion;

/** The LLM of a host given none: every call fails with `host_llm_not_configured`. */
export const noLlm: Llm = () => {
  throw hostError('llm_not_configured', 'this host has no LLM: pass one (openAiCompatibleLlm, say)');
};

/** A host error the engine classifies by `code` (`not_found`, `outside_workspace`, `io`, …). */
export function hostError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** The segments of a workspace-relative path (`''` and `.` are the root), by the engine's one rule
 * for paths (`normalizeWorkspacePath`: backslashes are separators, `..` may not climb out,
 * absolute paths and URLs are refused). Loads the engine first if it is not yet. */
export async function segments(path: string): Promise<string[]> {
  const normal = await normalise(path);
  return normal === '' ? [] : normal.split('/');
}

/** The normal form of a workspace-relative path (`a/./b/` → `a/b`); loads the engine first if need be. */
export async function normalise(path: string): Promise<string> {
  if (!engineLoaded()) await init();
  return normaliseLoaded(path);
}

/** `normalise` once the engine is loaded. */
export function normaliseLoaded(path: string): string {
  if (typeof path !== 'string') throw hostError('outside_workspace', `not a path: ${String(path)}`);
  try {
    return normalizeWorkspacePath(path);
  } catch (error) {
    throw hostError('outside_workspace', (error as Error).message);
  }
}

/** Whether `dir` (normal form) is a directory of a workspace whose files are `paths`: the root, or
 * a prefix of one of them. */
export function isDirOf(paths: Iterable<string>, dir: string): boolean {
  if (dir === '') return true;
  for (const path of paths) if (path.startsWith(`${dir}/`)) return true;
  return false;
}

/** The entries of the directory `dir` (normal form) of a workspace whose files are `paths`, sorted. */
export function entriesOf(paths: Iterable<string>, dir: string): DirEntry[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  const names = new Map<string, boolean>();
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue;
    const [name, ...rest] = path.slice(prefix.length).split('/');
    names.set(name, (names.get(name) ?? false) || rest.length > 0);
  }
  return [...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, isDir]) => ({ name, isDir }));
}
