// ReplaySession: a recorded trajectory replayed call by call through the engine's `workbench`
// strategy, with no LLM (the embedded compactor). What the playground runs in its worker.
import { ReplaySession as WasmReplay } from './wasm/context_workbench.js';
import type { GoalTree, Message, ReplayStep, ReplaySummary, StateBoard, TrajectoryInfo } from './types.js';
import { ContextWorkbenchError, guarded } from './errors.js';
import { ensureEncoding } from './init.js';

/** The largest trajectory a session imports (the engine refuses more, with `invalid_input`). */
export const MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024;

export class ReplaySession {
  #wasm: WasmReplay | undefined;

  private constructor(wasm: WasmReplay) {
    this.#wasm = wasm;
  }

  /**
   * Import a trajectory file's text (any format the replay imports; `file` names it) and select
   * its first trajectory with calls. Rejects with `invalid_trajectory` for text that is no
   * trajectory, `invalid_input` for one over MAX_TRAJECTORY_BYTES.
   */
  static async create(file: string, text: string, options: { window?: number } = {}): Promise<ReplaySession> {
    await ensureEncoding('o200k_base');
    return new ReplaySession(guarded(() => new WasmReplay(file, text, options.window)));
  }

  dispose(): void {
    this.#wasm?.free();
    this.#wasm = undefined;
  }

  #use<T>(f: (session: WasmReplay) => T): T {
    const session = this.#wasm;
    if (!session) throw new ContextWorkbenchError('disposed', 'this replay session was disposed');
    return guarded(() => f(session));
  }

  /** The agent contexts of the file: a Claude Code session first, then its sub-agents. */
  trajectories(): TrajectoryInfo[] { return this.#use((s) => s.trajectories()); }
  get selected(): number { return this.#use((s) => s.selected); }
  /** Start over on trajectory `index`. */
  select(index: number): void { this.#use((s) => s.select(index)); }
  /** Recorded calls of the selected trajectory. */
  get calls(): number { return this.#use((s) => s.calls); }
  rawMessages(): Message[] { return this.#use((s) => s.rawMessages()); }
  /** Replay the next call; `undefined` when all were replayed. New texts come with the step. */
  step(): ReplayStep | undefined { return this.#use((s) => s.step()); }
  board(): StateBoard { return this.#use((s) => s.board()); }
  goalTree(): GoalTree { return this.#use((s) => s.goalTree()); }
  /** `workbench replay`'s totals of the unmanaged prompt and the workbench over the selected
   * trajectory (cost, cached share, rewrites, edit and reference recall); replays it once more. */
  summary(): ReplaySummary { return this.#use((s) => s.summary()); }
}
