// What the proxy saved a session, from its calls.jsonl: prompt tokens the agent sent against what
// the upstream received, the provider-reported cached share, and the dollars of both as the proxy
// recorded each call, summed and worded by the engine (`callTotals`: `workbench stats` and the
// dashboard show the same words). Pure once the engine is loaded.
import { type CallTotals, type ProxyCallRecord, callTotals } from 'context-workbench';

export type { CallTotals };

/** The sums over every call of one trace, as `workbench stats` counts them. */
export function savingsOf(calls: ProxyCallRecord[]): CallTotals {
  return callTotals(calls);
}

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
