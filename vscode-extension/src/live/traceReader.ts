// Reads the trace folder for the live views through the engine's TraceStore (over the workspace's
// files in VS Code, Node's in the tests): the sessions it holds and the followed one's plan, calls
// and prompt. The engine knows the store's layout and format; this file only keeps what it
// answered. Reading never writes. A trace unchanged since the engine's stamp costs a stat per
// file and is not read again; messages are written once, so their text is kept.
import { type Assembly, type CallTotals, type ProxyCallRecord, type TraceStore, callTotals, messageIds } from 'context-workbench';
import type { GoalTreeData } from '../engine/engineApi';
import { partsText } from '../views/promptText';
import { type SessionEntry, userWords } from './sessionList';
import { errorText } from '../errorText';

/** What the live views ask of the package's TraceStore. */
export type LiveStore = Pick<TraceStore, 'traceIds' | 'sessionSummary' | 'sessionState' | 'message' | 'firstMessage'>;

/** The followed session's state as the views show it. */
export interface SessionDetail {
  entry: SessionEntry;
  goal?: GoalTreeData;
  calls: ProxyCallRecord[];
  /** The engine's sums of `calls`, taken once per read. */
  totals: CallTotals;
  prompt?: Assembly;
  /** What could not be read (a damaged line or file), for the output channel. */
  problems: string[];
  /** Changes whenever a call landed or the plan changed. */
  signature: string;
}

/** A listed session and the engine's stamp of what it was read from. */
type Listed = SessionEntry & { stamp?: string };

export class TraceReader {
  private readonly rawTexts = new Map<string, { role: string; text: string }>();
  private readonly firsts = new Map<string, string | undefined>();
  /** The sessions as last listed. */
  private listed = new Map<string, Listed>();
  /** The last state read of each followed session, with the engine's stamp. */
  private readonly details = new Map<string, { stamp: string; detail: SessionDetail }>();

  constructor(private readonly store: LiveStore) {}

  /**
   * Every session under the folder; one that cannot be read is listed with its problem. With
   * `recheck`, a session listed before is looked at again only when `recheck(traceId)` says so
   * (a poll checks the followed session and new folders, not every trace's files each time).
   */
  async sessions(recheck?: (traceId: string) => boolean): Promise<SessionEntry[]> {
    const entries: Listed[] = [];
    for (const traceId of await this.store.traceIds()) {
      const known = this.listed.get(traceId);
      if (known && recheck && !recheck(traceId)) {
        entries.push(known);
        continue;
      }
      try {
        const summary = await this.store.sessionSummary(traceId, known?.stamp);
        if (!summary) {
          entries.push(known!);
          continue;
        }
        const firstMessage = userWords(summary.meta.mission) === '' ? await this.firstMessage(traceId) : undefined;
        entries.push({ traceId, meta: summary.meta, proxied: summary.proxied, agent: summary.agent, firstMessage, stamp: summary.stamp });
      } catch (e) {
        // A directory without its metadata yet is one being created: seen on a later read.
        if (codeOf(e) === 'host_not_found') continue;
        entries.push({ traceId, proxied: false, agent: '', problem: problemOf(e) });
      }
    }
    this.listed = new Map(entries.map((e) => [e.traceId, e]));
    return entries;
  }

  /** The text of a trace's first message without reminders (messages are written once: kept). */
  private async firstMessage(traceId: string): Promise<string | undefined> {
    if (this.firsts.has(traceId)) return this.firsts.get(traceId);
    const message = await this.store.firstMessage(traceId);
    if (!message) return undefined;
    const text = userWords(message.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')) || undefined;
    this.firsts.set(traceId, text);
    return text;
  }

  /** The plan, calls and prompt of `entry`, with the raw originals its prompt's blocks render. */
  async detail(entry: SessionEntry): Promise<SessionDetail> {
    const known = this.details.get(entry.traceId);
    const state = await this.store.sessionState(entry.traceId, known?.stamp);
    if (!state && known) return { ...known.detail, entry, signature: signatureOf(entry, known.stamp) };
    if (!state) throw new Error(`the engine answered no state for ${entry.traceId}`);
    const problems = [...state.notes];
    const prompt = state.prompt ?? undefined;
    if (prompt) await this.loadRaw(entry.traceId, prompt, problems);
    const detail: SessionDetail = {
      entry,
      goal: state.goal_tree ?? undefined,
      calls: state.calls,
      totals: callTotals(state.calls),
      prompt,
      problems,
      signature: signatureOf(entry, state.stamp),
    };
    this.details.set(entry.traceId, { stamp: state.stamp, detail });
    return detail;
  }

  /** The raw original of `source` (`m000012`, or a range `m000022..m000025`) in `traceId`, if read. */
  rawText(traceId: string, source: string): string | undefined {
    const ids = idsOf(source);
    const texts = ids.map((id) => this.rawTexts.get(`${traceId}/${id}`));
    if (ids.length === 0 || texts.some((t) => t === undefined)) return undefined;
    if (ids.length === 1) return texts[0]!.text;
    return ids.map((id, i) => `──── raw#${id} · ${texts[i]!.role} ────\n${texts[i]!.text}`).join('\n\n');
  }

  private async loadRaw(traceId: string, prompt: Assembly, problems: string[]): Promise<void> {
    const wanted = new Set<string>();
    for (const m of prompt.view.messages) {
      for (const id of m.source ? [m.source] : m.replaces ? idsOf(m.replaces) : []) wanted.add(id);
    }
    for (const id of wanted) {
      const key = `${traceId}/${id}`;
      if (this.rawTexts.has(key)) continue;
      try {
        const message = await this.store.message(traceId, id);
        if (message) this.rawTexts.set(key, { role: message.role, text: partsText(message.content) });
      } catch (e) {
        problems.push(errorText(e));
      }
    }
  }
}

function signatureOf(entry: SessionEntry, stamp: string): string {
  return [entry.traceId, entry.meta?.updated_at, stamp].join('|');
}

function codeOf(e: unknown): string | undefined {
  return (e as { code?: unknown })?.code as string | undefined;
}

/** Why a session cannot be followed, as the picker and the output channel say it. */
function problemOf(e: unknown): string {
  const message = errorText(e);
  if (codeOf(e) === 'unsupported_version') return `written by a newer build: ${message}; update the extension to follow it`;
  if (codeOf(e) === 'invalid_input') return `damaged: ${message.replace(/^invalid input: /, '')}`;
  return `cannot be read: ${message}`;
}

/** The message ids a raw reference names, by the engine's rule; none for one it refuses. */
function idsOf(reference: string): string[] {
  try {
    return messageIds(reference);
  } catch {
    return [];
  }
}
