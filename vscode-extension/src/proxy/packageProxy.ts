// The npm package's proxy server (`context-workbench/proxy`, node:http): imported by the desktop
// entry only, so the web bundle never pulls in Node's server modules. Its engine threads run the
// bundle's own copy of the package's thread script, with the engine shipped in dist/engine/.
import path from 'node:path';
import { startProxy } from 'context-workbench/proxy';
import type { StartProxy } from './proxyApi';

const engine = (file: string) => path.join(__dirname, 'engine', file);

export const startPackageProxy: StartProxy = (options) => startProxy({
  ...options,
  engineThreads: {
    script: path.join(__dirname, 'proxyWorker.mjs'),
    wasm: engine('context_workbench_bg.wasm'),
    ranks: { o200k_base: engine('o200k_base.ranks'), cl100k_base: engine('cl100k_base.ranks') },
  },
});
