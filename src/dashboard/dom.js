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

/** Whole thousands as `12.3k`, as the chart and panels show token counts. */
export function kilo(n) {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
