// Whether a model is set up, as the context key `contextWorkbench.hasModel`: the Goal Plan's
// welcome view then says what to set up instead of offering a task that cannot run.
import * as vscode from 'vscode';
import { readSettings } from '../config/settings';
import { selectLanguageModel } from './languageModelApi';

export const HAS_MODEL = 'contextWorkbench.hasModel';

/** An endpoint is set, or the Language Model API offers a model of the configured family. */
export async function hasModel(): Promise<boolean> {
  const settings = readSettings();
  if (settings.llmUrl !== '') return true;
  return selectLanguageModel(settings.llmModel).then(() => true, () => false);
}

/** Keep the context key current: now, and whenever the settings or the available models change. */
export function watchModel(): vscode.Disposable {
  const update = () => void hasModel().then((has) => vscode.commands.executeCommand('setContext', HAS_MODEL, has));
  update();
  const watchers = [vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('contextWorkbench.llm') && update())];
  if (vscode.lm && typeof vscode.lm.onDidChangeChatModels === 'function') watchers.push(vscode.lm.onDidChangeChatModels(update));
  return vscode.Disposable.from(...watchers);
}
