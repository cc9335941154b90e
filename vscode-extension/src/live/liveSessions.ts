// The views follow a session from the trace folder: one the proxy in this window serves, or one
// another process writes there (`workbench proxy`), updated as each call lands, found by a file
// watcher and a modest poll (watchers miss changes on some remote file systems). On activation
// the most recent trace comes back into the views. The extension's own agent takes the views
// while it runs a task; the followed session takes them back when its next call lands. The trace
// folder is read through the engine's TraceStore (src/live/traceReader.ts), never parsed here.
import * as vscode from 'vscode';
import type { GoalTreeData } from '../engine/engineApi';
import { readSettings } from '../config/settings';
import type { GoalPlanView } from '../views/goalPlanView';
import type { PromptDocuments } from '../views/promptDocument';
import type { PromptStatusBar } from '../views/statusBar';
import type { OpenTraceStore } from './openTraceStore';
import { type SessionEntry, autoFollowed, byRecency } from './sessionList';
import { preparedOf, sessionHead, sessionStatus, sessionTitle } from './sessionViews';
import { type SessionDetail, TraceReader } from './traceReader';
import { errorText } from '../errorText';

const POLL_MS = 1500;
/** Every this many polls, every trace's files are looked at again (the others: the followed one and new folders). */
const FULL_EVERY = 10;

export interface LiveParts {
  output: vscode.OutputChannel;
  plan: GoalPlanView;
  prompts: PromptDocuments;
  status: PromptStatusBar;
  onPlan: (tree: GoalTreeData) => void;
  /** The trace the extension's own agent has open, if any: never followed from disk. */
  agentTraceId: () => string | undefined;
  agentBusy: () => boolean;
  /** The engine's store over the trace folder (read-only). */
  openStore: OpenTraceStore;
}

