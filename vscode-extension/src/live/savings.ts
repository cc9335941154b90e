// What the proxy saved a session, from its calls.jsonl: prompt tokens the agent sent against what
// the upstream received, the provider-reported cached share, and the cost of both at the
// configured prices (the engine's, with its defaults for what the configuration leaves out), all
// counted by the engine. Pure once the engine is loaded.
import { type Prices, type ProxyCallRecord, callTotals, defaultConfig, resolveConfig } from 'context-workbench';
import { compactCount } from '../views/statusText';
import { errorText } from '../errorText';

export type { Prices };

/**
 * The prices of an engine configuration object (`contextWorkbench.engine`) as the engine reads
 * them; a configuration the engine refuses leaves its default prices, and says why.
 */
export function pricesOf(engineConfig: Record<string, unknown>): { prices: Prices; problem?: string } {
  try {
    return { prices: resolveConfig(engineConfig).prices };
  } catch (e) {
    return { prices: defaultConfig().prices, problem: errorText(e) };
  }
}

export interface Savings {
  calls: number;
  /** Side calls counted with the session (titles, classifier checks): sent as they came. */
  sideCalls: number;
  /** Σ prompt tokens the agent sent, and Σ the upstream received (the engine's counts). */
  sentTokens: number;
  upstreamTokens: number;
  /** 1 − upstream/sent (0 with no calls). */
  tokenSaving: number;
  /** Σ cache_read / Σ prompt tokens over the calls whose usage the provider reported; undefined when none did. */
  cachedShare?: number;
  reportedCalls: number;
  /** Cost of the prompts sent upstream and of the agent's own, in uncached-input-token units. */
  cost: number;
  agentCost: number;
  /** 1 − cost/agentCost (0 when the agent's would have cost nothing). */
  costSaving: number;
}

/** The figures over every call of one trace, by the engine's cost model (`callTotals`, as `workbench stats` counts them). */
export function savingsOf(calls: ProxyCallRecord[], prices: Prices): Savings {
  const t = callTotals(calls, prices);
  return {
    calls: t.calls,
    sideCalls: t.side_calls,
    sentTokens: t.client_tokens,
    upstreamTokens: t.prompt_tokens,
    tokenSaving: t.client_tokens > 0 ? 1 - t.prompt_tokens / t.client_tokens : 0,
    cachedShare: t.cached_share ?? undefined,
    reportedCalls: t.reported_calls,
    cost: t.cost,
    agentCost: t.agent_cost,
    costSaving: t.saving,
  };
}

/** A saving as the dashboard and `workbench stats` say it: `saving 35%`, `saving −4%` when dearer, half a percent rounded away from zero. */
export function savingPercent(saving: number): string {
  const p = Math.sign(saving) * Math.round(Math.abs(saving) * 100);
  return `saving ${p < 0 ? `−${-p}` : p}%`;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;
const units = (n: number) => (n >= 100_000 ? compactCount(Math.round(n)) : n.toFixed(n >= 100 ? 0 : 1));

/** The lines the status bar's tooltip and the Prompt View's head show. */
export function savingsLines(s: Savings, prices: Prices): string[] {
  if (s.calls === 0) return ['No call has gone through the proxy yet.'];
  const cached = s.cachedShare === undefined
    ? 'Cached: not reported by the provider'
    : `Cached: ${percent(s.cachedShare)} of the prompt tokens, as the provider reported (${s.reportedCalls} of ${s.calls} calls)`;
  const side = s.sideCalls === 0 ? '' : ` and ${s.sideCalls} side call${s.sideCalls === 1 ? '' : 's'}`;
  return [
    `Prompt tokens: the agent sent ${s.sentTokens}, the upstream received ${s.upstreamTokens} (${savingPercent(s.tokenSaving)}) over ${s.calls} call${s.calls === 1 ? '' : 's'}${side}`,
    cached,
    `Cost: ${units(s.cost)} against ${units(s.agentCost)} for the agent's own prompts (${savingPercent(s.costSaving)}), in uncached input tokens at cache read ${prices.cache_read}, cache write ${prices.cache_write}`,
  ];
}
