// Counting from a page's first line, before any engine (the package's `./count` entry: this
// module, the estimate's, and the platform's; nothing of the engine's). `measureTokens` gives the
// engine's calibrated estimate, marked `estimated: true`, until `loadEncoding` has loaded the
// counting module and the encoding's ranks, then exact counts.
// - The estimate is the engine's own source (crates/tokens/src/estimate.rs) built alone into a
//   2 KB module with no imports (crates/estimate-wasm, embedded by scripts/build.mjs),
//   instantiated synchronously on first use: the figures the engine gives while it estimates.
// - Exact counts come from the engine's tokenizer built alone (crates/count-wasm, dist/count.wasm,
//   0.13 MB gzipped against the engine's 1.57 MB), compiled while the rank file downloads.
// An engine whose ranks are in counts for `measureTokens` too, until that module is loaded.
import { ESTIMATE_WASM } from './estimate-wasm.js';
import { ContextWorkbenchError } from './errors.js';
import {
  ENCODINGS, compileWasm, failure, rankFailure, rankFile, requirePlatform, type Encoding, type WasmSource,
} from './platform.js';
import type { TokenCount } from './types.js';

export { ENCODINGS, type Encoding } from './platform.js';

interface EstimateModule {
  memory: WebAssembly.Memory;
  /** The address of room for `len` bytes (0 when the memory cannot grow). */
  input(len: number): number;
  /** The estimate of the `len` bytes written there. */
  estimate(len: number): number;
}

/** crates/count-wasm's exports; an encoding is its index in ENCODINGS. */
interface CountModule {
  memory: WebAssembly.Memory;
  /** The address of room for `len` bytes, valid until the next call (0 when the memory cannot grow). */
  input(len: number): number;
  /** Build the character classes the text is cut by (while the rank file downloads). */
  prepare(encoding: number): void;
  /** Load the `len` bytes at `input` as a rank file: 0, or the length of the error's message. */
  load(encoding: number, len: number): number;
  /** Where the message of the last failed `load` is. */
  message(): number;
  /** The exact tokens of the `len` bytes of UTF-8 at `input` (2^32 - 1 while not loaded). */
  count(encoding: number, len: number): number;
}

let estimator: EstimateModule | undefined;
let counter: Promise<CountModule> | undefined;
/** The counting module, once an encoding is loaded into it, and the encodings it counts. */
let exact: { module: CountModule; encodings: Set<Encoding> } | undefined;
const pendingEncodings = new Map<Encoding, Promise<void>>();
/** The engine, once init() has loaded it: its count (estimating while its ranks are not in) and
 * whether it counts an encoding exactly. */
let engine: { count(encoding: Encoding, text: string): TokenCount; exact(encoding: Encoding): boolean } | undefined;
const utf8 = new TextEncoder();

/** Where `loadEncoding` finds its files, when not beside the package's modules (a bundled app). */
export interface CountSources {
  /** The counting module, `count.wasm` (the package exports it as `context-workbench/count.wasm`). */
  wasm?: WasmSource;
}

/**
 * Tokens of `text` in `encoding` (o200k_base by default), usable at once, before `init()`:
 * `estimated: true` until the encoding is loaded (`loadEncoding`, or an engine's ranks), exact
 * after. Never persist an estimate.
 */
export function measureTokens(text: string, encoding: Encoding = 'o200k_base'): TokenCount {
  const index = encodingIndex(encoding);
  if (exact?.encodings.has(encoding)) {
    try {
      return { tokens: countExactly(exact.module, index, text), estimated: false };
    } catch (error) {
      if (!(error instanceof WebAssembly.RuntimeError)) throw error;
      // The module trapped (out of memory): it is dropped, and a later loadEncoding starts anew.
      exact = counter = undefined;
      pendingEncodings.clear();
    }
  }
  return engine?.count(encoding, text) ?? { tokens: estimateTokens(text), estimated: true };
}

