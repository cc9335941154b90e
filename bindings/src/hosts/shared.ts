// What the ready-made hosts share: workspace-relative paths (`/`-separated, no leading `/`, no
// `..`), host errors the engine classifies by code, and the LLM a host is given.
import type { Completion, CompletionRequest } from '../types.js';

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

/** The segments of a workspace-relative path (`''` and `.` are the root); refuses escapes. */
export function segments(path: string): string[] {
  if (typeof path !== 'string') throw hostError('outside_workspace', `not a path: ${String(path)}`);
  if (path.startsWith('/') || path.includes('\\') || /^[a-zA-Z]:/.test(path) || path.includes('\0')) {
    throw hostError('outside_workspace', `not a workspace-relative path: ${path}`);
  }
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw hostError('outside_workspace', `path leaves the workspace: ${path}`);
  return parts;
}

/** The normalised form of a workspace-relative path (`a/./b/` → `a/b`). */
export function normalise(path: string): string {
  return segments(path).join('/');
}
