// EngineApi over the npm package `context-workbench` (its Node or web build): the only file
// that knows the package's method names.
import type { ToolSpec } from '../agent/toolSpecs';
import { partsText } from '../views/promptText';
import type { CompressedOutput, EngineApi, EngineBackend, GoalToolAnswer, GoalTreeData, PreparedCall, TraceSummary } from './engineApi';

// biome-ignore lint: the package's own types arrive with its typed layer
type Loose = any;

export interface EngineModule { ContextEngine: Loose }

function need(engine: Loose, method: string): (...args: unknown[]) => unknown {
  const f = engine?.[method];
  if (typeof f !== 'function') throw new Error(`the context-workbench package in this build has no ${method}(); rebuild the extension against a newer package`);
  return f.bind(engine);
}

class PackageEngine implements EngineApi {
  constructor(private readonly engine: Loose) {}

  get traceId(): string {
    return String(this.engine.traceId);
  }

  countTokens(text: string): number {
    return need(this.engine, 'countTokens')(text) as number;
  }

  async recordUserInput(text: string): Promise<void> {
    await need(this.engine, 'recordUserInput')(text);
  }

  recordAssistant(text: string, toolCalls: Array<{ id: string; name: string; arguments: string }>): void {
    const content = [...(text ? [{ type: 'text', text }] : []), ...toolCalls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments }))];
    need(this.engine, 'record')({ role: 'assistant', content });
  }

  recordToolResult(r: { callId: string; name: string; output: string; isError: boolean; exitCode?: number }): void {
    need(this.engine, 'recordToolResult')({ call_id: r.callId, name: r.name, status: r.isError ? 'error' : 'ok', output: r.output, ...(r.exitCode !== undefined ? { exit_code: r.exitCode } : {}) });
  }

  observeRead(path: string, mtimeMs: number): string | undefined {
    return (need(this.engine, 'observeRead')(path, mtimeMs) as string | undefined) ?? undefined;
  }

  async prepareCall(input: { systemPrompt: string; tools: ToolSpec[] }): Promise<PreparedCall> {
    const call = (await need(this.engine, 'prepareCall')({ system_prompt: input.systemPrompt, tools: input.tools }, 'openai')) as Loose;
    return {
      messages: call.request.messages,
      tools: call.request.tools ?? [],
      tokens: call.tokens,
      expectedCachedTokens: call.expected_cached_tokens ?? 0,
      firstChangedByte: call.first_changed_byte ?? undefined,
      rewrites: call.rewrites ?? [],
      notes: call.notes ?? [],
      view: call.view,
    };
  }

  reportUsage(usage: { promptTokens: number; completionTokens: number; cachedTokens?: number }): void {
    need(this.engine, 'reportUsage')(usage);
  }

  goalTools(): ToolSpec[] {
    return need(this.engine, 'goalTools')() as ToolSpec[];
  }

  callGoalTool(name: string, argumentsJson: string): GoalToolAnswer {
    const r = need(this.engine, 'callGoalTool')(name, argumentsJson) as Loose;
    return { text: r.text, isError: r.is_error === true, branches: r.branches ?? [] };
  }

  goalNumbers(): Record<string, string> {
    return (need(this.engine, 'plan')() as Loose).display_numbers ?? {};
  }

  goalTree(): GoalTreeData {
    return need(this.engine, 'goalTree')() as GoalTreeData;
  }

  compressToolOutput(input: { tool: string; arguments: string; output: string; exitCode?: number }): CompressedOutput {
    const r = need(this.engine, 'compressToolOutput')({ tool: input.tool, arguments: input.arguments, output: input.output, ...(input.exitCode !== undefined ? { exit_code: input.exitCode } : {}) }) as Loose;
    return { text: r.text, family: r.family, tokensIn: r.tokens_in, tokensOut: r.tokens_out, notes: r.notes ?? [] };
  }

  endedSpans(): Array<{ id: string; goal: string; outcome?: string }> {
    const trace = need(this.engine, 'trace')() as { spans?: Array<{ id: string; goal: string; end?: string; outcome?: string }> };
    return (trace.spans ?? []).filter((s) => s.end !== undefined && s.end !== null).reverse().map((s) => ({ id: s.id, goal: s.goal, outcome: s.outcome }));
  }

  async compactSpan(id: string): Promise<string> {
    const r = (await need(this.engine, 'compactSpan')(id)) as Loose;
    const cost = r.cost ?? {};
    return `${r.mechanism} compaction of messages ${r.start}–${r.end} (${r.position}): ${cost.tokens_before ?? '?'} → ${cost.tokens_after ?? '?'} tokens${r.notes?.length ? `; ${r.notes.join('; ')}` : ''}`;
  }

  traceJson(): string {
    return JSON.stringify(need(this.engine, 'trace')(), null, 2);
  }

  rawMessageText(id: string): string | undefined {
    const messages = (need(this.engine, 'trace')() as { messages?: Array<{ id: string; role: string; content: unknown[] }> }).messages ?? [];
    const [first, last] = id.includes('..') ? id.split('..') : [id, id];
    const from = messages.findIndex((m) => m.id === first);
    const to = messages.findIndex((m) => m.id === last);
    if (from < 0 || to < from) return undefined;
    if (from === to) return partsText(messages[from].content);
    return messages.slice(from, to + 1).map((m) => `──── raw#${m.id} · ${m.role} ────\n${partsText(m.content)}`).join('\n\n');
  }

  async persist(): Promise<void> {
    await need(this.engine, 'persist')();
  }

  dispose(): void {
    (this.engine.dispose ?? this.engine.free)?.call(this.engine);
  }
}

/** A host for an engine that only counts tokens: any file or model access is refused. */
const COUNTING_HOST = new Proxy({ nowMs: () => Date.now() } as Record<string, unknown>, {
  get: (target, name) => target[name as string] ?? (() => Promise.reject(Object.assign(new Error('this engine only counts tokens'), { code: 'io' }))),
});

export function packageBackend(module: EngineModule): EngineBackend {
  const cls = module.ContextEngine;
  let counter: Loose;
  const create = async (host: unknown, config: Record<string, unknown>) => (typeof cls.create === 'function' ? cls.create(host, config) : new cls(host, config));
  return {
    create: async (host, config) => new PackageEngine(await create(host, config)),
    open: async (host, config, traceId) => {
      if (typeof cls.open !== 'function') throw new Error('the context-workbench package in this build cannot open a trace');
      const opened = await cls.open(host, config, traceId);
      return { engine: new PackageEngine(opened.engine ?? opened), notes: opened.notes ?? [] };
    },
    countTokens: (text) => {
      counter ??= new cls(COUNTING_HOST, {});
      return counter.countTokens(text) as number;
    },
    listTraces: async (host, root) => {
      if (typeof cls.listTraces !== 'function') throw new Error('the context-workbench package in this build cannot list traces');
      return (await cls.listTraces(host, root)) as TraceSummary[];
    },
  };
}

export function packagePlanToolNames(module: EngineModule): string[] {
  return typeof module.ContextEngine?.goalToolSpecs === 'function' ? module.ContextEngine.goalToolSpecs().map((t: ToolSpec) => t.name) : ['goal', 'step', 'read_progress', 'explore'];
}
