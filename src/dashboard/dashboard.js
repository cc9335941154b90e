// The dashboard: the proxy's sessions (live), one session (its calls, plan and prompt with the
// originals behind every compressed part) and a search of the raw traces. It reads only the
// query API beside it (relative URLs: the same page at `workbench serve`'s root and at the
// proxy's /workbench/), and draws with the view modules beside it, which the playground imports
// too. Opened with `?folder` from a static server of the repository (the playground links to
// it), it asks the same API of a trace store folder picked in the browser instead (`folder.js`).
import { el, kilo, usd } from './dom.js';
import { renderChart } from './chart.js';
import { flatten, textBlock } from './views.js';

const POLL_MS = 2000;
/** Session rows shown at first, and added by each "show more". */
const PAGE_ROWS = 100;
const view = document.getElementById('view');
const status = document.getElementById('status');
const liveLine = document.getElementById('live');
const underProxy = location.pathname.startsWith('/workbench/');
/** `?folder`: no server, the API of a folder picked here; `folder.api` once one is open. */
const folder = new URLSearchParams(location.search).has('folder') ? { api: undefined, files: 0 } : undefined;
/** Team mode: the member's token, kept for this tab only; sent with every API request. */
const TOKEN_KEY = 'workbench-token';
const TOKEN_HEADER = 'x-workbench-token';
const state = { timer: 0, generation: 0, focusKey: '', shown: '', sort: { key: 'updated_at', ascending: false }, agent: '', day: '', rows: PAGE_ROWS, report: undefined, calls: undefined, expanded: new Map(), prompts: new Map(), compactions: undefined, openPrompts: new Set() };

document.getElementById('search').addEventListener('submit', (event) => {
  event.preventDefault();
  const hash = `#/search/${encodeURIComponent(document.getElementById('q').value.trim())}`;
  if (location.hash === hash) route(true); // the same search again reads the traces again
  else location.hash = hash;
});
addEventListener('hashchange', () => route(true));
/** What reads a picked folder; a workbench server does not serve it. */
const picking = folder && await import('./folder.js').catch(() => undefined);
if (picking) {
  folder.open = (files) => {
    folder.api?.close();
    folder.api = picking.folderApi(files);
    folder.files = files.length;
    // Nothing read from the folder before is this one's.
    Object.assign(state, { calls: undefined, report: undefined, compactions: undefined, prompts: new Map(), expanded: new Map() });
    location.hash = '#/';
    route(true);
  };
  picking.acceptDrops(folder.open, (message) => say(message, true));
}
signedIn();
if (folder && !picking) say('This page opens a picked folder where the repository is served (npm run playground in bindings/).', true);
else route(true);

/** GET an API path (relative); an error answer becomes an Error with its message. */
async function api(path) {
  if (folder) {
    const answer = await folder.api.get(path);
    const body = JSON.parse(answer.body);
    if (answer.status >= 400) throw new Error(body.error?.message ?? `The folder's reader answered ${answer.status}.`);
    return body;
  }
  let response;
  const token = sessionStorage.getItem(TOKEN_KEY);
  try {
    response = await fetch(path, { headers: { accept: 'application/json', ...(token ? { [TOKEN_HEADER]: token } : {}) } });
  } catch {
    throw new Error('The server does not answer: is it still running? Trying again every 2 seconds.');
  }
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) throw Object.assign(new Error(body.error?.message ?? 'Sign in with your team token.'), { signIn: true, hadToken: Boolean(token) });
  if (!response.ok) throw new Error(body.error?.message ?? `The server answered ${response.status}.`);
  return body;
}

/** Team mode: the form that asks for a member's token (`workbench team add` printed it). */
function signInView(generation, error) {
  show(generation, `sign-in:${error.hadToken}`, () => [el('form', { id: 'sign-in', class: 'sign-in', onsubmit: (event) => {
    event.preventDefault();
    const token = event.target.elements.token.value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    signedIn();
    route(true);
  } },
  el('h2', {}, 'Sign in'),
  el('p', {}, 'This store belongs to a team: its sessions are shown to their members. Paste the token ',
    el('code', {}, 'workbench team add'), ' printed for you (it stays in this tab only).'),
  error.hadToken ? el('p', { class: 'error', role: 'alert' }, error.message) : null,
  el('label', { for: 'token' }, 'Team token '),
  el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', placeholder: 'wbt_…', required: true }),
  el('button', { type: 'submit' }, 'Sign in'))]);
  say('');
  live('');
  setTimeout(() => document.getElementById('token')?.focus());
}

