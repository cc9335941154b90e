// Counting from a page's first line, before any engine (the package's `./count` entry: this
// module and the estimate's, nothing of the engine's). `measureTokens` gives the engine's
// calibrated estimate, marked `estimated: true`, until the engine's .wasm and the encoding's
// ranks are loaded (`loadEncoding`), then exact counts. The estimate comes from the engine's own
// source (src/tokens/estimate.rs) built alone into a 2 KB module with no imports
// (crates/estimate-wasm, embedded by scripts/build.mjs), instantiated synchronously on first use:
// the figures the engine gives while it estimates.
import { ESTIMATE_WASM } from './estimate-wasm.js';
import { ContextWorkbenchError } from './errors.js';
import type { TokenCount } from './types.js';

export type Encoding = 'o200k_base' | 'cl100k_base';
export const ENCODINGS: readonly string[] = ['o200k_base', 'cl100k_base'];

interface EstimateModule {
  memory: WebAssembly.Memory;
  /** The address of room for `len` bytes (0 when the memory cannot grow). */
  input(len: number): number;
  /** The estimate of the `len` bytes written there. */
  estimate(len: number): number;
}

let estimator: EstimateModule | undefined;
/** The engine's count, once init() has loaded it (estimating still while the ranks are not in). */
let engineCount: ((encoding: Encoding, text: string) => TokenCount) | undefined;
const utf8 = new TextEncoder();

/**
 * Tokens of `text` in `encoding` (o200k_base by default), usable at once, before `init()`:
 * `estimated: true` while the engine or the encoding's ranks are not loaded (`loadEncoding`
 * loads both), exact after. Never persist an estimate.
 */
export function measureTokens(text: string, encoding: Encoding = 'o200k_base'): TokenCount {
  if (!ENCODINGS.includes(encoding)) {
    throw new ContextWorkbenchError('invalid_input', `unknown encoding \`${encoding}\`; use o200k_base or cl100k_base`);
  }
  return engineCount?.(encoding, text) ?? { tokens: estimateTokens(text), estimated: true };
}

/** Called by init() once the engine is loaded: its counts replace the estimate's module. */
export function countWithEngine(count: (encoding: Encoding, text: string) => TokenCount): void {
  engineCount = count;
}

function estimateTokens(text: string): number {
  estimator ??= new WebAssembly.Instance(new WebAssembly.Module(ESTIMATE_WASM)).exports as unknown as EstimateModule;
  // UTF-8 takes at most three bytes per UTF-16 unit.
  const room = text.length * 3;
  const at = estimator.input(room);
  if (at === 0) throw new ContextWorkbenchError('invalid_input', `a text of ${text.length} characters is too long to estimate`);
  const { written } = utf8.encodeInto(text, new Uint8Array(estimator.memory.buffer, at, room));
  return estimator.estimate(written) >>> 0;
}
