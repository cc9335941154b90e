// A trace folder on disk for the live views' tests (`.trace/` of a temporary workspace), read
// through the engine's TraceStore over the package's Node host as the extension reads it over
// VS Code's files.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Host, TraceStore } from 'context-workbench';

/** The package's Node host: its `node` entry has it, the types the extension compiles against are the browser entry's. */
export const { nodeFsHost } = (await import('context-workbench')) as unknown as { nodeFsHost(root: string, options?: { now?: () => number }): Host };

/** A temporary workspace; its trace folder is `.trace/`. */
export function tempTraceFolder(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'cw-live-'));
}

/** Write `relative` (a path under the trace folder) in the workspace `base`. */
export function write(base: string, relative: string, text: string): void {
  const file = path.join(base, '.trace', ...relative.split('/'));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** The engine's store over the workspace's trace folder; `wrap` may count what the host is asked. */
export function traceStore(base: string, wrap: (host: Host) => Host = (h) => h): Promise<TraceStore> {
  return TraceStore.create(wrap(nodeFsHost(base)), { root: '.trace' });
}

export function meta(traceId: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ version: 1, trace_id: traceId, mission: 'Fix the failing test', created_at: 1_000, updated_at: 2_000, message_count: 4, status: 'running', branch_count: 0, event_count: 3, calls: 2, ...fields });
}

export function callLine(call: number, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    call, at_ms: 1_000 + call, model: 'claude-scripted', agent: 'claude-cli/2.1.328', stream: true, managed: true, messages: call * 2, new_messages: 2,
    client_tokens: 1000, prompt_tokens: 1000, expected_cached_tokens: 0, rewrites: [], status: 200, completed: true, notes: [], ...fields,
  });
}

/** A message file as the engine writes it (`messages/<id>.json`). */
export function messageFile(traceId: string, sequence: number, role: string, content: unknown[]): string {
  const id = `m${String(sequence).padStart(6, '0')}`;
  return JSON.stringify({ id, trace_id: traceId, role, sequence, content, description: '', created_at_ms: 1_000 + sequence });
}