/** The header's way out once a token is kept. */
function signedIn() {
  document.getElementById('sign-out')?.remove();
  if (!sessionStorage.getItem(TOKEN_KEY)) return;
  document.querySelector('header').append(el('button', { type: 'button', id: 'sign-out', class: 'link', onclick: () => {
    sessionStorage.removeItem(TOKEN_KEY);
    signedIn();
    Object.assign(state, { calls: undefined, report: undefined, compactions: undefined, prompts: new Map(), expanded: new Map() });
    route(true);
  } }, 'Sign out'));
}

/** Say something to the reader (a screen reader announces it): an error, or that it cleared. */
function say(text, error = false) {
  status.textContent = text;
  status.classList.toggle('error', error);
}

/** The time of the last live update, beside the status, never announced; for a picked folder,
 * that it is one, and a way to pick another. */
function live(text) {
  if (!folder?.api) return void (liveLine.textContent = text);
  const another = () => {
    folder.api.close();
    folder.api = undefined;
    route(true);
  };
  liveLine.replaceChildren(`Read from a picked folder (${plural(folder.files, 'file')}) as it was when picked. `,
    el('button', { type: 'button', class: 'link', onclick: another }, 'Choose another folder'));
}

/** Show the view the address names, and keep it live. A newer call (a click, the next poll)
 * supersedes this one: what this one then reads is neither drawn nor polled again. */
async function route(changed = false) {
  clearTimeout(state.timer);
  const generation = ++state.generation;
  const [, kind, id, , call] = location.hash.split('/');
  state.focusKey = document.activeElement?.closest?.('#view [data-focus-key]')?.dataset.focusKey ?? '';
  if (changed) {
    state.shown = '';
    view.replaceChildren();
  }
  try {
    if (folder && !folder.api) return pickerView(generation);
    if (kind === 'session' && id) await sessionView(decodeURIComponent(id), call === undefined ? undefined : Number(call), generation);
    else if (kind === 'search' && id) await searchView(decodeURIComponent(id), generation);
    else await listView(generation);
    if (generation === state.generation && status.classList.contains('error')) say('');
  } catch (error) {
    if (error.signIn) {
      if (generation === state.generation) signInView(generation, error);
      return;
    }
    if (generation === state.generation) say(error.message, true);
  }
  if (generation !== state.generation) return;
  // The view takes the focus for the keyboard without scrolling the header (the search) away.
  if (changed && !view.contains(document.activeElement)) view.focus({ preventScroll: true });
  // A picked folder is a snapshot: nothing new comes unless it is picked again.
  if (kind !== 'search' && !folder) state.timer = setTimeout(route, POLL_MS);
}

/** Before a folder is picked (`?folder`): what to open, and how. */
function pickerView(generation) {
  show(generation, 'picker', () => [picking.folderPicker(folder.open)]);
  live('');
}

/** Replace the view only when what it shows changed (a live poll that found nothing new keeps
 * focus and scroll), and only if no newer `route` began meanwhile. */
function show(generation, key, build) {
  if (generation !== state.generation || key === state.shown) return;
  state.shown = key;
  view.replaceChildren(...build().filter(Boolean));
  // What had the focus before the redraw (a sort button, a filter, the chart) has it again.
  const again = state.focusKey && view.querySelector(`[data-focus-key="${CSS.escape(state.focusKey)}"]`);
  if (again) again.focus();
}

const plural = (n, word) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
const percent = (share) => (share === null || share === undefined ? '–' : `${Math.round(share * 100)}%`);
const when = (ms) => (ms ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : '–');
const sessionLink = (id, text, call) => el('a', { href: `#/session/${encodeURIComponent(id)}${call ? `/call/${call}` : ''}` }, text);

