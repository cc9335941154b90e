// The chat model the settings name: an OpenAI-compatible endpoint when contextWorkbench.llm.url
// is set (key from SecretStorage), otherwise one from VS Code's Language Model API.
import type * as vscode from 'vscode';
import { API_KEY_SECRET, type Settings } from '../config/settings';
import { selectLanguageModel } from './languageModelApi';
import { OpenAiCompatibleModel } from './openAiCompatible';
import type { ChatModel } from './types';

export async function configuredModel(settings: Settings, secrets: vscode.SecretStorage): Promise<ChatModel> {
  if (settings.llmUrl !== '') {
    const apiKey = await secrets.get(API_KEY_SECRET);
    return new OpenAiCompatibleModel({ url: settings.llmUrl, model: settings.llmModel, apiKey });
  }
  return selectLanguageModel(settings.llmModel);
}

/** The window the engine plans for: the setting, or the model's own input limit. */
export function windowOf(settings: Settings, model: ChatModel): number {
  return settings.window > 0 ? settings.window : model.maxInputTokens;
}
