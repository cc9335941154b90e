// The engine's facts, read from the wasm rather than copied: the store format version, the
// default configuration (prices included), a configuration resolved against the defaults, the
// rule for workspace paths, what a proxied trace's calls cost and saved, the ids a raw
// reference names, and a text without the agents' reminders.
// Each needs the engine loaded (`await init()` first).
import {
  callTotals as wasmCallTotals, defaultConfig as wasmDefaultConfig, messageIds as wasmMessageIds, normalizeWorkspacePath as wasmNormalizeWorkspacePath,
  resolveConfig as wasmResolveConfig, storeFormatVersion as wasmStoreFormatVersion, withoutReminders as wasmWithoutReminders,
} from './wasm/context_workbench.js';
import type { CallTotals, Prices, ProxyCallRecord, ResolvedConfig } from './wasm/context_workbench.js';
import type { Config } from './types.js';
import { ContextWorkbenchError, asWorkbenchError } from './errors.js';

export type { CallTotals, Prices, ResolvedConfig };

/** The version of the trace store's layout this build writes and the newest it reads. */
export function storeFormatVersion(): number {
  return fromEngine(() => wasmStoreFormatVersion());
}

/** The engine's default configuration, every field present. */
export function defaultConfig(): ResolvedConfig {
  return fromEngine(() => wasmDefaultConfig());
}

/** `config` with the engine's defaults for what it leaves out; `invalid_config` naming the key the engine refuses. */
export function resolveConfig(config?: Config): ResolvedConfig {
  return fromEngine(() => wasmResolveConfig(config));
}

/**
 * The engine's one rule for workspace-relative paths, which every host applies: `path` in its
 * normal form (`a/./b/../c/` → `a/c`, backslashes are separators, the root is `''`);
 * `host_outside_workspace` when it is absolute, a URL, holds a NUL or climbs out.
 */
export function normalizeWorkspacePath(path: string): string {
  return fromEngine(() => wasmNormalizeWorkspacePath(path));
}

/**
 * What the calls of one proxied trace (its `calls.jsonl` records, in order) cost and saved, in
 * dollars as the proxy recorded each call, with the words every view shows (`saving_text`,
 * `saving_brief`, and the editor's three `saving_lines`): `workbench stats` counts the same.
 */
export function callTotals(calls: ProxyCallRecord[]): CallTotals {
  return fromEngine(() => wasmCallTotals(calls));
}

/** The message ids a raw reference names, in order: `m000012`, `raw#m000012`, or a range of one
 * prefix such as a compaction block's `m000022..m000025` (at most as many as `recall` gives at
 * once); `invalid_input` for anything else. */
export function messageIds(reference: string): string[] {
  return fromEngine(() => wasmMessageIds(reference));
}

/** `text` without the `<system-reminder>` blocks agents inject (one cut short runs to the end). */
export function withoutReminders(text: string): string {
  return fromEngine(() => wasmWithoutReminders(text));
}

/** Read from the loaded engine; before `init()` has finished, `not_loaded`. */
function fromEngine<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    // The glue's calls fail with a TypeError while its module is not instantiated.
    if (error instanceof TypeError) throw new ContextWorkbenchError('not_loaded', 'the engine is not loaded yet: `await init()` first');
    throw asWorkbenchError(error);
  }
}