function totalsLine(t) {
  return el('p', { class: 'totals' },
    `${plural(t.sessions, 'session')}, ${plural(t.calls, 'call')} (${plural(t.side_calls, 'side call')}): `
    + `the agents sent ${kilo(t.client_tokens)} prompt tokens, the provider received ${kilo(t.prompt_tokens)}; `
    + 'cost ',
    el('span', { class: 'saving' }, t.saving_text),
    `; provider's cached share ${percent(t.cached_share)} (the engine expected ${percent(t.expected_cached_share)}).`,
    t.cache_note ? el('span', { class: 'hint' }, ` Why none: ${t.cache_note}.`) : '');
}

function emptyState() {
  const base = location.origin;
  if (folder) {
    return el('div', { class: 'empty' }, el('p', {}, 'No session in this folder. Choose the ', el('code', {}, '.trace'),
      ' folder of a workspace where the proxy or the VS Code extension saved sessions, or the workspace itself.'));
  }
  return el('div', { class: 'empty' }, el('p', {}, 'No proxied session here yet.'),
    underProxy
      ? el('p', {}, 'Point your agent at this proxy: ', el('code', {}, `ANTHROPIC_BASE_URL=${base}`), ' (Claude Code) or ',
        el('code', {}, `OPENAI_BASE_URL=${base}/v1`), ' (OpenAI-compatible agents). Its sessions appear here as they run.')
      : el('p', {}, 'Start ', el('code', {}, 'workbench proxy'), ' with this trace store and point your agent at it; '
        + 'its sessions appear here as they run.'));
}

const COLUMNS = [
  ['title', 'Session', (s) => sessionLink(s.trace_id, s.title || s.trace_id)],
  ['agent', 'Agent', (s) => s.agent || '–'],
  ['status', 'Status', (s) => s.status],
  ['updated_at', 'Last active (UTC)', (s) => when(s.updated_at)],
  ['calls', 'Calls', (s) => String(s.calls), true],
  ['client_tokens', 'Agent sent', (s) => kilo(s.client_tokens), true],
  ['prompt_tokens', 'Provider got', (s) => kilo(s.prompt_tokens), true],
  ['cached_share', 'Cached (expected)', (s) => `${percent(s.cached_share)} (${percent(s.expected_cached_share)})`, true],
  ['saving_usd', 'Cost, and what it saved', (s) => s.saving_text, true],
];

/** Team mode: whose session it is. */
const PERSON_COLUMN = ['person', 'Person', (s) => s.person || '–'];

