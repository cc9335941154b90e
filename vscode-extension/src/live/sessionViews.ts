// What the views show of a session read from the trace folder: the status bar's text and tooltip,
// the Prompt View's head, and its prompt in the form the Prompt View renders. Pure.
import type { Assembly } from 'context-workbench';
import type { PreparedCall } from '../engine/engineApi';
import { compactCount } from '../views/statusText';
import { type SessionEntry, agentName, missionOf, shortTime, trimmedMission } from './sessionList';
import type { SessionDetail } from './traceReader';

/** The Prompt View's call from the engine's saved assembly (its `messages` are not needed: the view renders `view`). */
export function preparedOf(record: Assembly): PreparedCall {
  return {
    messages: [],
    tools: record.view.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })),
    tokens: record.tokens,
    expectedCachedTokens: record.expected_cached_tokens,
    firstChangedByte: record.first_changed_byte ?? undefined,
    rewrites: record.rewrites,
    notes: record.notes,
    view: { messages: record.view.messages },
  };
}

export function sessionTitle(entry: SessionEntry): string {
  return `${agentName(entry)} · ${trimmedMission(missionOf(entry))}`;
}

/** The lines above the prompt (and in the tooltip): the session and, for a proxied one, what it saved. */
export function sessionHead(detail: SessionDetail): string[] {
  const { entry } = detail;
  const when = entry.meta ? `, updated ${shortTime(entry.meta.updated_at)}` : '';
  const lines = [`Session ${entry.traceId}${when}`];
  // The boundary: where the agent compacted its own history and the proxy went on in this trace.
  if (entry.earlier?.length) lines.push(`Continues ${entry.earlier.map((e) => e.traceId).join(' → ')}: the agent compacted its own history where this trace starts`);
  if (entry.proxied) lines.push(...detail.totals.saving_lines);
  return lines;
}

/** The status bar's text and tooltip; `head`, the session's head when the caller has it already. */
export function sessionStatus(detail: SessionDetail, head = sessionHead(detail)): { text: string; tooltip: string } {
  const { entry, calls, totals, prompt } = detail;
  const tooltip = [`Following: ${sessionTitle(entry)}`, ...head, 'Click to see the prompt.'].join('\n');
  const last = [...calls].reverse().find((c) => !c.side_call);
  if (entry.proxied && last) {
    const reported = last.usage ? last.usage.input_tokens + last.usage.cache_read_tokens + last.usage.cache_write_tokens : 0;
    const share = reported > 0 ? last.usage!.cache_read_tokens / reported : last.prompt_tokens > 0 ? last.expected_cached_tokens / last.prompt_tokens : 0;
    return { text: `${compactCount(last.prompt_tokens)} sent · ${totals.saving_brief} · ${Math.round(share * 100)}% cached`, tooltip };
  }
  if (prompt) {
    const share = prompt.tokens > 0 ? Math.round((100 * Math.min(prompt.expected_cached_tokens, prompt.tokens)) / prompt.tokens) : 0;
    return { text: `${compactCount(prompt.tokens)} tokens · ${share}% cached`, tooltip };
  }
  const n = entry.meta?.message_count ?? 0;
  return { text: `${n} message${n === 1 ? '' : 's'} · no prompt yet`, tooltip };
}
