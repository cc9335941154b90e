// A trace folder on disk for the live views' tests, read through Node's fs as the extension reads
// it through VS Code's.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TraceFiles } from '../src/live/traceReader';

export function tempTraceFolder(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'cw-live-'));
}

export function write(root: string, relative: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
  writeFileSync(path.join(root, relative), text);
}

export function nodeTraceFiles(root: string): TraceFiles {
  const at = (p: string) => path.join(root, ...p.split('/'));
  return {
    stat: async (p) => {
      try {
        const s = statSync(at(p));
        return { size: s.size, mtimeMs: s.mtimeMs };
      } catch {
        return undefined;
      }
    },
    readText: async (p) => readFileSync(at(p), 'utf8'),
    directories: async (p) => {
      try {
        return readdirSync(at(p), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
      } catch {
        return [];
      }
    },
  };
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
