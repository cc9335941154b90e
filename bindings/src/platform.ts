// What an entry point knows about its platform (platform-node.ts, platform-web.ts register it),
// and the rank files: read once per encoding, whoever needs them first, the counting module
// (count.ts) or the engine (init.ts). Nothing of the engine is imported here.
import { ContextWorkbenchError, asWorkbenchError } from './errors.js';

export type Encoding = 'o200k_base' | 'cl100k_base';
/** The encodings, in the order the counting module numbers them (crates/count-wasm `ENCODINGS`). */
export const ENCODINGS: readonly string[] = ['o200k_base', 'cl100k_base'];

/** Where the .wasm comes from: a URL (in Node also a file path), its bytes, a compiled module (or one
 * compiling: a page may start `WebAssembly.compileStreaming` from its first byte), or a fetch Response. */
export type WasmSource = URL | string | BufferSource | WebAssembly.Module | Promise<WebAssembly.Module> | Response | Promise<Response>;
/** Where a rank file comes from: a URL (in Node also a file path), its bytes, or a fetch Response;
 * the binary form (`o200k_base.ranks`, the default) or the official text (`o200k_base.tiktoken`);
 * or a function giving one of those, called only when the encoding is first needed. */
export type RanksSource = URL | string | BufferSource | Response | Promise<Response> | (() => Promise<BufferSource | Response>);

export interface Platform {
  defaultWasm(): Promise<WasmSource>;
  /** The .wasm source as the glue takes it here (Node reads URLs and paths into bytes). */
  wasmSource(source: WasmSource): Promise<WasmSource>;
  defaultRanks(encoding: Encoding): RanksSource;
  /** The counting module (`count.wasm`), compiling (streamed from the network in browsers). */
  compileCounter(): Promise<WebAssembly.Module>;
  /** Bytes from a URL or path (fetch in browsers; fetch or the file system in Node). */
  read(source: URL | string): Promise<Uint8Array>;
}

let platform: Platform | undefined;
let rankSources: Partial<Record<Encoding, RanksSource>> = {};
const rankFiles = new Map<Encoding, Promise<Uint8Array>>();

export function registerPlatform(p: Platform): void {
  platform = p;
}

export function requirePlatform(): Platform {
  if (!platform) throw new ContextWorkbenchError('init_failed', 'no platform registered: import the package entry');
  return platform;
}

/** A .wasm module from any source the package takes (URLs and paths read by the platform). */
export async function compileWasm(source: WasmSource): Promise<WebAssembly.Module> {
  const resolved = await source;
  if (resolved instanceof WebAssembly.Module) return resolved;
  return WebAssembly.compile((await bytesOf(resolved)) as Uint8Array<ArrayBuffer>);
}

/** Name the rank files (init's `ranks` option); a bare source is o200k_base's. A read of a file
 * named before is not used for them. */
export function setRankSources(ranks: RanksSource | Partial<Record<Encoding, RanksSource>>): void {
  rankSources = isRanksMap(ranks) ? { ...ranks } : { o200k_base: ranks };
  rankFiles.clear();
}

/**
 * The bytes of `encoding`'s rank file, for the counting module and for the engine: one read
 * serves both while it is under way; after it, a file or URL is read again when asked (browsers
 * from their HTTP cache) rather than kept, while the bytes of a Response, which can be read only
 * once, are kept. Rejects with `ranks_not_loaded` naming the file; a failed read is tried again.
 */
export function rankFile(encoding: Encoding): Promise<Uint8Array> {
  let file = rankFiles.get(encoding);
  if (!file) {
    const source = rankSource(encoding);
    const read = (async () => bytesOf(await (typeof source === 'function' ? source() : source)))().catch((error) => {
      throw failure('ranks_not_loaded', `the ${encoding} rank file ${describe(source)} could not be loaded`, error);
    });
    // A Response's body can be read only once: its bytes stay for the other loader.
    const once = source instanceof Promise || (typeof Response !== 'undefined' && source instanceof Response);
    const forget = () => {
      if (rankFiles.get(encoding) === read) rankFiles.delete(encoding);
    };
    read.then(() => once || forget(), forget);
    rankFiles.set(encoding, read);
    file = read;
  }
  return file;
}

/** An error of loading `encoding`'s rank file (its bytes refused), naming it: an engine error
 * keeps its code (a damaged file is `invalid_input`), anything else gets `code`. */
export function rankFailure(encoding: Encoding, code: string, error: unknown): ContextWorkbenchError {
  return failure(code, `the ${encoding} rank file ${describe(rankSource(encoding))} could not be loaded`, error);
}

/** An error of loading `what`: an engine error keeps its code, anything else gets `code`. */
export function failure(code: string, what: string, error: unknown): ContextWorkbenchError {
  const engineError = error instanceof Error && error.name === 'ContextWorkbenchError';
  const cause = asWorkbenchError(error);
  return new ContextWorkbenchError(engineError ? cause.code : code, `${what}: ${cause.message}`);
}

function rankSource(encoding: Encoding): RanksSource {
  return rankSources[encoding] ?? requirePlatform().defaultRanks(encoding);
}

/** The bytes of a source: given, a fetch Response's body, or read from a URL or path. */
async function bytesOf(source: BufferSource | Response | URL | string): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof Response !== 'undefined' && source instanceof Response) {
    if (!source.ok) throw new Error(`HTTP ${source.status} for ${source.url}`);
    return new Uint8Array(await source.arrayBuffer());
  }
  return requirePlatform().read(source as URL | string);
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

function isRanksMap(value: RanksSource | Partial<Record<Encoding, RanksSource>>): value is Partial<Record<Encoding, RanksSource>> {
  return typeof value === 'object' && value !== null && ('o200k_base' in value || 'cl100k_base' in value);
}
