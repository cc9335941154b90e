// The engine's TraceStore over one workspace folder's files, read-only: the live views read the
// trace folder through it (the engine knows the store's layout; the host only moves bytes).
import { TraceStore } from 'context-workbench';
import type * as vscode from 'vscode';
import { readOnlyHost } from '../hosts/readOnlyHost';
import { type RealPath, WorkspaceFiles } from '../hosts/workspaceFiles';

/** Opens the store under `root` (workspace-relative) of `folder`, once the engine is loaded. */
export type OpenTraceStore = (folder: vscode.WorkspaceFolder, root: string) => Promise<TraceStore>;

export function traceStoreOpener(ready: () => Promise<void>, realPath?: RealPath): OpenTraceStore {
  return async (folder, root) => {
    await ready();
    return TraceStore.create(readOnlyHost(new WorkspaceFiles([folder], realPath)), { root });
  };
}
