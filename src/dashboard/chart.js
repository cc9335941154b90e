// The chart of prompt tokens per call: one bar per replayed call (amber when the call rewrote
// earlier prompt), the unmanaged prompt (the recorded history) as a grey line over them, the
// window as a dashed line (when there is one); a click selects the call. Past MAX_BARS calls, a bar
// stands for a group of calls. The playground and the dashboard both draw with it.
import { kilo } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 1000;
const H = 160;
const PAD = { left: 44, right: 8, top: 8, bottom: 18 };

/** At most this many bars: a longer run is drawn in groups of calls. */
const MAX_BARS = 1000;

/** Consecutive calls `per` at a time: a group's tokens are its largest, its rewrites all of theirs. */
function groups(calls, per) {
  const out = [];
  for (let first = 0; first < calls.length; first += per) {
    const group = calls.slice(first, first + per);
    out.push({ first, count: group.length, number: group[0].number ?? first,
      tokens: Math.max(...group.map((c) => c.tokens)), raw_tokens: Math.max(...group.map((c) => c.raw_tokens ?? 0)),
      rewrites: group.flatMap((c) => c.rewrites), cut: group.filter((c) => c.cut).map((c) => c.cut) });
  }
  return out;
}

function svg(tag, attributes) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  return node;
}

/** Draw `calls` (CallView-like: tokens, rewrites, raw_tokens?, number? (from 0 when absent), cut? (why the
 * call got no whole reply)) of `total` into `container`;
 * `window` may be Infinity (none drawn). */
export function renderChart(container, calls, total, selected, window, onSelect) {
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', tabindex: 0, 'data-focus-key': 'chart',
    'aria-label': `prompt tokens of ${calls.length} of ${total} calls; the left and right arrow keys select a call` });
  root.addEventListener('keydown', (event) => {
    const step = { ArrowLeft: -1, ArrowRight: 1 }[event.key];
    if (!step || calls.length === 0) return;
    event.preventDefault();
    onSelect(Math.min(calls.length - 1, Math.max(0, (selected < 0 ? calls.length : selected) + step)));
  });
  const hadFocus = container.contains(document.activeElement);
  const peak = Math.max(1, ...calls.map((c) => c.tokens));
  const rawPeak = Math.max(0, ...calls.map((c) => c.raw_tokens ?? 0));
  const hasWindow = Number.isFinite(window);
  const top = Math.max(peak, rawPeak, Math.min(window, peak * 1.25));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const y = (tokens) => PAD.top + plotH - (tokens / top) * plotH;
  for (const tick of [0, top / 2, top]) {
    const label = svg('text', { x: 2, y: y(tick) + 3 });
    label.textContent = kilo(Math.round(tick));
    root.append(label);
  }
  if (hasWindow && window <= top) root.append(svg('line', { class: 'window', x1: PAD.left, x2: W - PAD.right, y1: y(window), y2: y(window) }));
  const per = Math.max(1, Math.ceil(Math.max(total, calls.length) / MAX_BARS));
  const step = plotW / Math.max(1, Math.ceil(total / per));
  const bars = groups(calls, per);
  bars.forEach((bar, i) => {
    const height = Math.max(1, (bar.tokens / top) * plotH);
    const chosen = selected >= bar.first && selected < bar.first + bar.count;
    const classes = ['bar', bar.rewrites.length > 0 ? 'rewrite' : '', bar.cut.length > 0 ? 'cut' : '', chosen ? 'selected' : ''].filter(Boolean);
    // A call cut short is marked over the plot's whole height, however small its bar.
    if (bar.cut.length) {
      const band = svg('rect', { class: 'cut-band', x: PAD.left + i * step, y: PAD.top, width: Math.max(1, step * 0.8), height: plotH });
      band.addEventListener('click', () => onSelect(bar.first));
      root.append(band);
    }
    const rect = svg('rect', { class: classes.join(' '), x: PAD.left + i * step, y: PAD.top + plotH - height,
      width: Math.max(1, step * 0.8), height, 'data-call': bar.first });
    const title = svg('title', {});
    const which = bar.count > 1 ? `calls ${bar.number}–${bar.number + bar.count - 1}: up to` : `call ${bar.number}:`;
    title.textContent = `${which} ${bar.tokens} tokens${bar.rewrites.length ? `, rewrote ${bar.rewrites.map((r) => r.mechanism ?? r).join(', ')}` : ''}`
      + (bar.cut.length ? `; cut short: ${bar.cut.join('; ')}` : '');
    rect.append(title);
    rect.addEventListener('click', () => onSelect(bar.first));
    root.append(rect);
  });
  if (rawPeak > 0) {
    const points = bars.map((b, i) => `${PAD.left + (i + 0.4) * step},${y(b.raw_tokens)}`).join(' ');
    root.append(svg('polyline', { class: 'raw', points, fill: 'none' }));
  }
  const axis = svg('text', { x: PAD.left, y: H - 4 });
  const first = calls[0]?.number ?? 0;
  axis.textContent = `calls ${first}–${first + Math.max(0, total - 1)}; peak ${kilo(peak)} tokens (unmanaged ${kilo(rawPeak)})`
    + (hasWindow ? `; window ${kilo(window)}` : '') + (per > 1 ? `; ${per} calls a bar, each its largest` : '');
  root.append(axis);
  container.replaceChildren(root);
  if (hadFocus) root.focus();
}
