// One small helper to build DOM: el('div', { class: 'x', onclick }, 'text', child …).

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === '') continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Token counts as the chart and panels show them: `950`, `12.3k`, `1.0M`, `2.5G` (a count that
 * would round up to 1000 of a unit takes the next one: 999,960 is `1.0M`, not `1000.0k`). */
export function kilo(n) {
  if (n < 1000) return String(n);
  const [unit, size] = [['G', 1e9], ['M', 1e6], ['k', 1e3]].find(([, size]) => n >= size * 0.99995) ?? ['k', 1e3];
  return `${(n / size).toFixed(1)}${unit}`;
}

/** A sum in dollars as the engine writes it (`proxy::stats::usd`; the same cases as its test):
 * `$0.0042`, `$0.139`, `$12.40`, the sign left to the words around it. */
export function usd(value) {
  const abs = Math.abs(value);
  return `$${abs.toFixed(abs < 0.01 ? 4 : abs < 10 ? 3 : 2)}`;
}
