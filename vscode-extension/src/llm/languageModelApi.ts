// A chat model from VS Code's Language Model API (`vscode.lm`): streaming, cancellation, and the
// model's `maxInputTokens` as the window. Messages arrive in the engine's OpenAI chat form and are
// carried over part for part; the API has no system role, so system text travels as user text.
import * as vscode from 'vscode';
import { type ChatModel, type ChatReply, type ChatRequest, ModelError, type ToolCall, type WireMessage } from './types';
import { errorText } from '../errorText';

export async function selectLanguageModel(family: string): Promise<LanguageModelApiModel> {
  if (!vscode.lm || typeof vscode.lm.selectChatModels !== 'function') {
    throw new ModelError('no_model', 'This VS Code has no Language Model API: set contextWorkbench.llm.url to an OpenAI-compatible endpoint.');
  }
  // Our own endpoint provider (vendor `context-workbench`) is only there for the chat view.
  const models = (await vscode.lm.selectChatModels(family ? { family } : {})).filter((m) => m.vendor !== 'context-workbench');
  if (models.length === 0) {
    const which = family ? `of family "${family}" ` : '';
    throw new ModelError('no_model', `No language model ${which}is available in VS Code: sign in to a chat model provider, or set contextWorkbench.llm.url to an OpenAI-compatible endpoint.`);
  }
  return new LanguageModelApiModel(models[0]);
}

export class LanguageModelApiModel implements ChatModel {
  readonly label: string;
  readonly maxInputTokens: number;

  constructor(private readonly model: vscode.LanguageModelChat) {
    this.label = `${model.vendor}/${model.family} (${model.name})`;
    this.maxInputTokens = model.maxInputTokens;
  }

  async chat(request: ChatRequest): Promise<ChatReply> {
    const cancel = new vscode.CancellationTokenSource();
    const onAbort = () => cancel.cancel();
    request.signal?.addEventListener('abort', onAbort);
    try {
      const response = await this.model.sendRequest(
        toLanguageModelMessages(request.messages),
        { tools: request.tools.map((t) => ({ name: t.function.name, description: t.function.description, inputSchema: t.function.parameters as object })) },
        cancel.token,
      );
      let text = '';
      const toolCalls: ToolCall[] = [];
      for await (const part of response.stream) {
        if (part instanceof vscode.LanguageModelTextPart) {
          text += part.value;
          request.onText?.(part.value);
        } else if (part instanceof vscode.LanguageModelToolCallPart) {
          toolCalls.push({ id: part.callId, name: part.name, arguments: JSON.stringify(part.input ?? {}) });
        }
      }
      if (request.signal?.aborted) throw new ModelError('cancelled', 'the request was cancelled');
      return { text, toolCalls };
    } catch (e) {
      if (e instanceof ModelError) throw e;
      if (request.signal?.aborted || e instanceof vscode.CancellationError) throw new ModelError('cancelled', 'the request was cancelled');
      const reason = e instanceof vscode.LanguageModelError ? `${e.code}: ${e.message}` : errorText(e);
      throw new ModelError('llm', `${this.label} failed: ${reason}`);
    } finally {
      request.signal?.removeEventListener('abort', onAbort);
      cancel.dispose();
    }
  }
}

function textOf(message: WireMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) return message.content.map((p) => p.text ?? '').join('');
  return '';
}

/** The OpenAI chat form in Language Model API messages; consecutive tool results share one message. */
export function toLanguageModelMessages(messages: WireMessage[]): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  let pendingResults: vscode.LanguageModelToolResultPart[] = [];
  const flush = () => {
    if (pendingResults.length > 0) out.push(vscode.LanguageModelChatMessage.User(pendingResults));
    pendingResults = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      pendingResults.push(new vscode.LanguageModelToolResultPart(m.tool_call_id ?? '', [new vscode.LanguageModelTextPart(textOf(m))]));
      continue;
    }
    flush();
    if (m.role === 'assistant') {
      const parts: Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart> = [];
      if (textOf(m) !== '') parts.push(new vscode.LanguageModelTextPart(textOf(m)));
      for (const call of m.tool_calls ?? []) parts.push(new vscode.LanguageModelToolCallPart(call.id, call.function.name, parseInput(call.function.arguments)));
      out.push(vscode.LanguageModelChatMessage.Assistant(parts));
    } else {
      out.push(vscode.LanguageModelChatMessage.User(textOf(m)));
    }
  }
  flush();
  return out;
}

function parseInput(args: string): object {
  try {
    const parsed = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null ? parsed : { value: parsed };
  } catch {
    return { raw: args };
  }
}
