// Loading the engine: the .wasm module and the tokenizer's rank files, which the .wasm does not
// embed (browsers fetch the 1.2 MB binary o200k_base file once and cache it; loading it is a
// copy, a checksum and one pass, not a parse). Each entry point (node.ts,
// web.ts) registers where the files are by default; init() may name other sources.
import initWasm, { loadRanks, measureTokens, prepareEncoding, ranksLoaded } from './wasm/context_workbench.js';
import { countWithEngine, type Encoding } from './count.js';
import { ContextWorkbenchError, asWorkbenchError } from './errors.js';

export { ENCODINGS, type Encoding } from './count.js';
/** Where the .wasm comes from: a URL (in Node also a file path), its bytes, a compiled module (or one
 * compiling: a page may start `WebAssembly.compileStreaming` from its first byte), or a fetch Response. */
export type WasmSource = URL | string | BufferSource | WebAssembly.Module | Promise<WebAssembly.Module> | Response | Promise<Response>;
/** Where a rank file comes from: a URL (in Node also a file path), its bytes, or a fetch Response;
 * the binary form (`o200k_base.ranks`, the default) or the official text (`o200k_base.tiktoken`);
 * or a function giving one of those, called only when an engine first needs the encoding. */
export type RanksSource = URL | string | BufferSource | Response | Promise<Response> | (() => Promise<BufferSource | Response>);

export interface InitOptions {
  /** The engine's .wasm; by default the one beside the package's JS. */
  wasm?: WasmSource;
  /** Rank files by encoding (`o200k_base.ranks` or `.tiktoken`, …); by default the package's own copies.
   * A bare source is o200k_base's. Each is loaded when an engine first needs it. */
  ranks?: RanksSource | Partial<Record<Encoding, RanksSource>>;
}

/** What an entry point knows about its platform. */
export interface Platform {
  defaultWasm(): Promise<WasmSource>;
  /** The .wasm source as the glue takes it here (Node reads URLs and paths into bytes). */
  wasmSource(source: WasmSource): Promise<WasmSource>;
  defaultRanks(encoding: Encoding): RanksSource;
  /** Bytes from a URL or path (fetch in browsers; fetch or the file system in Node). */
  read(source: URL | string): Promise<Uint8Array>;
}

let platform: Platform | undefined;
let ready: Promise<void> | undefined;
let loaded = false;
let rankSources: Partial<Record<Encoding, RanksSource>> = {};
const pendingRanks = new Map<Encoding, Promise<void>>();

export function registerPlatform(p: Platform): void {
  platform = p;
}

/**
 * Load the engine once. Optional in Node (the first engine loads everything from the package);
 * in browsers call it to name other locations, or to start loading early. Calling it again
 * returns the first call's promise.
 */
export function init(options: InitOptions = {}): Promise<void> {
  if (ready) return ready;
  const ranks = options.ranks;
  if (ranks !== undefined) {
    rankSources = isRanksMap(ranks) ? { ...ranks } : { o200k_base: ranks };
  }
  ready = (async () => {
    const p = requirePlatform();
    const wasm = await p.wasmSource(options.wasm ?? (await p.defaultWasm()));
    await initWasm({ module_or_path: await wasm });
    loaded = true;
    countWithEngine(measureTokens);
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

/** Load the engine and `encoding`'s ranks (once; the rank file is read while the .wasm loads):
 * resolves when `measureTokens` counts `encoding` exactly, rejects naming the file that failed.
 * The package exports it as `loadEncoding`. */
export async function ensureEncoding(encoding: Encoding = 'o200k_base'): Promise<void> {
  if (loaded && ranksLoaded(encoding)) return;
  let pending = pendingRanks.get(encoding);
  if (!pending) {
    const source = rankSources[encoding] ?? requirePlatform().defaultRanks(encoding);
    const failed = (error: unknown) => failure('ranks_not_loaded', `the ${encoding} rank file ${describe(source)} could not be loaded`, error);
    // Read while the .wasm loads: exact counts need both, and the first counts neither
    // (`measureTokens` estimates meanwhile). Awaited below, unless the engine fails to load first.
    const bytes = bytesOf(source).catch((error) => {
      throw failed(error);
    });
    bytes.catch(() => {});
    pending = (async () => {
      await init();
      // Loading takes the thread a while: what waited for the engine (a first count) goes first.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (ranksLoaded(encoding)) return;
      try {
        // The character classes the text is cut by, read while the file is still on its way.
        prepareEncoding(encoding);
      } catch (error) {
        throw failed(error);
      }
      const file = await bytes;
      try {
        loadRanks(encoding, file);
      } catch (error) {
        throw failed(error);
      }
    })();
    pending.catch(() => pendingRanks.delete(encoding));
    pendingRanks.set(encoding, pending);
  }
  await pending;
}

async function bytesOf(source: RanksSource): Promise<Uint8Array> {
  const resolved = await (typeof source === 'function' ? source() : source);
  if (resolved instanceof Uint8Array) return resolved;
  if (resolved instanceof ArrayBuffer) return new Uint8Array(resolved);
  if (ArrayBuffer.isView(resolved)) return new Uint8Array(resolved.buffer, resolved.byteOffset, resolved.byteLength);
  if (typeof Response !== 'undefined' && resolved instanceof Response) {
    if (!resolved.ok) throw new Error(`HTTP ${resolved.status} for ${resolved.url}`);
    return new Uint8Array(await resolved.arrayBuffer());
  }
  return requirePlatform().read(resolved as URL | string);
}

/** A rank source as an error names it: its URL or path, else what it is. */
function describe(source: RanksSource): string {
  if (source instanceof URL) return source.href;
  if (typeof source === 'string') return source;
  if (typeof Response !== 'undefined' && source instanceof Response) return source.url || '(a fetch response)';
  if (source instanceof Promise) return '(a pending fetch)';
  if (typeof source === 'function') return '(a loader function)';
  return `(${(source as ArrayBufferLike).byteLength ?? '?'} bytes given)`;
}

function isRanksMap(value: InitOptions['ranks']): value is Partial<Record<Encoding, RanksSource>> {
  return typeof value === 'object' && value !== null && ('o200k_base' in value || 'cl100k_base' in value);
}

function requirePlatform(): Platform {
  if (!platform) throw new ContextWorkbenchError('init_failed', 'no platform registered: import the package entry');
  return platform;
}

/** An error of loading: an engine error keeps its code (a damaged rank file is `invalid_input`),
 * anything else (a failed fetch, a missing file) gets `code`. */
function failure(code: string, what: string, error: unknown): ContextWorkbenchError {
  const engineError = error instanceof Error && error.name === 'ContextWorkbenchError';
  const cause = asWorkbenchError(error);
  return new ContextWorkbenchError(engineError ? cause.code : code, `${what}: ${cause.message}`);
}
