// An engine host that may only read the workspace: what reads a trace another process may be
// writing (Show Raw Trace of a followed session, the live views) goes through it. No model, no
// writes: either is refused with an error the engine classifies.
import { engineHost } from './engineHost';
import type { WorkspaceFiles } from './workspaceFiles';
import { hostError } from './workspaceFiles';

export function readOnlyHost(files: WorkspaceFiles) {
  const host = engineHost(files, async () => {
    throw hostError('llm_not_configured', 'reading a trace needs no model');
  }, { progress: () => undefined });
  const refused = async () => {
    throw hostError('io', 'this trace is only read here');
  };
  return { ...host, writeFile: refused, appendFile: refused, rename: refused, remove: refused };
}
