// The configured OpenAI-compatible endpoint as a VS Code language model (vendor
// `context-workbench`), so the chat view, and @workbench in it, work without another provider.
// Token counts are the engine's.
import * as vscode from 'vscode';
import { API_KEY_SECRET, readSettings } from '../config/settings';
import { OpenAiCompatibleModel } from '../llm/openAiCompatible';
import type { WireMessage, WireTool } from '../llm/types';

export const VENDOR = 'context-workbench';

export function registerEndpointModelProvider(secrets: vscode.SecretStorage, countTokens: (text: string) => Promise<number>): vscode.Disposable | undefined {
  if (!vscode.lm || typeof vscode.lm.registerLanguageModelChatProvider !== 'function') return undefined;
  const changed = new vscode.EventEmitter<void>();
  const watch = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('contextWorkbench.llm') || e.affectsConfiguration('contextWorkbench.window')) changed.fire();
  });
  const provider: vscode.LanguageModelChatProvider = {
    onDidChangeLanguageModelChatInformation: changed.event,
    provideLanguageModelChatInformation() {
      const s = readSettings();
      if (s.llmUrl === '' || s.llmModel === '') return [];
      return [{
        id: s.llmModel,
        name: `${s.llmModel} (Context Workbench endpoint)`,
        family: s.llmModel,
        version: '1',
        maxInputTokens: s.window > 0 ? s.window : 128_000,
        maxOutputTokens: 8_192,
        tooltip: `${s.llmModel} at ${s.llmUrl}`,
        capabilities: { toolCalling: true },
      }];
    },
    async provideLanguageModelChatResponse(info, messages, options, progress, token) {
      const s = readSettings();
      const model = new OpenAiCompatibleModel({ url: s.llmUrl, model: info.id, apiKey: await secrets.get(API_KEY_SECRET) });
      const abort = new AbortController();
      const sub = token.onCancellationRequested(() => abort.abort());
      try {
        const tools: WireTool[] = (options.tools ?? []).map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema ?? { type: 'object', properties: {} } } }));
        const reply = await model.chat({ messages: toWireMessages(messages), tools, signal: abort.signal, onText: (d) => progress.report(new vscode.LanguageModelTextPart(d)) });
        for (const call of reply.toolCalls) progress.report(new vscode.LanguageModelToolCallPart(call.id, call.name, parseObject(call.arguments)));
      } finally {
        sub.dispose();
      }
    },
    async provideTokenCount(_info, text) {
      return countTokens(typeof text === 'string' ? text : toWireMessages([text]).map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n'));
    },
  };
  const registration = vscode.lm.registerLanguageModelChatProvider(VENDOR, provider);
  return vscode.Disposable.from(registration, watch, changed);
}

/** Language Model API messages in the OpenAI chat form; tool results become `tool` messages. */
function toWireMessages(messages: readonly vscode.LanguageModelChatRequestMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    const texts: string[] = [];
    const calls: NonNullable<WireMessage['tool_calls']> = [];
    for (const part of m.content) {
      if (part instanceof vscode.LanguageModelTextPart) texts.push(part.value);
      else if (part instanceof vscode.LanguageModelToolCallPart) calls.push({ id: part.callId, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.input ?? {}) } });
      else if (part instanceof vscode.LanguageModelToolResultPart) {
        const content = part.content.map((c) => (c instanceof vscode.LanguageModelTextPart ? c.value : '')).join('');
        out.push({ role: 'tool', tool_call_id: part.callId, content });
      }
    }
    if (m.role === vscode.LanguageModelChatMessageRole.Assistant) {
      out.push({ role: 'assistant', content: texts.join('') || null, ...(calls.length ? { tool_calls: calls } : {}) });
    } else if (texts.length > 0) {
      out.push({ role: 'user', content: texts.join('') });
    }
  }
  return out;
}

function parseObject(json: string): object {
  try {
    const v = JSON.parse(json);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}
