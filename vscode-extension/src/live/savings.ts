// What the proxy saved a session, as the status bar's tooltip and the Prompt View's head say it:
// the engine's sums of its calls.jsonl (`callTotals`: prompt tokens the agent sent against what
// the upstream received, the provider-reported cached share, the dollars of both as the proxy
// recorded each call, and the saving in the words `workbench stats` and the dashboard use) on
// three lines. Pure.
import type { CallTotals } from 'context-workbench';

const percent = (share: number) => `${Math.round(share * 100)}%`;

/** The lines the status bar's tooltip and the Prompt View's head show. */
export function savingsLines(t: CallTotals): string[] {
  if (t.calls + t.side_calls === 0) return ['No call has gone through the proxy yet.'];
  const fewer = t.client_tokens > 0 ? percent(1 - t.prompt_tokens / t.client_tokens) : '0%';
  const cached = t.cached_share === null || t.cached_share === undefined
    ? 'Cached: not reported by the provider'
    : `Cached: ${percent(t.cached_share)} of the prompt tokens, as the provider reported (${t.reported_calls} of ${t.calls + t.side_calls} calls)`;
  const side = t.side_calls === 0 ? '' : ` and ${t.side_calls} side call${t.side_calls === 1 ? '' : 's'}`;
  return [
    `Prompt tokens: the agent sent ${t.client_tokens}, the upstream received ${t.prompt_tokens} (${fewer} fewer) over ${t.calls} call${t.calls === 1 ? '' : 's'}${side}`,
    cached,
    `Cost: ${t.saving_text}`,
  ];
}
