// Reads the trace folder for the live views over any file system (VS Code's in the extension,
// Node's in the tests): the sessions it holds and the followed one's plan, calls and prompt.
// Reading never writes. A file is read again only when its size or time changed; messages are
// written once, so their text is kept.
import type { GoalTreeData } from '../engine/engineApi';
import { compactedRange, partsText } from '../views/promptText';
import { type SessionEntry, withoutReminders } from './sessionList';
import { type PromptRecord, type ProxyCallRecord, idsOfRange, parseCalls, parseMessage, parseMeta, parsePrompt } from './traceRecords';

/** Paths are `/`-separated and relative to the trace folder. */
export interface TraceFiles {
  /** Size and modification time, or undefined when there is no such file. */
  stat(path: string): Promise<{ size: number; mtimeMs: number } | undefined>;
  readText(path: string): Promise<string>;
  /** The sub-directories of `path` ('' for the folder itself); empty when it does not exist. */
  directories(path: string): Promise<string[]>;
}

/** The followed session's state as the views show it. */
export interface SessionDetail {
  entry: SessionEntry;
  goal?: GoalTreeData;
  calls: ProxyCallRecord[];
  prompt?: PromptRecord;
  /** What could not be read (a damaged line or file), for the output channel. */
  problems: string[];
  /** Changes whenever a call landed or the plan changed. */
  signature: string;
}

interface Cached<T> { key: string; value: T }

export class TraceReader {
  private readonly cache = new Map<string, Cached<unknown>>();
  private readonly rawTexts = new Map<string, { role: string; text: string }>();
  private readonly firsts = new Map<string, string | undefined>();
  /** The sessions as last listed. */
  private listed = new Map<string, SessionEntry>();

  constructor(private readonly files: TraceFiles) {}

  /** Parse `path` with `parse` unless its size and time are those of the last read; undefined when missing. */
  private async readParsed<T>(path: string, parse: (text: string) => T): Promise<{ value: T; key: string } | undefined> {
    const stat = await this.files.stat(path);
    if (!stat) return undefined;
    const key = `${stat.size}:${stat.mtimeMs}`;
    const hit = this.cache.get(path);
    if (hit && hit.key === key) return { value: hit.value as T, key };
    const value = parse(await this.files.readText(path));
    this.cache.set(path, { key, value });
    return { value, key };
  }

  /**
   * Every session under the folder; one that cannot be read is listed with its problem. With
   * `recheck`, a session listed before is looked at again only when `recheck(traceId)` says so
   * (a poll checks the followed session and new folders, not every trace's files each time).
   */
  async sessions(recheck?: (traceId: string) => boolean): Promise<SessionEntry[]> {
    const entries: SessionEntry[] = [];
    for (const traceId of (await this.files.directories('')).sort()) {
      const known = this.listed.get(traceId);
      if (known && recheck && !recheck(traceId)) {
        entries.push(known);
        continue;
      }
      try {
        const meta = await this.readParsed(`${traceId}/meta.json`, parseMeta);
        // A directory without meta.json yet is one being created: seen on a later read.
        if (!meta) continue;
        const calls = await this.readParsed(`${traceId}/calls.jsonl`, parseCalls);
        const agent = calls?.value.calls.find((c) => c.agent)?.agent ?? '';
        const mission = meta.value.value?.mission ?? '';
        const firstMessage = withoutReminders(mission) === '' && meta.value.value ? await this.firstMessage(traceId) : undefined;
        entries.push({ traceId, meta: meta.value.value, proxied: calls !== undefined, agent, problem: meta.value.problem, firstMessage });
      } catch (e) {
        entries.push({ traceId, proxied: false, agent: '', problem: `cannot be read: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    this.listed = new Map(entries.map((e) => [e.traceId, e]));
    return entries;
  }

  /** The text of a trace's first message without reminders (messages are written once: kept). */
  private async firstMessage(traceId: string): Promise<string | undefined> {
    const key = `${traceId}/first`;
    if (this.firsts.has(key)) return this.firsts.get(key);
    const path = `${traceId}/messages/m000000.json`;
    if (!(await this.files.stat(path))) return undefined;
    const message = parseMessage(await this.files.readText(path));
    const texts = (message?.content ?? []).map((p) => (p && typeof p === 'object' && (p as { type?: string }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : ''));
    const text = withoutReminders(texts.join('\n')) || undefined;
    this.firsts.set(key, text);
    return text;
  }

  /** The plan, calls and prompt of `entry`, with the raw originals its prompt's blocks render. */
  async detail(entry: SessionEntry): Promise<SessionDetail> {
    const dir = entry.traceId;
    const problems: string[] = [];
    const goal = await this.readParsed(`${dir}/goal.json`, parseGoal);
    if (goal?.value.problem) problems.push(goal.value.problem);
    const calls = await this.readParsed(`${dir}/calls.jsonl`, parseCalls);
    problems.push(...(calls?.value.problems ?? []));
    const prompt = await this.readParsed(`${dir}/prompt.json`, parsePrompt);
    if (prompt?.value.problem) problems.push(prompt.value.problem);
    if (prompt?.value.value) await this.loadRaw(dir, prompt.value.value, problems);
    return {
      entry,
      goal: goal?.value.value,
      calls: calls?.value.calls ?? [],
      prompt: prompt?.value.value,
      problems,
      signature: [dir, entry.meta?.updated_at, goal?.key, calls?.key, prompt?.key].join('|'),
    };
  }

  /** The raw original of `source` (`m000012`, or a range `m000022..m000025`) in `traceId`, if read. */
  rawText(traceId: string, source: string): string | undefined {
    const ids = idsOfRange(source);
    const texts = ids.map((id) => this.rawTexts.get(`${traceId}/${id}`));
    if (ids.length === 0 || texts.some((t) => t === undefined)) return undefined;
    if (ids.length === 1) return texts[0]!.text;
    return ids.map((id, i) => `──── raw#${id} · ${texts[i]!.role} ────\n${texts[i]!.text}`).join('\n\n');
  }

  private async loadRaw(dir: string, prompt: PromptRecord, problems: string[]): Promise<void> {
    const wanted = new Set<string>();
    for (const m of prompt.view.messages) {
      const range = m.source ? undefined : compactedRange(partsText(m.content));
      for (const id of m.source ? [m.source] : range ? idsOfRange(range) : []) wanted.add(id);
    }
    for (const id of wanted) {
      const key = `${dir}/${id}`;
      if (this.rawTexts.has(key) || !/^[A-Za-z0-9_-]+$/.test(id)) continue;
      const path = `${dir}/messages/${id}.json`;
      if (!(await this.files.stat(path))) continue;
      const message = parseMessage(await this.files.readText(path));
      if (message) this.rawTexts.set(key, { role: message.role, text: partsText(message.content) });
      else problems.push(`messages/${id}.json is damaged`);
    }
  }
}

function parseGoal(text: string): { value?: GoalTreeData; problem?: string } {
  try {
    const v = JSON.parse(text) as GoalTreeData & { version?: number };
    if (!v || typeof v !== 'object' || !Array.isArray(v.goals)) return { problem: 'goal.json is damaged (not a goal tree)' };
    return { value: { mission: String(v.mission ?? ''), current_id: v.current_id ?? undefined, goals: v.goals, completed: v.completed } };
  } catch {
    return { problem: 'goal.json is damaged (not JSON)' };
  }
}
