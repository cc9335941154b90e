// The playground page: reads a trajectory (file, drop or paste), hands it to the worker, and
// shows the calls as they come: the token chart, the raw trace, the prompt of the selected call,
// the board and the goal plan as a DAG. The page never runs the engine itself.
import { renderChart } from '../../src/dashboard/chart.js';
import { renderDag } from './dag.js';
import { el } from '../../src/dashboard/dom.js';
import { renderBoard, renderPrompt, renderRaw } from '../../src/dashboard/views.js';

/** The largest file the page reads (the engine's limit for a replay session). */
const MAX_BYTES = 64 * 1024 * 1024;
/** The sample that ships with the page, and the window it is replayed at (one it fits whole: the engine keeps it as sent). */
const SAMPLE = { file: 'sample.jsonl', window: 16_000 };
const FORMATS = 'vorflux JSON, Claude Code JSONL, SWE-agent .traj, mini-swe-agent, OpenHands, OpenAI chat';

const $ = (id) => document.getElementById(id);
const ui = { file: $('file'), sample: $('sample'), sampleInline: $('sample-inline'), window: $('window'), dropzone: $('dropzone'), paste: $('paste'), pasteRun: $('paste-run'), trajectory: $('trajectory'), call: $('call'),
  status: $('status'), totals: $('totals'), chart: $('chart'), raw: $('raw'), prompt: $('prompt'), board: $('board'), dag: $('dag') };

let worker;
let run = emptyRun();

function emptyRun() {
  return { trajectories: [], selected: 0, total: 0, raw: [], calls: [], texts: [], boards: new Map(), trees: [],
    call: 0, follow: true, done: false, dag: { expanded: new Set() }, window: windowSize() };
}

function windowSize() {
  return Number(ui.window.value) || 200_000;
}

async function openSample() {
  status('Fetching the sample…');
  try {
    const response = await fetch(new URL(SAMPLE.file, import.meta.url));
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    ui.window.value = String(SAMPLE.window);
    open(SAMPLE.file, await response.text());
  } catch (error) {
    status(`The sample could not be fetched: ${error?.message ?? error}`, true);
  }
}

function status(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
}

/** A fresh worker for each file, so a stuck or crashed one never holds the page. */
function startWorker() {
  worker?.terminate();
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = ({ data }) => receive(data);
  worker.onerror = (event) => {
    event.preventDefault();
    status(`The engine stopped: ${event.message || 'the worker failed to load'}`, true);
  };
  worker.onmessageerror = () => status('The engine sent a message the page could not read.', true);
}

async function openFile(file) {
  if (!file) return;
  if (file.size > MAX_BYTES) {
    status(`${file.name} is ${(file.size / 1e6).toFixed(1)} MB: the playground reads trajectories up to `
      + `${MAX_BYTES >> 20} MB. Replay larger ones with \`workbench replay\`.`, true);
    return;
  }
  status(`Reading ${file.name}…`);
  let text;
  try {
    text = await file.text();
  } catch (error) {
    status(`${file.name} could not be read: ${error?.message ?? error}`, true);
    return;
  }
  open(file.name, text);
}

function open(name, text) {
  if (!text.trim()) {
    status(`${name} is empty: nothing to replay.`, true);
    return;
  }
  run = emptyRun();
  render();
  startWorker();
  status(`Importing ${name}…`);
  worker.postMessage({ type: 'open', name, text, window: windowSize() });
}

function receive(message) {
  switch (message.type) {
    case 'opened':
      Object.assign(run, { trajectories: message.trajectories, selected: message.selected, total: message.calls,
        raw: message.raw, calls: [], texts: [], boards: new Map(), trees: [], call: 0, follow: true, done: false });
      fillTrajectories();
      renderRaw(ui.raw, run.raw, 0);
      status(`Replaying ${message.trajectories[message.selected].name}: 0 of ${run.total} calls…`);
      break;
    case 'calls':
      if (message.texts_from !== run.texts.length) run.texts.length = message.texts_from;
      run.texts.push(...message.texts);
      run.calls.push(...message.calls);
      if (run.follow) run.call = run.calls.length - 1;
      status(`Replaying: ${run.calls.length} of ${run.total} calls…`);
      render();
      break;
    case 'board':
      run.boards.set(message.version, message.board);
      break;
    case 'tree':
      run.trees.push({ call: message.call, tree: message.tree });
      break;
    case 'done':
      run.done = true;
      status(`Replayed ${run.calls.length} calls of ${run.trajectories[run.selected].name} at a ${(run.window / 1000).toFixed(0)}k window in ${message.ms} ms. `
        + 'Click a bar to see that call.');
      document.body.dataset.state = 'done';
      render();
      break;
    case 'summary':
      run.summary = message.summary;
      render();
      break;
    case 'error':
      status(`${message.code === 'invalid_trajectory' ? `Not a trajectory the importers know (${FORMATS}): ` : ''}`
        + `${message.message} (${message.code})`, true);
      document.body.dataset.state = 'error';
      break;
  }
}

