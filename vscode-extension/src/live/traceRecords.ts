// The files a trace directory holds that the live views read, parsed and checked: `meta.json`,
// the proxy's `calls.jsonl` (one line per call) and `prompt.json` (the newest call's prompt, the
// engine's assembly). Pure: every problem is a sentence for the user, never a throw.
import type { ProxyCallRecord } from 'context-workbench';

/** One line of `calls.jsonl`, as the package declares it. */
export type { ProxyCallRecord };

/** The store format this build reads (`STORE_FORMAT_VERSION` in the engine's src/store/records.rs). */
export const STORE_FORMAT_VERSION = 1;

export interface TraceMetaRecord {
  version: number;
  trace_id: string;
  mission: string;
  created_at: number;
  updated_at: number;
  message_count: number;
  status: string;
  calls: number;
}

/** `prompt.json`: the newest call's prompt as the engine assembled it (its `PreparedCall` without `format` and `request`). */
export interface PromptRecord {
  view: { messages: Array<{ role: string; layer: string; source?: string; content: unknown[] }>; tools: Array<{ name: string }> };
  tokens: number;
  first_changed_byte?: number | null;
  expected_cached_tokens: number;
  rewrites: Array<{ mechanism: string; position: string }>;
  notes: string[];
}

export type Parsed<T> = { value: T; problem?: undefined } | { value?: undefined; problem: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `meta.json`: refused when it is not the engine's form or comes from a newer format. */
export function parseMeta(text: string): Parsed<TraceMetaRecord> {
  const v = json(text);
  if (!isObject(v) || typeof v.trace_id !== 'string' || typeof v.version !== 'number') return { problem: 'meta.json is damaged (not the engine\'s trace metadata)' };
  if (v.version > STORE_FORMAT_VERSION) {
    return { problem: `written by a newer build (store format ${v.version}; this extension reads up to ${STORE_FORMAT_VERSION}): update the extension to follow it` };
  }
  return {
    value: {
      version: v.version,
      trace_id: v.trace_id,
      mission: typeof v.mission === 'string' ? v.mission : '',
      created_at: num(v.created_at),
      updated_at: num(v.updated_at),
      message_count: num(v.message_count),
      status: typeof v.status === 'string' ? v.status : '',
      calls: num(v.calls),
    },
  };
}

function usageOf(v: unknown): ProxyCallRecord['usage'] {
  if (!isObject(v)) return undefined;
  return { input_tokens: num(v.input_tokens), cache_read_tokens: num(v.cache_read_tokens), cache_write_tokens: num(v.cache_write_tokens), output_tokens: num(v.output_tokens) };
}

/**
 * `calls.jsonl`, line by line. A last line without its newline is one still being written and is
 * left for the next read; any other line that is not a call record is named in `problems`.
 */
export function parseCalls(text: string): { calls: ProxyCallRecord[]; problems: string[] } {
  const calls: ProxyCallRecord[] = [];
  const problems: string[] = [];
  // The piece after the last newline is empty or a line still being written.
  const complete = text.split('\n').slice(0, -1);
  complete.forEach((line, i) => {
    if (line.trim() === '') return;
    const v = json(line);
    if (!isObject(v) || typeof v.call !== 'number' || typeof v.prompt_tokens !== 'number' || typeof v.client_tokens !== 'number') {
      problems.push(`calls.jsonl line ${i + 1} is not a call record`);
      return;
    }
    calls.push({
      call: v.call,
      at_ms: num(v.at_ms),
      model: typeof v.model === 'string' ? v.model : '',
      agent: typeof v.agent === 'string' ? v.agent : '',
      stream: v.stream === true,
      managed: v.managed !== false,
      messages: num(v.messages),
      new_messages: num(v.new_messages),
      client_tokens: v.client_tokens,
      prompt_tokens: v.prompt_tokens,
      expected_cached_tokens: num(v.expected_cached_tokens),
      rewrites: Array.isArray(v.rewrites) ? v.rewrites.map(String) : [],
      status: typeof v.status === 'number' ? v.status : undefined,
      completed: v.completed === true,
      usage: usageOf(v.usage),
      notes: Array.isArray(v.notes) ? v.notes.map(String) : [],
    });
  });
  return { calls, problems };
}

/** `prompt.json`: the engine's assembly of the newest call. */
export function parsePrompt(text: string): Parsed<PromptRecord> {
  const v = json(text);
  if (!isObject(v) || !isObject(v.view) || !Array.isArray(v.view.messages) || typeof v.tokens !== 'number') return { problem: 'prompt.json is damaged (not the engine\'s prompt)' };
  const messages = (v.view.messages as unknown[]).filter(isObject).map((m) => ({
    role: String(m.role ?? ''),
    layer: String(m.layer ?? ''),
    source: typeof m.source === 'string' ? m.source : undefined,
    content: Array.isArray(m.content) ? m.content : [],
  }));
  const tools = Array.isArray(v.view.tools) ? (v.view.tools as unknown[]).filter(isObject).map((t) => ({ name: String(t.name ?? '') })) : [];
  const rewrites = Array.isArray(v.rewrites) ? (v.rewrites as unknown[]).filter(isObject).map((r) => ({ mechanism: String(r.mechanism ?? ''), position: String(r.position ?? '') })) : [];
  return {
    value: {
      view: { messages, tools },
      tokens: v.tokens,
      first_changed_byte: typeof v.first_changed_byte === 'number' ? v.first_changed_byte : undefined,
      expected_cached_tokens: num(v.expected_cached_tokens),
      rewrites,
      notes: Array.isArray(v.notes) ? v.notes.map(String) : [],
    },
  };
}

/** A raw message's role and content from `messages/<id>.json` (the engine's `Message`). */
export function parseMessage(text: string): { role: string; content: unknown[] } | undefined {
  const v = json(text);
  return isObject(v) && Array.isArray(v.content) ? { role: String(v.role ?? ''), content: v.content } : undefined;
}

/** The message ids a raw range `m000022..m000025` covers (`A-m000003` forms too), in order. */
export function idsOfRange(range: string): string[] {
  const [first, last] = range.includes('..') ? range.split('..') : [range, range];
  const a = /^(.*?)(\d+)$/.exec(first);
  const b = /^(.*?)(\d+)$/.exec(last);
  if (!a || !b || a[1] !== b[1]) return first === last ? [first] : [];
  const from = Number(a[2]);
  const to = Number(b[2]);
  if (to < from || to - from > 10_000) return [];
  const ids: string[] = [];
  for (let n = from; n <= to; n++) ids.push(`${a[1]}${String(n).padStart(a[2].length, '0')}`);
  return ids;
}