async function listView(generation) {
  const report = await api('api/stats');
  show(generation, JSON.stringify([report, state.sort, state.agent, state.day, state.rows]), () => {
    if (report.sessions.length === 0) return [emptyState()];
    const agents = [...new Set(report.sessions.map((s) => s.agent))].sort();
    const days = [...new Set(report.sessions.map((s) => s.day))].sort().reverse();
    const picked = report.sessions.filter((s) => (!state.agent || s.agent === state.agent) && (!state.day || s.day === state.day));
    const { key, ascending } = state.sort;
    const order = (a, b) => (a[key] ?? -1) < (b[key] ?? -1) ? -1 : (a[key] ?? -1) > (b[key] ?? -1) ? 1 : 0;
    picked.sort((a, b) => (ascending ? order(a, b) : order(b, a)));
    const filter = (label, value, options, set) => el('label', {}, `${label} `, el('select', { 'data-focus-key': label, onchange: (e) => { set(e.target.value); state.shown = ''; route(); } },
      el('option', { value: '' }, 'all'), ...options.map((o) => el('option', { value: o, selected: o === value }, o || '(unnamed)'))));
    const head = el('tr', {}, ...(report.sessions.some((s) => s.person) ? [COLUMNS[0], PERSON_COLUMN, ...COLUMNS.slice(1)] : COLUMNS).map(([k, label, , numeric]) => el('th', {
      class: numeric ? 'n' : '', scope: 'col', 'aria-sort': k === key ? (ascending ? 'ascending' : 'descending') : undefined },
    el('button', { type: 'button', 'data-focus-key': `sort-${k}`, onclick: () => { state.sort = { key: k, ascending: k === key ? !ascending : false }; route(); } }, label))));
    const columns = report.sessions.some((s) => s.person) ? [COLUMNS[0], PERSON_COLUMN, ...COLUMNS.slice(1)] : COLUMNS;
    const rows = picked.slice(0, state.rows).map((s) => el('tr', { 'data-trace': s.trace_id }, ...columns.map(([, , cell, numeric]) => el('td', { class: numeric ? 'n' : '' }, cell(s)))));
    const dayRows = report.days.map((d) => el('tr', {}, el('td', {}, d.day), el('td', {}, d.agent || '–'), el('td', { class: 'n' }, String(d.sessions)),
      el('td', { class: 'n' }, String(d.calls)), el('td', { class: 'n' }, kilo(d.client_tokens)), el('td', { class: 'n' }, kilo(d.prompt_tokens)),
      el('td', { class: 'n' }, d.saving_text)));
    const personRows = (report.people ?? []).map((p) => el('tr', {}, el('td', {}, p.day), el('td', {}, p.person), el('td', { class: 'n' }, String(p.sessions)),
      el('td', { class: 'n' }, String(p.calls)), el('td', { class: 'n' }, kilo(p.client_tokens)), el('td', { class: 'n' }, kilo(p.prompt_tokens)),
      el('td', { class: 'n' }, p.saving_text)));
    const modelRows = report.models.map((m) => el('tr', {}, el('td', {}, m.model || '–'), el('td', { class: 'n' }, String(m.sessions)),
      el('td', { class: 'n' }, String(m.calls + m.side_calls)), el('td', { class: 'n' }, kilo(m.client_tokens)), el('td', { class: 'n' }, kilo(m.prompt_tokens)),
      el('td', { class: 'n' }, m.saving_text)));
    return [totalsLine(report.total),
      el('div', { class: 'filters' }, filter('Agent', state.agent, agents, (v) => { state.agent = v; }), filter('Day', state.day, days, (v) => { state.day = v; })),
      el('table', { id: 'sessions' }, el('caption', { class: 'hint' }, `${rows.length} of ${picked.length} sessions shown`
        + (picked.length < report.sessions.length ? ` (${report.sessions.length} in all)` : '') + (folder ? '' : ', live')), el('thead', {}, head), el('tbody', {}, ...rows)),
      picked.length === 0 ? el('p', { class: 'empty' }, 'No session matches these filters.') : null,
      picked.length > rows.length ? el('button', { type: 'button', id: 'more', 'data-focus-key': 'more', onclick: () => { state.rows += PAGE_ROWS; route(); } },
        `Show ${Math.min(PAGE_ROWS, picked.length - rows.length)} more`) : null,
      el('h2', {}, 'By day and agent'),
      el('table', { id: 'days' }, el('thead', {}, el('tr', {}, ...['Day', 'Agent', 'Sessions', 'Calls', 'Agent sent', 'Provider got', 'Cost, and what it saved']
        .map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'n' : '' }, h)))), el('tbody', {}, ...dayRows)),
      ...(new Set(report.people?.map((p) => p.person)).size > 1 ? [el('h2', {}, 'By day and person'),
        el('table', { id: 'people' }, el('thead', {}, el('tr', {}, ...['Day', 'Person', 'Sessions', 'Calls', 'Agent sent', 'Provider got', 'Cost, and what it saved']
          .map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'n' : '' }, h)))), el('tbody', {}, ...personRows))] : []),
      el('h2', {}, 'By model'),
      el('table', { id: 'models' }, el('thead', {}, el('tr', {}, ...['Model', 'Sessions', 'Calls', 'Agent sent', 'Provider got', 'Cost, and what it saved']
        .map((h, i) => el('th', { scope: 'col', class: i > 0 ? 'n' : '' }, h)))), el('tbody', {}, ...modelRows))];
  });
  live(`Live: updated ${new Date().toLocaleTimeString()}.`);
}

