// EngineApi over the npm package `context-workbench`: the only file that knows the package's
// method names and data shapes (the engine's snake_case serde form).
import { type Config, ContextEngine, type Host, type Message, type MessageInput, type RewriteRecord, TraceStore, memoryHost } from 'context-workbench';
import type { ToolSpec } from '../agent/toolSpecs';
import type { WireMessage, WireTool } from '../llm/types';
import { partsText } from '../views/promptText';
import type { BranchLine, CompressedOutput, EngineApi, EngineBackend, GoalToolAnswer, GoalTreeData, PreparedCall, Progress, ToolOutput, ToolResultInput, TraceSummary } from './engineApi';
import { errorText } from '../errorText';

class PackageEngine implements EngineApi {
  constructor(private readonly engine: ContextEngine) {}

  get traceId(): string {
    return this.engine.traceId;
  }

  countTokens(text: string): number {
    return this.engine.countTokens(text);
  }

  async recordUserInput(text: string): Promise<void> {
    await this.engine.recordUserInput(text);
  }

  recordAssistant(text: string, toolCalls: Array<{ id: string; name: string; arguments: string }>): void {
    this.engine.record(assistantMessage(text, toolCalls));
  }

  recordToolResult(r: ToolResultInput): void {
    this.engine.recordToolResult(toolResult(r));
  }

  observeRead(path: string, mtimeMs: number): string | undefined {
    return this.engine.observeRead(path, mtimeMs) ?? undefined;
  }

  async prepareCall(input: { systemPrompt: string; tools: ToolSpec[] }): Promise<PreparedCall> {
    return openAiCall(await this.engine.prepareCall({ system_prompt: input.systemPrompt, tools: input.tools }, 'openai'));
  }

  reportUsage(usage: { promptTokens: number; completionTokens: number; cachedTokens?: number }): void {
    this.engine.reportUsage(usage);
  }

  goalTools(): ToolSpec[] {
    return this.engine.goalTools();
  }

  callGoalTool(name: string, argumentsJson: string): GoalToolAnswer {
    const r = this.engine.callGoalTool(name, argumentsJson);
    return { text: r.text, isError: r.is_error, branches: r.branches };
  }

  recallTool(): ToolSpec {
    return this.engine.recallTool();
  }

  recall(argumentsJson: string): { text: string; isError: boolean } {
    const r = this.engine.recall(argumentsJson);
    return { text: r.text, isError: r.is_error };
  }

  planMarks(): { numbers: Record<string, string>; progress: Progress } {
    const plan = this.engine.plan();
    return { numbers: plan.display_numbers, progress: { phase: plan.phase, steps: plan.steps } };
  }

  replyEndsTask(): boolean {
    return this.engine.replyEndsTask();
  }

  goalTree(): GoalTreeData {
    return this.engine.goalTree() as GoalTreeData;
  }

  branch(id: string): BranchLine {
    const engine = this.engine;
    return {
      id,
      goalTools: () => engine.goalTools().filter((t) => t.name !== 'explore'),
      prepareCall: async (input) => openAiCall(await engine.prepareBranchCall(id, { system_prompt: input.systemPrompt, tools: input.tools }, 'openai')),
      recordAssistant: (text, toolCalls) => void engine.recordInBranch(id, assistantMessage(text, toolCalls)),
      recordToolResult: (r) => void engine.recordInBranch(id, { role: 'tool', tool_call_id: r.callId, content: [{ type: 'tool_result', ...toolResult(r) }] }),
      callGoalTool: (name, argumentsJson) => {
        try {
          return { text: engine.callBranchTool(id, name, argumentsJson), isError: false };
        } catch (e) {
          return { text: errorText(e), isError: true };
        }
      },
      finish: (summary) => engine.finishBranch(id, summary),
    };
  }

  mergeExplore(): string {
    return this.engine.mergeExplore();
  }

  onEvent(listener: () => void): () => void {
    return this.engine.subscribe(() => listener());
  }

  compressToolOutput(input: ToolOutput): CompressedOutput {
    const r = this.engine.compressToolOutput({ tool: input.tool, arguments: input.arguments, output: input.output, ...(input.exitCode !== undefined ? { exit_code: input.exitCode } : {}) });
    return { text: r.text, family: r.family, tokensIn: r.tokens_in, tokensOut: r.tokens_out, notes: r.notes };
  }

  endedSpans(): Array<{ id: string; goal: string; outcome?: string }> {
    return this.engine.trace().spans.filter((s) => s.end !== undefined && s.end !== null).reverse().map((s) => ({ id: s.id, goal: s.goal, outcome: s.outcome }));
  }

