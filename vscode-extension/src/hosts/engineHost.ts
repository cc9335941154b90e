// The host object the engine calls: files from the workspace, its own LLM calls (summaries,
// state updates, the LLM compactor) through the configured chat model without tools, the clock,
// and its progress notices.
import type { ChatModel } from '../llm/types';
import type { WorkspaceFiles } from './workspaceFiles';
import { hostError } from './workspaceFiles';
import { errorText } from '../errorText';

export interface EngineCompletionRequest {
  messages: Array<{ role: string; content: string }>;
  maxOutputTokens?: number;
  timeoutMs?: number;
  purpose: string;
}

/** Engine events reach the views by subscription (EngineApi.onEvent); progress comes here. */
export interface HostListeners {
  progress(update: { operation: string; message: string; done: boolean }): void;
}

export function engineHost(files: WorkspaceFiles, model: () => Promise<ChatModel>, listeners: HostListeners) {
  return {
    async complete(request: EngineCompletionRequest) {
      const chat = await model();
      const signal = request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined;
      try {
        const reply = await chat.chat({
          messages: request.messages.map((m) => ({ role: asRole(m.role), content: m.content })),
          tools: [],
          maxOutputTokens: request.maxOutputTokens,
          signal,
        });
        return { text: reply.text, usage: reply.usage };
      } catch (e) {
        if (signal?.aborted) throw hostError('timeout', `the ${request.purpose} call took longer than ${request.timeoutMs} ms`);
        throw hostError('llm', errorText(e));
      }
    },
    readFile: (path: string) => files.readFile(path),
    stat: (path: string) => files.stat(path),
    writeFile: (path: string, data: string) => files.writeFile(path, data),
    appendFile: (path: string, data: string) => files.appendFile(path, data),
    rename: (from: string, to: string) => files.rename(from, to),
    remove: (path: string) => files.remove(path),
    listDir: (path: string) => files.listDir(path),
    nowMs: () => Date.now(),
    progress: (update: { operation: string; message: string; done: boolean }) => listeners.progress(update),
  };
}

function asRole(role: string): 'system' | 'user' | 'assistant' {
  return role === 'system' || role === 'assistant' ? role : 'user';
}