async function sessionView(traceId, selected, generation) {
  // Only the calls after those already here are asked for (calls.jsonl only grows).
  if (state.calls?.traceId !== traceId) state.calls = { traceId, list: [], notes: [] };
  const known = state.calls;
  const from = known.list.length;
  const [detail, page, prompt, compactions] = await Promise.all([api(`api/traces/${encodeURIComponent(traceId)}`),
    api(`api/traces/${encodeURIComponent(traceId)}/calls?from=${from}`), promptOf(traceId, selected), compactionsOf(traceId, from)]);
  if (known.list.length === from) known.list.push(...page.calls); // not when another poll added them meanwhile
  known.notes = page.notes ?? [];
  // The sums over every session are read again only when this one's calls changed.
  const seen = `${traceId}:${known.list.length}`;
  if (state.report?.seen !== seen) state.report = { seen, report: await api('api/stats') };
  const { report } = state.report;
  const session = report.sessions.find((s) => s.trace_id === traceId || s.earlier.includes(traceId) || s.branches.includes(traceId));
  const caller = detail.trace.branch_of;
  const main = known.list.filter((c) => !c.side_call);
  const pick = selected ?? main.at(-1)?.call;
  show(generation, JSON.stringify([session, detail, known.list.length, known.notes, prompt.prompt?.call, prompt.prompt?.tokens, prompt.prompt?.first_changed_byte, compactions.compactions.length, pick]), () => [
    el('h2', {}, detail.trace.mission || traceId),
    el('p', {}, `${session?.agent || 'an agent'} · ${detail.trace.status} · started ${when(detail.trace.created_at)} · last active ${when(detail.trace.updated_at)} · trace `,
      el('code', {}, traceId), session?.earlier.length ? ` (continues ${session.earlier.join(' → ')}: the agent compacted its own history)` : '',
      ...(folder ? [' · raw files: ', el('code', {}, `${traceId}/`), ' in the folder'] : [' · raw files: ',
        el('a', { href: `api/traces/${encodeURIComponent(traceId)}/calls` }, 'calls.jsonl'), ', ',
        el('a', { href: `api/traces/${encodeURIComponent(traceId)}` }, 'meta and plan')])),
    caller ? el('p', {}, 'A sub-agent of ', sessionLink(caller.trace_id, caller.trace_id), ', started by its call ', el('code', {}, caller.call_id),
      '; its calls are counted in that session.') : session ? totalsLine(session) : el('p', {}, 'No call recorded yet.'),
    !caller && session?.branches.length ? el('p', {}, 'Sub-agents it ran: ', ...session.branches.flatMap((id, i) => [i ? ', ' : '', sessionLink(id, id)])) : '',
    chartPanel(traceId, main, pick),
    planPanel(detail.goal_tree, pick, main.at(-1)?.call, prompt.plan),
    compactionsPanel(traceId, compactions),
    promptPanel(traceId, prompt, pick, main.at(-1)?.call),
    ...[...known.notes, ...detail.notes ?? []].map((n) => el('p', { class: 'hint' }, `Note: ${n}`)),
  ]);
  live(`Live: ${main.length} calls; updated ${new Date().toLocaleTimeString()}.`);
}

function chartPanel(traceId, calls, pick) {
  const chart = el('div', { id: 'chart' });
  const points = calls.map((c) => ({ tokens: c.prompt_tokens, raw_tokens: c.client_tokens, rewrites: c.rewrites, number: c.call, cut: cutShort(c) }));
  const index = calls.findIndex((c) => c.call === pick);
  renderChart(chart, points, points.length, index, Infinity, (i) => { location.hash = `#/session/${encodeURIComponent(traceId)}/call/${calls[i].call}`; });
  const call = calls[index];
  const detail = call ? el('p', { id: 'call-detail' }, `Call ${call.call}: the agent sent ${call.client_tokens.toLocaleString('en')} tokens `
    + `(${call.new_messages} new of ${call.messages} messages), the provider got ${call.prompt_tokens.toLocaleString('en')}, `
    + `${call.expected_cached_tokens.toLocaleString('en')} expected from its cache`
    + (call.usage ? `, ${(call.usage.cache_read_tokens ?? 0).toLocaleString('en')} reported read from it` : '')
    + (call.dollars ? `; it cost ${usd(call.dollars.sent)} where the agent's own request would have cost ${usd(call.dollars.agent)} `
      + `(${call.dollars.priced_as} at prices read ${call.dollars.prices_read_on}${call.dollars.note ? `; ${call.dollars.note}` : ''})` : '')
    + (call.rewrites.length ? `; rewrote earlier prompt: ${call.rewrites.join(', ')}` : '')
    + (call.managed ? '' : '; sent unmanaged')
    + (cutShort(call) ? '; its reply was cut short' : '')
    + (call.notes.length ? `; ${call.notes.join('; ')}` : '') + '.')
    : el('p', { id: 'call-detail' }, calls.length ? `This session has no call ${pick}.` : 'No call yet.');
  return el('section', { class: 'panel', id: 'chart-panel', 'aria-label': 'Tokens per call' }, el('h2', {}, 'Tokens per call'), chart,
    el('p', { class: 'legend' }, el('span', { class: 'key' }), 'what the provider got',
      el('span', { class: 'key rewrite' }), 'a call that rewrote earlier prompt (its cache is lost after that point)',
      el('span', { class: 'key raw' }), 'what the agent sent',
      calls.some(cutShort) ? [el('span', { class: 'key cut' }), 'a call whose reply was cut short (no whole reply recorded)'] : null), detail);
}

