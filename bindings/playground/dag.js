// The goal plan as a DAG (SPEC R9.1, seed 002): nodes are goal results, the edge into a node is
// the work that led to it. Expanding an edge replaces its goal by its sub-goals; a collapsed
// edge shows the goal's cumulative stats, an expanded level its own (self) stats. Abandoned
// goals hang off the path in grey; an exploration's branches run as parallel paths.
import { el } from '../../src/dashboard/dom.js';

/**
 * Render `tree` (the engine's GoalTree) into `container`. `state.expanded` holds the ids of
 * expanded goals; `onChange()` re-renders after a toggle.
 */
export function renderDag(container, tree, state, onChange) {
  container.replaceChildren();
  if (!tree) return;
  const goals = tree.goals ?? [];
  const children = new Map();
  for (const goal of goals) {
    const key = goal.parent_id ?? '';
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(goal);
  }
  const numbers = numbering(children);
  const toggle = (id) => {
    if (state.expanded.has(id)) state.expanded.delete(id);
    else state.expanded.add(id);
    onChange();
  };
  const levels = levelControls(children, state, onChange);
  if (levels) container.append(levels);
  const dag = el('div', { class: 'dag' });
  dag.append(el('div', { class: 'dag-node start', 'data-kind': 'start' }, `START: ${tree.mission || '(no mission)'}`));
  if (goals.length === 0) {
    dag.append(el('p', { class: 'empty' }, 'No plan yet: the agent has not used a plan tool (goal, step, TodoWrite, update_plan).'));
  }
  appendLevel(dag, '', { children, numbers, state, toggle, branches: tree.branches ?? [] });
  container.append(dag);
}

/** The goals under `parent` in order, each an edge and a node, or its expanded sub-goals. */
function appendLevel(into, parent, cx) {
  for (const goal of cx.children.get(parent) ?? []) {
    const subGoals = cx.children.get(goal.id) ?? [];
    const expanded = subGoals.length > 0 && cx.state.expanded.has(goal.id);
    if (goal.status === 'abandoned') {
      into.append(el('div', { class: 'dag-row' }, el('div', { class: 'dag-main' }),
        el('div', { class: 'dag-side' }, edge(goal, subGoals, cx), node(goal, cx))));
    } else if (expanded) {
      const group = el('div', { class: 'dag-group', 'data-goal': goal.id });
      group.append(el('button', { class: 'dag-edge expanded link', type: 'button', title: 'Collapse into one edge',
        onclick: () => cx.toggle(goal.id) }, `− ${cx.numbers.get(goal.id)} ${goal.description}`));
      appendLevel(group, goal.id, cx);
      into.append(group);
    } else {
      into.append(edge(goal, subGoals, cx), node(goal, cx));
    }
    if (goal.type === 'explore_start') into.append(parallel(goal, cx));
  }
}

/** The edge into `goal`: cumulative stats while its sub-goals are folded into it, else its own. */
function edge(goal, subGoals, cx) {
  const folded = subGoals.length > 0;
  const stats = folded ? goal.cumulative_stats : goal.self_stats;
  const work = describeStats(stats);
  const sub = folded ? `${subGoals.length} sub-goals, expand` : '';
  const label = [work ? `${folded ? 'Σ ' : ''}${work}` : '', sub].filter(Boolean).join(' · ') || 'no work recorded yet';
  const attributes = { class: `dag-edge ${folded ? 'collapsed' : 'leaf'}`, type: 'button', 'data-goal': goal.id };
  if (folded) attributes.onclick = () => cx.toggle(goal.id);
  return el('button', attributes, label);
}

function node(goal, cx) {
  const number = cx.numbers.get(goal.id) ?? '';
  const kids = [el('span', { class: 'number' }, number), el('span', { class: 'label' }, goal.description)];
  const outcome = goal.summary ?? goal.merge_summary;
  if (outcome && outcome !== goal.description) kids.push(el('span', { class: 'summary' }, `${goal.status === 'abandoned' ? 'abandoned: ' : ''}${outcome}`));
  return el('div', { class: `dag-node ${goal.status}`, 'data-goal': goal.id, 'data-kind': goal.type }, ...kids);
}

/** An exploration's branches side by side, each with its summary once it finished. */
function parallel(start, cx) {
  const lanes = cx.branches.filter((b) => b.explore_start_id === start.id);
  return el('div', { class: 'dag-parallel' }, ...lanes.map((b) => el('div', { class: 'dag-branch', 'data-branch': b.id },
    el('button', { class: 'dag-edge leaf', type: 'button' }, `branch ${b.id}`),
    el('div', { class: `dag-node ${b.status === 'completed' ? 'completed' : 'in_progress'}` },
      el('span', { class: 'number' }, b.id), el('span', { class: 'label' }, b.description),
      b.summary ? el('span', { class: 'summary' }, b.summary) : ''))));
}

/** Expand every goal above a level, or collapse all; nothing when there is one level. */
function levelControls(children, state, onChange) {
  const depthOf = depths(children);
  const deepest = Math.max(1, ...depthOf.values());
  if (deepest < 2) return undefined;
  const set = (level) => () => {
    state.expanded = new Set([...depthOf].filter(([, d]) => d < level).map(([id]) => id));
    onChange();
  };
  const buttons = [];
  for (let level = 1; level <= deepest; level++) {
    buttons.push(el('button', { type: 'button', class: 'link', onclick: set(level), 'data-level': level }, String(level)));
  }
  return el('div', { class: 'dag-levels' }, 'Show levels:', ...buttons);
}

/** Display numbers of the shown goals (`1`, `2.1` …), abandoned ones skipped as the engine does. */
function numbering(children) {
  const numbers = new Map();
  const walk = (parent, prefix) => {
    let n = 0;
    for (const goal of children.get(parent) ?? []) {
      if (goal.status === 'abandoned') {
        numbers.set(goal.id, '✗');
        continue;
      }
      const number = `${prefix}${++n}`;
      numbers.set(goal.id, number);
      walk(goal.id, `${number}.`);
    }
  };
  walk('', '');
  return numbers;
}

/** Each goal's level, from 1 at the top. */
function depths(children) {
  const out = new Map();
  const walk = (parent, depth) => {
    for (const goal of children.get(parent) ?? []) {
      out.set(goal.id, depth);
      walk(goal.id, depth + 1);
    }
  };
  walk('', 1);
  return out;
}

/** `12 msgs · 3.4k tok · read → edit`; empty when nothing was attributed to the goal. */
export function describeStats(stats) {
  if (!stats || stats.message_count === 0) return '';
  const tokens = stats.total_tokens >= 1000 ? `${(stats.total_tokens / 1000).toFixed(1)}k` : `${stats.total_tokens}`;
  const preview = stats.preview ? ` · ${stats.preview}` : '';
  return `${stats.message_count} msgs · ${tokens} tok${preview}`;
}
