// Node: the .wasm and the rank files are read from the package's own dist/ folder, so
// `await ContextEngine.create(memoryHost())` needs no set-up. init() may still name other
// sources (a bundled VS Code extension that ships the files elsewhere, say).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileWasm, registerPlatform, type Encoding } from './platform.js';

const here = (name: string) => new URL(name, import.meta.url);

const isLocation = (source: unknown): source is URL | string => source instanceof URL || typeof source === 'string';

registerPlatform({
  defaultWasm: async () => readFile(here('./wasm/context_workbench_bg.wasm')),
  // Node's fetch cannot read files: a URL or path is read into bytes here.
  wasmSource: async (source) => (isLocation(source) ? read(source) : source),
  defaultRanks: (encoding: Encoding) => here(`./ranks/${encoding}.ranks`),
  compileCounter: () => compileWasm(here('./count.wasm')),
  read,
});

/** Bytes from a file, http(s) or data URL, or a file path (relative to the working directory;
 * `#`, `%` and `C:\` in it are path characters, not URL syntax). */
async function read(source: URL | string): Promise<Uint8Array> {
  const url = source instanceof URL ? source
    : /^(https?|file|data):/i.test(source) ? new URL(source) : pathToFileURL(path.resolve(source));
  if (url.protocol === 'file:') return readFile(fileURLToPath(url));
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  return new Uint8Array(await response.arrayBuffer());
}