/** Why a call got no whole reply (the upstream broke off or failed, the proxy stopped), or ''. */
function cutShort(call) {
  if (call.completed) return '';
  return call.notes.at(-1) ?? (call.status >= 400 ? `status ${call.status}` : 'no whole reply');
}

/** The plan: as the picked call saw it (`seen`, kept with its prompt), else as it is now. */
function planPanel(now, pick, newest, seen) {
  const earlier = pick !== undefined && pick !== newest;
  const tree = earlier && seen ? seen : now;
  const children = (parent) => tree.goals.filter((g) => (g.parent_id ?? null) === parent && !g.branch_id);
  const list = (parent) => {
    const goals = children(parent);
    if (goals.length === 0) return null;
    return el('ul', {}, ...goals.map((g) => el('li', { class: g.status, 'data-status': g.status },
      g.description, ' ', el('span', { class: 'status-tag' }, `(${g.status}${g.id === tree.current_id ? ', current' : ''})`), list(g.id), branches(g.id))));
  };
  // An exploration's branches (the agent's sub-agents): each with what it found, on one line.
  const branches = (start) => {
    const own = (tree.branches ?? []).filter((b) => b.explore_start_id === start);
    if (own.length === 0) return null;
    return el('ul', { class: 'branches' }, ...own.map((b) => el('li', { class: b.status === 'completed' ? 'completed' : 'in_progress', 'data-branch': b.id },
      `${b.id}: ${b.description} `, el('span', { class: 'status-tag' }, b.status === 'completed' ? `(done: ${firstLine(b.summary ?? '')})` : '(running)'))));
  };
  const roots = list(null);
  const quoted = (texts) => texts.map((t) => `“${t}”`).join(', ') || 'none';
  const named = (ids) => quoted(ids.map((id) => tree.goals.find((g) => g.id === id)?.description ?? `#${id}`));
  const revisions = (tree.revisions ?? []).map((r) => el('li', {},
    `Revised from item ${r.from_item}: kept ${named(r.kept)}; revised ${named(r.revised)}`,
    r.dropped.length ? `; dropped ${quoted(r.dropped)}` : ''));
  // A phase without a plan (`planning`, before any) says nothing the hint below does not.
  const phase = roots ? phaseText(tree) : undefined;
  return el('section', { class: 'panel plan', id: 'plan', 'aria-label': 'Plan' },
    el('h2', {}, 'Plan', phase ? el('span', { class: 'phase', id: 'phase' }, ` · ${phase}`) : null),
    earlier
      ? el('p', { class: 'hint', id: 'plan-when' }, seen ? `The plan as call ${pick} saw it.`
        : `The plan as it is now, after call ${newest}: call ${pick} was saved before calls kept their plan.`)
      : null,
    roots ?? el('p', { class: 'hint' }, "No plan yet: it follows the agent's own plan tool (TodoWrite, its task tools, update_plan, write_todos) as the agent uses it."),
    revisions.length ? el('ul', { class: 'revisions', 'aria-label': 'Plan revisions' }, ...revisions) : null);
}

/** The phase of the work for the plan's heading (R6.8): `planning`, `step 2 of 3`, `completed`. */
function phaseText(tree) {
  const phase = tree.phase;
  return phase?.phase === 'executing' ? `step ${phase.step + 1} of ${tree.steps}` : phase?.phase;
}

