// The sessions under the trace folder as the picker and the status bar name them: the agent, the
// first user message (trimmed) and the time; which one the views follow when none is chosen. Pure.
import { type TraceMeta, withoutReminders } from 'context-workbench';

export interface SessionEntry {
  traceId: string;
  meta?: TraceMeta;
  /** Written by a proxy (it has `calls.jsonl`). */
  proxied: boolean;
  /** The agent of its calls as the proxy names it (`Claude Code 2.1.328`; older stores: `claude-cli/2.1.3`), or empty. */
  agent: string;
  /** Why it cannot be followed (a newer build, damage); the other sessions are unaffected. */
  problem?: string;
  /** The first user message's own text, when the mission holds only an agent's reminders. */
  firstMessage?: string;
  /**
   * The traces this one continues, oldest first: each time the agent compacted its own history
   * (Claude Code's auto-compact, `/compact`) the proxy went on in a new trace (`meta.continues`).
   * Set by `byRecency`: the conversation is one session, its parts' boundaries marked.
   */
  earlier?: SessionEntry[];
}

/** The agent as a person reads it: `Claude Code 2.1.328` (`claude-cli 2.1.3` from an older store); a session of the extension's own agent says so. */
export function agentName(entry: SessionEntry): string {
  if (!entry.proxied) return 'Context Workbench agent';
  if (!entry.agent) return 'an agent';
  const [product, version] = entry.agent.split('/', 2);
  return version ? `${product} ${version}` : product;
}

/** The first user message on one line, without the agent's injected reminders, at most `max` characters. */
export function trimmedMission(mission: string, max = 60): string {
  const text = userWords(mission);
  if (text === '') return '(no message yet)';
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

/** The user's words on one line: the engine's cut of the agent's reminders, spaces collapsed. */
export function userWords(text: string): string {
  return withoutReminders(text).replace(/\s+/g, ' ').trim();
}

/** What the session is about: its first user message, as the picker and the views name it (a continued one's is its first part's: the user's words, not the agent's summary). */
export function missionOf(entry: SessionEntry): string {
  if (entry.earlier?.[0]) return missionOf(entry.earlier[0]);
  const mission = entry.meta?.mission ?? '';
  return userWords(mission) === '' && entry.firstMessage ? entry.firstMessage : mission;
}

/** `2026-11-25 09:41`, in local time. */
export function shortTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** The picker's item for a session. */
export function sessionItem(entry: SessionEntry): { label: string; description: string; detail: string } {
  if (!entry.meta) return { label: `$(warning) ${entry.traceId}`, description: 'cannot be followed', detail: entry.problem ?? 'unreadable' };
  const m = entry.meta;
  const parts = [...(entry.earlier ?? []), entry];
  const sum = (field: 'calls' | 'message_count') => parts.reduce((n, p) => n + (p.meta?.[field] ?? 0), 0);
  const calls = entry.proxied ? `${sum('calls')} call${sum('calls') === 1 ? '' : 's'} · ` : '';
  const traces = parts.length > 1 ? `${parts.map((p) => p.traceId).join(' → ')} (the agent compacted its history ${parts.length - 1}×)` : entry.traceId;
  const caller = m.branch_of ? ` · a sub-agent of ${m.branch_of.trace_id}, started by its call ${m.branch_of.call_id}` : '';
  return {
    label: `${m.branch_of ? '$(type-hierarchy-sub) ' : ''}${agentName(entry)} · ${trimmedMission(missionOf(entry))}`,
    description: shortTime(m.updated_at),
    detail: `${calls}${sum('message_count')} messages · ${m.status || 'unknown status'} · ${traces}${caller}`,
  };
}

/**
 * Readable sessions, one per conversation, the most recently updated first (ties by trace id, so
 * the order is stable): a trace another continues is that one's `earlier` part, not a session of
 * its own (traces that continue each other in a circle, which no proxy writes, stay apart). A
 * sub-agent's session (`meta.branch_of`) comes right after its caller's.
 */
export function byRecency(entries: SessionEntry[]): SessionEntry[] {
  const sessions = conversations(entries);
  // The session each trace is part of, then each session's sub-agents, in recency order.
  const sessionOf = new Map<string, SessionEntry>();
  for (const s of sessions) for (const part of [s, ...s.earlier!]) if (!sessionOf.has(part.traceId)) sessionOf.set(part.traceId, s);
  const callerOf = (s: SessionEntry) => {
    const caller = sessionOf.get(s.meta!.branch_of?.trace_id ?? '');
    return caller === s ? undefined : caller;
  };
  const subAgents = new Map<SessionEntry, SessionEntry[]>();
  for (const s of sessions) {
    const caller = callerOf(s);
    if (caller) subAgents.set(caller, [...(subAgents.get(caller) ?? []), s]);
  }
  const placed = new Set<SessionEntry>();
  const place = (s: SessionEntry): SessionEntry[] => {
    if (placed.has(s)) return [];
    placed.add(s);
    return [s, ...(subAgents.get(s) ?? []).flatMap(place)];
  };
  // Callers first; then what is left (sub-agents whose callers call each other in a circle).
  return [...sessions.filter((s) => !callerOf(s)), ...sessions].flatMap(place);
}

/** One entry per conversation, its parts in `earlier`, the most recently updated first. */
function conversations(entries: SessionEntry[]): SessionEntry[] {
  // The parts of a list this returned are parts again.
  const all = [...entries.flatMap((e) => e.earlier ?? []), ...entries].map(({ earlier: _, ...entry }) => entry);
  const readable = new Map(all.filter((e) => e.meta).map((e) => [e.traceId, e]));
  const chains = [...readable.values()].map((entry) => ({ ...entry, earlier: earlierParts(entry, readable) }));
  const inCircle = (c: SessionEntry) => c.earlier!.some((e) => e.meta!.continues === c.traceId);
  const continued = new Set(chains.filter((c) => !inCircle(c)).flatMap((c) => c.earlier.map((e) => e.traceId)));
  return chains
    .filter((c) => !continued.has(c.traceId))
    .sort((a, b) => (b.meta!.updated_at - a.meta!.updated_at) || a.traceId.localeCompare(b.traceId));
}

/** The readable traces `entry` continues, oldest first, each once. */
function earlierParts(entry: SessionEntry, readable: Map<string, SessionEntry>): SessionEntry[] {
  const earlier: SessionEntry[] = [];
  const seen = new Set([entry.traceId]);
  for (let part = readable.get(entry.meta?.continues ?? ''); part && !seen.has(part.traceId); part = readable.get(part.meta?.continues ?? '')) {
    seen.add(part.traceId);
    earlier.unshift(part);
  }
  return earlier;
}

/** What the views follow when the user chose none: the newest-updated proxied session. */
export function autoFollowed(entries: SessionEntry[]): SessionEntry | undefined {
  return byRecency(entries).find((e) => e.proxied);
}
