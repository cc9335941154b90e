// The engine's facts, read from the wasm rather than copied: the store format version, the
// default configuration (prices included), and a configuration resolved against the defaults.
// Each needs the engine loaded (`await init()` first).
import { defaultConfig as wasmDefaultConfig, resolveConfig as wasmResolveConfig, storeFormatVersion as wasmStoreFormatVersion } from './wasm/context_workbench.js';
import type { Prices, ResolvedConfig } from './wasm/context_workbench.js';
import type { Config } from './types.js';
import { ContextWorkbenchError, asWorkbenchError } from './errors.js';

export type { Prices, ResolvedConfig };

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