/** The first line of `text`, at most 120 characters. */
function firstLine(text) {
  const line = text.trim().split('\n')[0];
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The references a prompt's text names: `raw#m000012` and a block's `raw="m000022..m000025"`. */
function referencesIn(text) {
  return [...new Set([...text.matchAll(/raw#([A-Za-z0-9-]+)/g), ...text.matchAll(/raw="([A-Za-z0-9.-]+)"/g)].map((m) => m[1]))];
}

/** The prompt of `call` (a saved call's never changes, so it is read once), or the newest call's. */
async function promptOf(traceId, call) {
  if (!Number.isSafeInteger(call)) return api(`api/traces/${encodeURIComponent(traceId)}/prompt`);
  const key = `${traceId}:${call}`;
  const page = state.prompts.get(key) ?? await api(`api/traces/${encodeURIComponent(traceId)}/prompt?call=${call}`);
  if (page.prompt) state.prompts.set(key, page);
  return page;
}

/** The session's compactions, read again only when its calls changed. */
async function compactionsOf(traceId, calls) {
  const key = `${traceId}:${calls}`;
  if (state.compactions?.key !== key) state.compactions = { key, page: await api(`api/traces/${encodeURIComponent(traceId)}/compactions`) };
  return state.compactions.page;
}

/** Names shown before "and N more". */
const SHOWN_NAMES = 200;

function compactionsPanel(traceId, page) {
  const count = (n) => n.toLocaleString('en');
  const names = (label, list) => el('details', {}, el('summary', {}, `${label} (${count(list.length)})`),
    el('p', { class: 'names' }, list.slice(0, SHOWN_NAMES).join(', ') + (list.length > SHOWN_NAMES ? `, and ${count(list.length - SHOWN_NAMES)} more` : '')));
  const items = page.compactions.map((c) => el('li', { 'data-call': c.call },
    el('p', {}, sessionLink(traceId, `Call ${c.call}`, c.call), `: ${c.rewrite.mechanism.replace('_', ' ')} of raw ${c.range}`
      + ` (${kilo(c.rewrite.cost.tokens_before)} → ${kilo(c.rewrite.cost.tokens_after)} tokens) because ${c.rewrite.reasons.join('; ')}.`
      + (c.kept.length + c.dropped.length + c.earlier.length === 0 ? ' What it replaced names no path or identifier.'
        : ` Of the ${count(c.kept.length + c.dropped.length + c.earlier.length)} names (paths, identifiers) in what it replaced, the prompt kept`
        + ` ${count(c.kept.length)} and dropped ${count(c.dropped.length)}; ${count(c.earlier.length)} were out of it before.`)),
    c.dropped.length ? names('Dropped: the prompt before held them, this one does not', c.dropped) : null,
    c.kept.length ? names('Kept in the prompt', c.kept) : null,
    c.earlier.length ? names('Out of the prompt before (a compressed output, an earlier compaction)', c.earlier) : null,
    c.range ? originalsToggle(traceId, c.range) : null));
  return el('section', { class: 'panel', id: 'compactions', 'aria-label': 'Compactions' },
    el('h2', {}, `Compactions${items.length ? ` (${items.length})` : ''}`),
    items.length
      ? el('ol', {}, ...items)
      : el('p', { class: 'hint' }, 'None yet: earlier prompt is rewritten only when the cost model says it pays, or when the prompt nears the window.'),
    ...(page.notes ?? []).map((n) => el('p', { class: 'hint' }, `Note: ${n}`)));
}

function promptPanel(traceId, page, pick, newest) {
  const prompt = page.prompt;
  if (!prompt) {
    const why = page.notes?.[0] ?? 'No prompt saved yet.';
    return el('section', { class: 'panel', id: 'prompt', 'aria-label': 'Prompt' }, el('h2', {}, pick === undefined ? 'Prompt' : `The prompt of call ${pick}`),
      el('p', { class: 'hint' }, why.endsWith('.') ? why : `${why}.`));
  }
  // A prompt.json of an earlier build has no number: it is the newest call's.
  const call = prompt.call || newest;
  const messages = prompt.view.messages.map((m) => ({ m, text: flatten(m) })).map((x) => ({ ...x, refs: referencesIn(x.text) }));
  const compressed = messages.filter((x) => x.refs.length > 0).length;
  const row = ({ m, text, refs }, i) => el('div', { class: `msg${refs.length ? ' compressed' : ''}`, 'data-index': i },
    el('div', { class: 'head' }, el('span', { class: 'role' }, m.role), el('span', {}, m.layer), m.source ? el('span', {}, `raw#${m.source}`) : null),
    textBlock(text), ...refs.map((ref) => originalsToggle(traceId, ref)));
  // The messages are drawn only once asked for (a long session's prompt is pages long); open
  // stays open through the live updates.
  const key = `${traceId}:${call}`;
  const fill = (details) => {
    if (details.open && details.childElementCount === 1) details.append(...messages.map(row));
    if (details.open) state.openPrompts.add(key);
    else state.openPrompts.delete(key);
  };
  const details = el('details', { ontoggle: (e) => fill(e.currentTarget) },
    el('summary', { 'data-focus-key': 'prompt' }, `Show its ${plural(messages.length, 'message')}`));
  if (state.openPrompts.has(key)) {
    details.open = true;
    fill(details);
  }
  return el('section', { class: 'panel', id: 'prompt', 'aria-label': 'Prompt' },
    el('h2', {}, `The prompt of call ${call}${call === newest ? ' (the newest)' : ''}, as the model saw it`),
    el('p', { class: 'hint' }, `${prompt.tokens.toLocaleString('en')} tokens in ${plural(messages.length, 'message')}`
      + (compressed ? `; ${plural(compressed, 'compressed part')} among them, each naming its originals (raw#…), which the model can recall and you can expand here.` : '; nothing in it is compressed.')),
    details);
}

/** A button that shows (and hides) the originals a reference names, as `recall` gives them back. */
function originalsToggle(traceId, ref) {
  const key = `${traceId}:${ref}`;
  const holder = el('div', {});
  const label = `Expand raw#${ref}`;
  const button = el('button', { class: 'link expand', type: 'button', 'aria-expanded': 'false', onclick: () => toggle() }, label);
  async function toggle(open = !state.expanded.has(key)) {
    if (!open) {
      state.expanded.delete(key);
      holder.replaceChildren();
      button.textContent = label;
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    try {
      const page = state.expanded.get(key) ?? await api(`api/traces/${encodeURIComponent(traceId)}/originals?ref=${encodeURIComponent(ref)}`);
      state.expanded.set(key, page);
      holder.replaceChildren(el('div', { class: 'originals' }, ...page.originals.map((o) => el('div', { class: 'msg original' },
        el('div', { class: 'head' }, el('span', { class: 'role' }, `raw#${o.message_id}`), el('span', {}, o.description)), textBlock(o.text)))));
      button.textContent = `Hide raw#${ref}`;
      button.setAttribute('aria-expanded', 'true');
    } catch (error) {
      say(error.message, true);
    }
  }
  if (state.expanded.has(key)) toggle(true);
  return el('div', {}, button, holder);
}

async function searchView(query, generation) {
  document.getElementById('q').value = query;
  const [page, report] = await Promise.all([api(`api/search?q=${encodeURIComponent(query)}`), api('api/stats')]);
  const title = (id) => report.sessions.find((s) => s.trace_id === id || s.earlier.includes(id))?.title || id;
  const mark = (text) => {
    const at = text.toLowerCase().indexOf(query.toLowerCase());
    return at < 0 ? [text] : [text.slice(0, at), el('mark', {}, text.slice(at, at + query.length)), text.slice(at + query.length)];
  };
  show(generation, JSON.stringify(page), () => [
    el('h2', {}, `${page.hits.length}${page.more ? '+' : ''} message${page.hits.length === 1 ? '' : 's'} holding “${query}”`),
    page.hits.length === 0 ? el('p', { class: 'empty' }, 'Nothing in the raw traces holds it. The search reads every recorded message in full, dropped outputs included.') : null,
    el('ol', { class: 'hits' }, ...page.hits.map((h) => el('li', {},
      sessionLink(h.trace_id, `${title(h.trace_id)}${h.call ? `, call ${h.call}` : ''}`, h.call), ` · raw#${h.message_id} · ${h.description}`,
      el('div', { class: 'excerpt' }, ...mark(h.excerpt)), originalsToggle(h.trace_id, h.message_id)))),
    ...(page.notes ?? []).map((n) => el('p', { class: 'hint' }, `Note: ${n}`)),
  ]);
  say('');
}