  async compactSpan(id: string): Promise<string> {
    return describeRewrite(await this.engine.compactSpan(id));
  }

  async compactTail(): Promise<string> {
    return describeRewrite(await this.engine.compactTail());
  }

  traceJson(): string {
    return JSON.stringify(this.engine.trace(), null, 2);
  }

  rawMessageText(id: string): string | undefined {
    return rawText(this.engine.trace().messages, id);
  }

  completeTrace(): void {
    this.engine.completeTrace();
  }

  async persist(): Promise<void> {
    await this.engine.persist();
  }

  dispose(): void {
    this.engine.dispose();
  }
}

function assistantMessage(text: string, toolCalls: Array<{ id: string; name: string; arguments: string }>): MessageInput {
  const calls = toolCalls.map((c) => ({ type: 'tool_call' as const, id: c.id, name: c.name, arguments: c.arguments }));
  return { role: 'assistant', content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls] };
}

function toolResult(r: ToolResultInput) {
  return { call_id: r.callId, name: r.name, status: r.isError ? ('error' as const) : ('ok' as const), output: r.output, ...(r.exitCode !== undefined ? { exit_code: r.exitCode } : {}) };
}

/** A prompt the engine assembled in the OpenAI form, as the agent loop sends it. */
function openAiCall(call: Awaited<ReturnType<ContextEngine['prepareCall']>>): PreparedCall {
  if (call.format !== 'openai') throw new Error(`the engine answered in ${call.format}, not the OpenAI form asked for`);
  return {
    messages: call.request.messages as unknown as WireMessage[],
    tools: (call.request.tools ?? []) as unknown as WireTool[],
    tokens: call.tokens,
    expectedCachedTokens: call.expected_cached_tokens,
    firstChangedByte: call.first_changed_byte ?? undefined,
    rewrites: call.rewrites,
    notes: call.notes,
    view: call.view,
  };
}

/** One raw message's text, or a range `mA..mB` with a header per message. */
export function rawText(messages: Message[], id: string): string | undefined {
  const [first, last] = id.includes('..') ? id.split('..') : [id, id];
  const from = messages.findIndex((m) => m.id === first);
  const to = messages.findIndex((m) => m.id === last);
  if (from < 0 || to < from) return undefined;
  if (from === to) return partsText(messages[from].content);
  return messages
    .slice(from, to + 1)
    .map((m) => `──── raw#${m.id} · ${m.role} ────\n${partsText(m.content)}`)
    .join('\n\n');
}

/** The engine's constructors; `ready` loads the engine before the first of them runs. */
export function packageBackend(ready: () => Promise<void>): EngineBackend {
  let counter: Promise<ContextEngine> | undefined;
  return {
    // A new trace, saved under the config's store root (`.trace`) on every persist().
    create: async (host, config) => {
      await ready();
      return new PackageEngine((await ContextEngine.open(host as Host, config as Config)).engine);
    },
    open: async (host, config, traceId) => {
      await ready();
      const opened = await ContextEngine.open(host as Host, config as Config, { traceId });
      return { engine: new PackageEngine(opened.engine), notes: opened.notes };
    },
    countTokens: async (text) => {
      // A failed load is not kept: the next count tries again.
      counter ??= ready().then(() => ContextEngine.create(memoryHost())).catch((e) => {
        counter = undefined;
        throw e;
      });
      return (await counter).countTokens(text);
    },
    compressToolOutput: async (config, input) => {
      await ready();
      const engine = new PackageEngine(await ContextEngine.create(memoryHost(), config as Config));
      try {
        return engine.compressToolOutput(input);
      } finally {
        engine.dispose();
      }
    },
    listTraces: async (host, root) => {
      await ready();
      const store = await TraceStore.create(host as Host, { root });
      try {
        const list = await store.listTraces();
        const traces = list.traces.map((t): TraceSummary => ({
          traceId: t.trace_id,
          task: t.mission,
          detail: `${t.status} · ${t.message_count} messages · ${t.calls} calls · updated ${new Date(t.updated_at).toLocaleString()}`,
        }));
        return { traces, notes: list.notes ?? [] };
      } finally {
        store.dispose();
      }
    },
  };
}

/** A rewrite as the user reads it: what replaced which messages, and the tokens before and after. */
function describeRewrite(r: RewriteRecord): string {
  const notes = r.notes.length ? `; ${r.notes.join('; ')}` : '';
  return `${r.mechanism} of messages ${r.start}–${r.end} (${r.position}): ${r.cost.tokens_before} → ${r.cost.tokens_after} tokens${notes}`;
}