/**
 * Load the counting module and `encoding`'s rank file, both at once (once per encoding; a failed
 * load is tried again on the next call): resolves when `measureTokens` counts `encoding` exactly
 * (at once when an engine already does), without loading the engine. Rejects naming the file that
 * failed: `invalid_input` for a rank file that is not the official one, `ranks_not_loaded` for one
 * that could not be read, `init_failed` for the module. The rank file is the one `init({ ranks })`
 * names, else the package's; an engine loading the same encoding meanwhile shares the read.
 */
export function loadEncoding(encoding: Encoding = 'o200k_base', sources: CountSources = {}): Promise<void> {
  let index: number;
  try {
    index = encodingIndex(encoding);
    if (exact?.encodings.has(encoding) || engine?.exact(encoding)) return Promise.resolve();
  } catch (error) {
    return Promise.reject(error);
  }
  let pending = pendingEncodings.get(encoding);
  if (!pending) {
    pending = (async () => {
      const file = rankFile(encoding);
      file.catch(() => {});
      const module = await countModule(sources.wasm);
      module.prepare(index);
      const bytes = await file;
      const at = module.input(bytes.length); // may grow the memory: its buffer is read after
      if (at === 0) throw rankFailure(encoding, 'internal', new Error(`no memory for ${bytes.length} bytes`));
      new Uint8Array(module.memory.buffer, at, bytes.length).set(bytes);
      const refused = module.load(index, bytes.length);
      if (refused !== 0) {
        const message = new TextDecoder().decode(new Uint8Array(module.memory.buffer, module.message(), refused));
        throw rankFailure(encoding, 'invalid_input', new ContextWorkbenchError('invalid_input', message));
      }
      exact ??= { module, encodings: new Set() };
      exact.encodings.add(encoding);
    })();
    pending.catch(() => pendingEncodings.delete(encoding));
    pendingEncodings.set(encoding, pending);
  }
  return pending;
}

/** Called by init() once the engine is loaded: it counts for `measureTokens` where the counting
 * module does not. */
export function countWithEngine(count: (encoding: Encoding, text: string) => TokenCount, exact: (encoding: Encoding) => boolean): void {
  engine = { count, exact };
}

/** The counting module, compiled and instantiated once (again after a failure). */
function countModule(source: WasmSource | undefined): Promise<CountModule> {
  counter ??= (source === undefined ? requirePlatform().compileCounter() : compileWasm(source))
    .then((module) => WebAssembly.instantiate(module))
    .then((instance) => instance.exports as unknown as CountModule)
    .catch((error) => {
      counter = undefined;
      throw failure('init_failed', 'the counting module (count.wasm) could not be loaded', error);
    });
  return counter;
}

function encodingIndex(encoding: Encoding): number {
  const index = ENCODINGS.indexOf(encoding);
  if (index < 0) {
    throw new ContextWorkbenchError('invalid_input', `unknown encoding \`${encoding}\`; use ${ENCODINGS.join(' or ')}`);
  }
  return index;
}

function countExactly(module: CountModule, encoding: number, text: string): number {
  const tokens = module.count(encoding, written(module, text, 'count')) >>> 0;
  // 2^32 - 1: not loaded, 2^32 - 2: not UTF-8; neither can happen here.
  if (tokens >= 0xffff_fffe) throw new ContextWorkbenchError('internal', `the counting module refused a text (${tokens})`);
  return tokens;
}

function estimateTokens(text: string): number {
  estimator ??= new WebAssembly.Instance(new WebAssembly.Module(ESTIMATE_WASM)).exports as unknown as EstimateModule;
  return estimator.estimate(written(estimator, text, 'estimate')) >>> 0;
}

/** Write `text` as UTF-8 at the module's `input` address; the bytes written. */
function written(module: { memory: WebAssembly.Memory; input(len: number): number }, text: string, what: string): number {
  // UTF-8 takes at most three bytes per UTF-16 unit.
  const room = text.length * 3;
  const at = module.input(room); // may grow the memory: its buffer is read after
  if (at === 0) throw new ContextWorkbenchError('invalid_input', `a text of ${text.length} characters is too long to ${what}`);
  return utf8.encodeInto(text, new Uint8Array(module.memory.buffer, at, room)).written;
}
