// The extension's settings (package.json `contributes.configuration`) and the API key, which
// lives in SecretStorage only.
import * as vscode from 'vscode';

export const API_KEY_SECRET = 'contextWorkbench.llm.apiKey';

export interface Settings {
  llmUrl: string;
  llmModel: string;
  window: number;
  maxRounds: number;
  /** Most explore branches the agent runs at once. */
  parallelBranches: number;
  engine: Record<string, unknown>;
  /** The setting, else its default: the engine's default store root (the manifest test checks it). */
  traceFolder: string;
  /** The user set the trace folder; otherwise the engine configuration's `store.root` decides where the agent saves. */
  traceFolderSet: boolean;
}

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration('contextWorkbench');
  const engine = c.get<unknown>('engine');
  const folder = c.inspect<string>('traceFolder');
  return {
    llmUrl: (c.get<string>('llm.url') ?? '').trim(),
    llmModel: (c.get<string>('llm.model') ?? '').trim(),
    window: Math.max(0, Math.floor(c.get<number>('window') ?? 0)),
    maxRounds: Math.max(1, Math.floor(c.get<number>('maxRounds') ?? 40)),
    parallelBranches: Math.min(8, Math.max(1, Math.floor(c.get<number>('parallelBranches') ?? 2))),
    engine: engine && typeof engine === 'object' && !Array.isArray(engine) ? (engine as Record<string, unknown>) : {},
    traceFolder: (c.get<string>('traceFolder') ?? '').trim() || String(folder?.defaultValue),
    traceFolderSet: [folder?.globalValue, folder?.workspaceValue, folder?.workspaceFolderValue].some((v) => typeof v === 'string' && v.trim() !== ''),
  };
}

export async function promptForApiKey(secrets: vscode.SecretStorage): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'API key of the OpenAI-compatible endpoint',
    prompt: 'Kept in VS Code\'s SecretStorage, never in settings. Leave empty to remove the key.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim() === '') {
    await secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage('Context Workbench: API key removed.');
  } else {
    await secrets.store(API_KEY_SECRET, key.trim());
    void vscode.window.showInformationMessage('Context Workbench: API key stored in SecretStorage.');
  }
}
