// The playground's engine, off the page's thread: imports a trajectory, replays it call by
// call with the package's ReplaySession (no LLM: the embedded compactor), and posts what the
// page shows in batches, yielding between them so a new file or context interrupts the run.
import { ReplaySession } from '../dist/web.js';

/** Calls replayed before the page hears of them. */
const BATCH_MS = 60;
let session;
let generation = 0;

self.onmessage = async ({ data }) => {
  const run = ++generation;
  try {
    if (data.type === 'open') {
      session?.dispose();
      session = undefined;
      session = await ReplaySession.create(data.name, data.text, { window: data.window });
    } else if (data.type === 'select') {
      session.select(data.index);
    } else {
      return;
    }
    await replay(run);
  } catch (error) {
    post({ type: 'error', code: error?.code ?? 'internal', message: error?.message ?? String(error) });
  }
};

function post(message) {
  self.postMessage(message);
}

/** Replay the selected trajectory from its first call, unless a newer request starts over. */
async function replay(run) {
  const started = performance.now();
  post({ type: 'opened', trajectories: session.trajectories(), selected: session.selected, calls: session.calls,
    raw: session.rawMessages() });
  let board = -1;
  let tree = '';
  for (;;) {
    const batch = { type: 'calls', calls: [], texts_from: -1, texts: [] };
    const until = performance.now() + BATCH_MS;
    let step;
    while (performance.now() < until && (step = session.step())) {
      if (batch.texts_from < 0) batch.texts_from = step.texts_from;
      batch.calls.push(step.call);
      batch.texts.push(...step.texts);
      if (step.call.board_version !== board) {
        board = step.call.board_version;
        post({ type: 'board', version: board, board: session.board() });
      }
      const goals = session.goalTree();
      const text = JSON.stringify(goals);
      if (text !== tree) {
        tree = text;
        post({ type: 'tree', call: step.call.call, tree: goals });
      }
    }
    if (batch.calls.length > 0) post(batch);
    if (!step) break;
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (run !== generation) return;
  }
  post({ type: 'done', ms: Math.round(performance.now() - started) });
  // The replay's own figures (cost against the unmanaged prompt, both recalls): one more pass.
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (run !== generation) return;
  post({ type: 'summary', summary: session.summary() });
}
