// What the proxy saved a session, from its calls.jsonl: prompt tokens the agent sent against what
// the upstream received, the provider-reported cached share, and the cost of both at the
// configured prices (the engine's, with its defaults for what the configuration leaves out).
// Pure once the engine is loaded.
import { type Prices, type ProxyCallRecord, defaultConfig, resolveConfig } from 'context-workbench';
import { compactCount } from '../views/statusText';

export type { Prices };

/**
 * The prices of an engine configuration object (`contextWorkbench.engine`) as the engine reads
 * them; a configuration the engine refuses leaves its default prices, and says why.
 */
export function pricesOf(engineConfig: Record<string, unknown>): { prices: Prices; problem?: string } {
  try {
    return { prices: resolveConfig(engineConfig).prices };
  } catch (e) {
    return { prices: defaultConfig().prices, problem: e instanceof Error ? e.message : String(e) };
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

/**
 * The figures over every call. Costs follow the replay's model (src/replay/mod.rs): each prompt's
 * cached tokens at `cache_read`, the rest written at `cache_write`; replies are the same either way
 * and left out. Upstream, the cached part is the engine's expected one; the agent's own prompt
 * grows by appending, so its cached part is the previous call's prompt (none on the first call).
 * A side call went upstream as the agent sent it: the same uncached cost on both sides.
 */
export function savingsOf(calls: ProxyCallRecord[], prices: Prices): Savings {
  let sent = 0;
  let upstream = 0;
  let cacheRead = 0;
  let reportedPrompt = 0;
  let reportedCalls = 0;
  let cost = 0;
  let agentCost = 0;
  let previous = 0;
  let sideCalls = 0;
  for (const c of calls) {
    sent += c.client_tokens;
    upstream += c.prompt_tokens;
    if (c.side_call) {
      sideCalls++;
      cost += prices.cache_write * c.prompt_tokens;
      agentCost += prices.cache_write * c.client_tokens;
      continue;
    }
    if (c.usage) {
      reportedCalls++;
      cacheRead += c.usage.cache_read_tokens;
      reportedPrompt += c.usage.input_tokens + c.usage.cache_read_tokens + c.usage.cache_write_tokens;
    }
    const cached = Math.min(c.expected_cached_tokens, c.prompt_tokens);
    cost += prices.cache_read * cached + prices.cache_write * (c.prompt_tokens - cached);
    const agentCached = Math.min(previous, c.client_tokens);
    agentCost += prices.cache_read * agentCached + prices.cache_write * (c.client_tokens - agentCached);
    previous = c.client_tokens;
  }
  return {
    calls: calls.length - sideCalls,
    sideCalls,
    sentTokens: sent,
    upstreamTokens: upstream,
    tokenSaving: sent > 0 ? 1 - upstream / sent : 0,
    cachedShare: reportedPrompt > 0 ? cacheRead / reportedPrompt : undefined,
    reportedCalls,
    cost,
    agentCost,
    costSaving: agentCost > 0 ? 1 - cost / agentCost : 0,
  };
}

/** A share as a signed percentage: `−35%` for a saving, `+4%` for a loss, `0%`. */
export function savingPercent(saving: number): string {
  const p = Math.round(saving * 100);
  return p > 0 ? `−${p}%` : p < 0 ? `+${-p}%` : '0%';
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
