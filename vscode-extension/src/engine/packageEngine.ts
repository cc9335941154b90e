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
    const part = { type: 'tool_result', call_id: r.callId, name: r.name, status: r.isError ? 'error' : 'ok', output: r.output, ...(r.exitCode !== undefined ? { exit_code: r.exitCode } : {}) };
    need(this.engine, 'record')({ role: 'tool', content: [part], toolCallId: r.callId });
  }

  observeRead(path: string, mtimeMs: number): string | undefined {
    return (need(this.engine, 'observeRead')(path, mtimeMs) as string | undefined) ?? undefined;
  }

  async prepareCall(input: { systemPrompt: string; tools: ToolSpec[] }): Promise<PreparedCall> {
    const assembly = (await need(this.engine, 'prepareCall')({ systemPrompt: input.systemPrompt, tools: input.tools })) as Loose;
    const wire = need(this.engine, 'serialize')(assembly.view, 'openai') as Loose;
    return {
      messages: wire.messages,
      tools: wire.tools ?? [],
      tokens: assembly.tokens,
      expectedCachedTokens: assembly.expectedCachedTokens ?? 0,
      firstChangedByte: assembly.firstChangedByte ?? undefined,
      rewrites: assembly.rewrites ?? [],
      notes: assembly.notes ?? [],
      view: assembly.view,
    };
  }

  reportUsage(usage: { promptTokens: number; completionTokens: number; cachedTokens?: number }): void {
    need(this.engine, 'reportUsage')(usage);
  }

  goalTools(): ToolSpec[] {
    return need(this.engine, 'goalTools')() as ToolSpec[];
  }

  callGoalTool(name: string, argumentsJson: string): GoalToolAnswer {
    return need(this.engine, 'callGoalTool')(name, argumentsJson) as GoalToolAnswer;
  }

  goalTree(): GoalTreeData {
    return need(this.engine, 'goalTree')() as GoalTreeData;
  }

  compressToolOutput(input: { tool: string; arguments: string; output: string; exitCode?: number }): CompressedOutput {
    return need(this.engine, 'compressToolOutput')(input) as CompressedOutput;
  }

  async compactNow(): Promise<string> {
    return String(await need(this.engine, 'compactNow')());
  }

  traceJson(): string {
    return JSON.stringify(need(this.engine, 'trace')(), null, 2);
  }

  rawMessageText(id: string): string | undefined {
    const trace = need(this.engine, 'trace')() as { messages?: Array<{ id: string; content: unknown[] }> };
    const message = trace.messages?.find((m) => m.id === id);
    return message ? partsText(message.content) : undefined;
  }

  async persist(): Promise<void> {
    await need(this.engine, 'persist')();
  }

  dispose(): void {
    (this.engine.dispose ?? this.engine.free)?.call(this.engine);
  }
}

export function packageBackend(module: EngineModule): EngineBackend {
  const cls = module.ContextEngine;
  const create = async (host: unknown, config: Record<string, unknown>) => (typeof cls.create === 'function' ? cls.create(host, config) : new cls(host, config));
  return {
    create: async (host, config) => new PackageEngine(await create(host, config)),
    open: async (host, config, traceId) => {
      if (typeof cls.open !== 'function') throw new Error('the context-workbench package in this build cannot open a trace');
      const opened = await cls.open(host, config, traceId);
      return { engine: new PackageEngine(opened.engine ?? opened), notes: opened.notes ?? [] };
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
