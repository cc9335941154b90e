// Loading the engine: the .wasm module and the tokenizer's rank files, which the .wasm does not
// embed (browsers fetch the 1.2 MB binary o200k_base file once and cache it; loading it is a
// copy, a checksum and one pass, not a parse). Each entry point (node.ts, web.ts) registers
// where the files are by default (platform.ts); init() may name other sources.
import initWasm, { loadRanks, measureTokens, prepareEncoding, ranksLoaded } from './wasm/context_workbench.js';
import { countWithEngine } from './count.js';
import {
  failure, rankFailure, rankFile, requirePlatform, setRankSources,
  type Encoding, type RanksSource, type WasmSource,
} from './platform.js';

export { ENCODINGS, type Encoding, type RanksSource, type WasmSource } from './platform.js';

export interface InitOptions {
  /** The engine's .wasm; by default the one beside the package's JS. */
  wasm?: WasmSource;
  /** Rank files by encoding (`o200k_base.ranks` or `.tiktoken`, …); by default the package's own copies.
   * A bare source is o200k_base's. Each is loaded when an engine (or `loadEncoding`) first needs it. */
  ranks?: RanksSource | Partial<Record<Encoding, RanksSource>>;
}

let ready: Promise<void> | undefined;
let loaded = false;
const pendingRanks = new Map<Encoding, Promise<void>>();

/**
 * Load the engine once. Optional in Node (the first engine loads everything from the package);
 * in browsers call it to name other locations, or to start loading early. Calling it again
 * returns the first call's promise.
 */
export function init(options: InitOptions = {}): Promise<void> {
  if (ready) return ready;
  if (options.ranks !== undefined) setRankSources(options.ranks);
  ready = (async () => {
    const p = requirePlatform();
    const wasm = await p.wasmSource(options.wasm ?? (await p.defaultWasm()));
    await initWasm({ module_or_path: await wasm });
    loaded = true;
    countWithEngine(measureTokens, ranksLoaded);
  })().catch((error) => {
    ready = undefined;
    throw failure('init_failed', 'the engine could not be loaded', error);
  });
  return ready;
}

/** Whether the engine is loaded (what needs it synchronously checks this first). */
export function engineLoaded(): boolean {
  return loaded;
}

/** Load the engine and `encoding`'s ranks into it (once; the rank file is read while the .wasm
 * loads): resolves when engines count `encoding` exactly, rejects naming the file that failed. */
export async function ensureEncoding(encoding: Encoding = 'o200k_base'): Promise<void> {
  if (loaded && ranksLoaded(encoding)) return;
  let pending = pendingRanks.get(encoding);
  if (!pending) {
    // Read while the .wasm loads: exact counts need both, and the first counts neither
    // (`measureTokens` estimates meanwhile). Awaited below, unless the engine fails to load first.
    const bytes = rankFile(encoding);
    bytes.catch(() => {});
    pending = (async () => {
      await init();
      // Loading takes the thread a while: what waited for the engine (a first count) goes first.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (ranksLoaded(encoding)) return;
      // The character classes the text is cut by, read while the file is still on its way.
      prepareEncoding(encoding);
      const file = await bytes;
      try {
        loadRanks(encoding, file);
      } catch (error) {
        throw rankFailure(encoding, 'ranks_not_loaded', error);
      }
    })();
    pending.catch(() => pendingRanks.delete(encoding));
    pendingRanks.set(encoding, pending);
  }
  await pending;
}