export class LiveSessions implements vscode.Disposable {
  private reader?: TraceReader;
  private store?: { dispose(): void };
  /** The store being opened for the current configuration; `generation` tells a stale one. */
  private opening?: Promise<void>;
  private generation = 0;
  private watcher?: vscode.FileSystemWatcher;
  private readonly timer: ReturnType<typeof setInterval>;
  private polls = 0;
  /** The next update looks at every trace (not only the followed one and new folders). */
  private full = true;
  private debounce?: ReturnType<typeof setTimeout>;
  private refreshing?: Promise<void>;
  private again = false;
  private entries: SessionEntry[] = [];
  /** The session the user picked; none: the newest proxied one. */
  private chosen?: string;
  /** The trace the views show from disk, and the state shown. */
  private shown?: string;
  private shownSignature?: string;
  private current?: SessionDetail;
  private first = true;
  private agentOwns = false;
  private readonly told = new Set<string>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly parts: LiveParts) {
    this.configure();
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('contextWorkbench.traceFolder')) this.configure();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.configure()),
    );
    this.timer = setInterval(() => this.refresh(++this.polls % FULL_EVERY !== 0), POLL_MS);
  }

  /** Watch `contextWorkbench.traceFolder` of the first workspace folder; its most recent trace comes into the views. */
  private configure(): void {
    this.watcher?.dispose();
    this.watcher = undefined;
    this.reader = undefined;
    this.store?.dispose();
    this.store = undefined;
    this.first = true;
    const generation = ++this.generation;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      this.opening = undefined;
      return;
    }
    const traceFolder = readSettings().traceFolder;
    this.opening = this.parts.openStore(folder, traceFolder).then(
      (store) => {
        if (generation !== this.generation) return store.dispose();
        this.store = store;
        this.reader = new TraceReader(store);
      },
      (e) => this.tell(`open ${traceFolder}`, `Context Workbench: the trace folder ${traceFolder} cannot be read: ${errorText(e)}`),
    );
    this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, `${traceFolder}/**`));
    const soon = () => {
      if (this.debounce) clearTimeout(this.debounce);
      this.debounce = setTimeout(() => this.refresh(), 150);
    };
    this.watcher.onDidCreate(soon);
    this.watcher.onDidChange(soon);
    this.watcher.onDidDelete(soon);
    this.refresh();
  }

  /** Whether the views show a session read from disk (rather than the agent's engine). */
  get showing(): string | undefined {
    return this.agentOwns ? undefined : this.shown;
  }

  /** The sessions last listed, for the picker. */
  async list(): Promise<SessionEntry[]> {
    await this.refreshNow();
    return this.entries;
  }

  /** Follow `traceId` (undefined: the newest proxied session, automatically). */
  async follow(traceId: string | undefined): Promise<SessionDetail | undefined> {
    this.chosen = traceId;
    this.agentOwns = false;
    this.shownSignature = undefined;
    await this.refreshNow();
    return this.current;
  }

  /** The agent of this window starts a task: the views are its own until a followed call lands. */
  agentActive(): void {
    this.agentOwns = true;
  }

  rawText(source: string): string | undefined {
    return this.showing ? this.reader?.rawText(this.showing, source) : undefined;
  }

  /** A refresh now, after the one running if any. */
  private async refreshNow(): Promise<void> {
    await this.refreshing;
    this.refresh();
    await this.refreshing;
  }

  /** Update the views; a `light` one (most polls) looks only at the followed session and new folders. */
  refresh(light = false): void {
    if (!light) this.full = true;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = this.update()
      .catch((e) => this.tell(`refresh: ${errorText(e)}`, `Context Workbench: the trace folder could not be read: ${errorText(e)}`))
      .finally(() => {
        this.refreshing = undefined;
        if (this.again) {
          this.again = false;
          this.refresh(true);
        }
      });
  }

  private async update(): Promise<void> {
    await this.opening;
    const reader = this.reader;
    if (!reader) return;
    const full = this.full;
    this.full = false;
    const followed = this.chosen ?? this.shown;
    this.entries = await reader.sessions(full ? undefined : (traceId) => traceId === followed);
    for (const e of this.entries) if (e.problem) this.tell(`${e.traceId}: ${e.problem}`, `Context Workbench: the session ${e.traceId} in the trace folder cannot be followed: ${e.problem}. The other sessions are unaffected.`);
    const readable = byRecency(this.entries);
    const agentTrace = this.parts.agentTraceId();
    const target =
      readable.find((e) => e.traceId === this.chosen) ??
      autoFollowed(readable) ??
      readable.find((e) => e.traceId === this.shown) ??
      // On activation: the workspace's most recent trace, whoever wrote it.
      (this.first ? readable[0] : undefined);
    this.first = false;
    if (!target || target.traceId === agentTrace) return;
    const detail = await reader.detail(target);
    for (const p of detail.problems) this.tell(`${target.traceId}: ${p}`, `Context Workbench: in the session ${target.traceId}: ${p}`);
    const changed = detail.signature !== this.shownSignature;
    // A running task keeps the views; what landed meanwhile is shown when it ends.
    if (!changed || this.parts.agentBusy()) return;
    this.push(detail);
  }

  private push(detail: SessionDetail): void {
    const { entry } = detail;
    const title = sessionTitle(entry);
    const tree = detail.goal ?? { mission: entry.meta?.mission ?? '', goals: [] };
    this.parts.plan.update(tree, {});
    this.parts.onPlan(tree);
    const head = sessionHead(detail);
    if (detail.prompt) {
      this.parts.prompts.update(preparedOf(detail.prompt), `Prompt of the newest call of ${title}`, head);
    } else {
      this.parts.prompts.clear([`# ${title}`, ...head.map((l) => `# ${l}`), '# This trace holds no prompt.json: the prompt of its newest call was not saved.'].join('\n'));
    }
    const { text, tooltip } = sessionStatus(detail, head);
    this.parts.status.show(text, tooltip);
    if (this.shown !== entry.traceId) this.parts.output.appendLine(`Context Workbench: following ${title} (${entry.traceId})`);
    this.shown = entry.traceId;
    this.shownSignature = detail.signature;
    this.current = detail;
    this.agentOwns = false;
  }

  /** Say `message` once per `key` in the output channel. */
  private tell(key: string, message: string): void {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.parts.output.appendLine(message);
  }

  dispose(): void {
    clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    this.watcher?.dispose();
    this.store?.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
