// The status bar's words. Pure.

export function compactCount(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

export function statusText(input: { tokens: number; window: number; cachedTokens: number; cachedReported: boolean; model: string }): { text: string; tooltip: string } {
  const share = input.tokens > 0 ? Math.round((100 * Math.min(input.cachedTokens, input.tokens)) / input.tokens) : 0;
  const used = input.window > 0 ? Math.round((100 * input.tokens) / input.window) : 0;
  const text = `${compactCount(input.tokens)}/${compactCount(input.window)} · ${share}% cached`;
  const source = input.cachedReported ? 'as the provider reported' : 'the prefix unchanged since the previous call, in the engine\'s count';
  const tooltip = [
    `Last prompt: ${input.tokens} tokens of a ${input.window}-token window (${used}%)`,
    `Cached: ${input.cachedTokens} tokens (${share}%), ${source}`,
    `Model: ${input.model}`,
    'Click to see the prompt.',
  ].join('\n');
  return { text, tooltip };
}