function fillTrajectories() {
  ui.trajectory.replaceChildren(...run.trajectories.map((t, i) => el('option', { value: i, selected: i === run.selected },
    `${t.name} (${t.format}, ${t.calls} calls)`)));
  ui.trajectory.disabled = run.trajectories.length < 2;
}

/** The goal tree as it stood after `call`. */
function treeAt(call) {
  let tree;
  for (const entry of run.trees) if (entry.call <= call) tree = entry.tree;
  return tree;
}

/** The run so far in one line: what the engine sent against the unmanaged prompt, the share a
 * provider's cache would serve, the rewrites and fallbacks. */
function totals(calls) {
  if (calls.length === 0) return '';
  const sum = (f) => calls.reduce((n, c) => n + f(c), 0);
  const sent = sum((c) => c.tokens);
  const raw = sum((c) => c.raw_tokens);
  const cached = sum((c) => c.expected_cached_tokens);
  const rewrites = sum((c) => c.rewrites.length);
  const fallbacks = sum((c) => (c.fallback ? 1 : 0));
  return `${calls.length} calls: ${sent.toLocaleString('en')} prompt tokens sent against ${raw.toLocaleString('en')} unmanaged `
    + `(${(sent / Math.max(1, raw)).toFixed(2)}×), ${((100 * cached) / Math.max(1, sent)).toFixed(1)}% of them expected cached, `
    + `${rewrites} rewrite${rewrites === 1 ? '' : 's'} of earlier prompt${fallbacks ? `, ${fallbacks} calls sent unmanaged` : ''}`;
}

/** The replay's figures once it is done: the cost against the unmanaged prompt's at cached
 * prices and both recalls, as `workbench replay` reports them (its cached share is the line's). */
function summaryLine(summary) {
  if (!summary) return '';
  const { raw, workbench } = summary;
  const recall = (kept, counted) => (counted > 0 ? (kept / counted).toFixed(3) : 'n/a');
  return `The replay's figures: cost ${(workbench.cost / Math.max(raw.cost, 1e-9)).toFixed(2)}× the unmanaged prompt's, `
    + `edit recall ${recall(workbench.edits_kept, workbench.edits_counted)}, `
    + `reference recall ${recall(workbench.refs_kept, workbench.refs_counted)} (of ${workbench.refs_counted} references the agent reused)`;
}

function selectCall(index) {
  if (!run.calls[index]) return;
  run.call = index;
  run.follow = false;
  render();
}

function render() {
  document.body.dataset.state = run.done ? 'done' : run.calls.length ? 'running' : 'idle';
  ui.dropzone.hidden = run.calls.length > 0;
  const call = run.calls[run.call];
  ui.call.disabled = run.calls.length === 0;
  ui.call.max = String(Math.max(0, run.calls.length - 1));
  ui.call.value = String(run.call);
  renderChart(ui.chart, run.calls, run.total, run.call, run.window, selectCall);
  ui.totals.textContent = [totals(run.calls), summaryLine(run.summary)].filter(Boolean).join('. ');
  renderPrompt(ui.prompt, call, run.texts, run.raw);
  renderBoard(ui.board, call ? run.boards.get(call.board_version) : undefined);
  const drawDag = () => renderDag(ui.dag, call ? treeAt(run.call) : undefined, run.dag, drawDag);
  drawDag();
  if (run.done || !run.follow) renderRaw(ui.raw, run.raw, call ? call.history : 0);
}

ui.file.addEventListener('change', () => openFile(ui.file.files[0]));
ui.sample.addEventListener('click', openSample);
ui.sampleInline.addEventListener('click', openSample);
ui.pasteRun.addEventListener('click', () => {
  const text = ui.paste.value;
  open(text.trimStart().startsWith('{') && text.includes('\n{') ? 'pasted.jsonl' : 'pasted.json', text);
});
ui.trajectory.addEventListener('change', () => {
  const index = Number(ui.trajectory.value);
  run = { ...emptyRun(), trajectories: run.trajectories, selected: index, window: run.window };
  render();
  status(`Replaying ${run.trajectories[index].name}…`);
  worker.postMessage({ type: 'select', index });
});
ui.call.addEventListener('change', () => selectCall(Number(ui.call.value)));
document.addEventListener('dragover', (event) => {
  event.preventDefault();
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
document.addEventListener('drop', (event) => {
  event.preventDefault();
  document.body.classList.remove('dragging');
  if (event.dataTransfer?.items?.[0]?.webkitGetAsEntry?.()?.isDirectory) {
    status('That is a folder: a trace store opens with "Open a trace store…" (choose or drop it there); '
      + 'this page replays one trajectory file.', true);
    return;
  }
  openFile(event.dataTransfer?.files?.[0]);
});
window.addEventListener('unhandledrejection', (event) => status(`Unexpected: ${event.reason?.message ?? event.reason}`, true));
