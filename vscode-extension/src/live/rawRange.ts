// The message ids a raw range names: a compaction block's `raw="m000022..m000025"` (branch forms
// `A-m000003` too), expanded so the Prompt View can show each original. Pure.

/** The message ids `range` covers, in order; none for a range that runs backwards or is huge. */
export function idsOfRange(range: string): string[] {
  const [first, last] = range.includes('..') ? range.split('..') : [range, range];
  const a = /^(.*?)(\d+)$/.exec(first);
  const b = /^(.*?)(\d+)$/.exec(last);
  if (!a || !b || a[1] !== b[1]) return first === last ? [first] : [];
  const from = Number(a[2]);
  const to = Number(b[2]);
  if (to < from || to - from > 10_000) return [];
  const ids: string[] = [];
  for (let n = from; n <= to; n++) ids.push(`${a[1]}${String(n).padStart(a[2].length, '0')}`);
  return ids;
}
