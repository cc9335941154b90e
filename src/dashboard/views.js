// The raw trace, the prompt view of one call (compressed blocks highlighted, expandable to the
// raw messages they replaced) and the state board.
import { el, kilo } from './dom.js';

/** Characters of a message shown before "show all". */
const PREVIEW_CHARS = 1200;

/** A recorded message as one text, as the replay flattens it (reasoning left out). */
export function flatten(message) {
  const parts = [];
  for (const part of message.content) {
    if (part.type === 'text') parts.push(part.text);
    else if (part.type === 'tool_call') parts.push(`${part.name}(${part.arguments})`);
    else if (part.type === 'tool_result') parts.push(part.stderr ? `${part.output}\n${part.stderr}` : part.output);
  }
  return parts.join('\n');
}

/** A text in a <pre>, cut to a preview with a button that shows the rest. */
export function textBlock(text) {
  const pre = el('pre', {}, text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text);
  if (text.length <= PREVIEW_CHARS) return pre;
  const more = el('button', { class: 'link', type: 'button', onclick: () => {
    pre.textContent = text;
    more.remove();
  } }, `show all ${text.length.toLocaleString('en')} characters`);
  return el('div', {}, pre, more);
}

/** One raw message row; `future` when the selected call had not seen it yet. */
function rawRow(message, index, future) {
  return el('div', { class: `msg raw${future ? ' future' : ''}`, 'data-index': index },
    el('div', { class: 'head' }, el('span', { class: 'role' }, `#${index} ${message.role}`),
      el('span', {}, message.description), el('span', { class: 'meta' }, message.tokens ? `${kilo(message.tokens)} tok` : `${kilo(flatten(message).length)} chars`)),
    textBlock(flatten(message)));
}

/** The raw trace, dimmed past the messages the selected call's prompt held. */
export function renderRaw(container, raw, history) {
  container.replaceChildren(...raw.map((m, i) => rawRow(m, i, i >= history)));
}

/** The prompt of `call` as the engine assembled it; blocks expand to their raw originals. */
export function renderPrompt(container, call, texts, raw) {
  if (!call) {
    container.replaceChildren();
    return;
  }
  const blocks = call.messages.filter((m) => m.kind === 'block').length;
  const compacted = blocks === 0 ? 'none compacted into blocks yet'
    : `${blocks} compressed block${blocks === 1 ? '' : 's'} among them`;
  const head = el('div', { class: 'call-head' },
    `call ${call.call}: ${call.tokens.toLocaleString('en')} tokens, ${call.expected_cached_tokens.toLocaleString('en')} `
    + `expected cached; ${call.messages.length} messages sent for the ${call.history} recorded so far, ${compacted}`
    + (call.rewrites.length ? `; rewrote earlier prompt (${call.rewrites.map((r) => r.mechanism).join(', ')})` : ''));
  const notes = [...call.notes, ...(call.fallback ? [call.fallback] : [])].map((n) => el('div', { class: 'call-head' }, n));
  const rows = call.messages.map((m) => {
    const where = m.source !== undefined ? ` · raw #${m.source}${m.altered ? ' (altered)' : ''}` : '';
    const row = el('div', { class: `msg kind-${m.kind}`, 'data-kind': m.kind },
      el('div', { class: 'head' }, el('span', { class: 'role' }, m.role), el('span', { class: 'badge' }, m.kind),
        el('span', { class: 'meta' }, `${kilo(m.tokens)} tok${where}`)),
      textBlock(texts[m.text] ?? ''));
    if (m.replaces) row.append(originalsToggle(m.replaces, raw));
    return row;
  });
  container.replaceChildren(head, ...notes, ...rows);
}

/** The button under a block or summary that shows the raw messages it stands for. */
function originalsToggle([start, end], raw) {
  const holder = el('div', {});
  const button = el('button', { class: 'link originals-toggle', type: 'button', onclick: () => {
    if (holder.firstChild) {
      holder.replaceChildren();
      button.textContent = label;
      return;
    }
    holder.replaceChildren(el('div', { class: 'originals' }, ...raw.slice(start, end).map((m, i) => rawRow(m, start + i, false))));
    button.textContent = 'hide the raw originals';
  } });
  const label = `show the ${end - start} raw messages it replaced (#${start}–#${end - 1})`;
  button.textContent = label;
  return el('div', {}, button, holder);
}

/** The state board (R5.2): goal, facts with evidence, anchors, assertions, questions, actions. */
export function renderBoard(container, board) {
  if (!board || board.version === 0) {
    container.replaceChildren(el('p', { class: 'empty' }, 'Nothing on the board yet: the engine writes down the goal, facts and next steps the first time it compacts earlier turns into a block.'));
    return;
  }
  const list = (items, show) => (items.length ? el('ul', {}, ...items.map((i) => el('li', {}, show(i)))) : el('span', { class: 'empty' }, 'none'));
  const entries = [
    ['Version', `v${board.version}`],
    ['Current goal', board.current_goal || '—'],
    ['Status', board.status || '—'],
    ['Confirmed facts', list(board.confirmed_facts, (f) => `${f.text} [${f.evidence.join(', ')}]`)],
    ['Anchors', list(board.anchors, (a) => el('span', {}, `${a.path}:L${a.start_line}-L${a.end_line}`, el('pre', {}, a.snippet)))],
    ['Exec assertions', list(board.exec_assertions, (a) => a)],
    ['Open questions', list(board.open_questions, (q) => q)],
    ['Next actions', list(board.next_actions, (a) => a)],
    ['Unknown', list(board.unknown, (u) => u)],
    ['Conflicts', list(board.conflicts, (c) => c)],
  ];
  container.replaceChildren(el('div', { class: 'board' },
    el('dl', {}, ...entries.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))));
}
