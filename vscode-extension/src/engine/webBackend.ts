// The engine's web build (wasm-bindgen `--target web`): initialised synchronously from the .wasm
// bytes, read through vscode.workspace.fs from the extension's own folder.
import * as vscode from 'vscode';
import * as engineModule from 'context-workbench/dist/web/context_workbench.js';
import type { EngineBackend } from './engineApi';
import { packageBackend, packagePlanToolNames } from './packageEngine';

let initialised = false;

export async function webBackend(extensionUri: vscode.Uri): Promise<EngineBackend> {
  if (!initialised) {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(extensionUri, 'dist', 'web', 'context_workbench_bg.wasm'));
    engineModule.initSync({ module: bytes });
    initialised = true;
  }
  return packageBackend(engineModule as unknown as Parameters<typeof packageBackend>[0]);
}

export function planToolNames(): string[] {
  return packagePlanToolNames(engineModule as unknown as Parameters<typeof packagePlanToolNames>[0]);
}
