// Browsers: the .wasm files and the rank files are fetched from beside this module unless init()
// names other sources. The HTTP cache keeps the 1.2 MB o200k_base rank file after the first visit.
import { compileWasm, registerPlatform, type Encoding } from './platform.js';

const here = (name: string) => new URL(name, import.meta.url);

registerPlatform({
  defaultWasm: async () => here('./wasm/context_workbench_bg.wasm'),
  // The glue fetches URLs itself, compiling while it downloads.
  wasmSource: async (source) => source,
  defaultRanks: (encoding: Encoding) => here(`./ranks/${encoding}.ranks`),
  compileCounter: async () => {
    const response = await fetch(here('./count.wasm'));
    // Compiled while it downloads when served as application/wasm (streaming requires it).
    const streams = response.ok && response.headers.get('Content-Type')?.startsWith('application/wasm');
    return streams ? WebAssembly.compileStreaming(response) : compileWasm(response);
  },
  read: async (source) => {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${response.url || String(source)}`);
    return new Uint8Array(await response.arrayBuffer());
  },
});
