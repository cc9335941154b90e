// The npm package's proxy server (`context-workbench/proxy`, node:http): imported by the desktop
// entry only, so the web bundle never pulls in Node's server modules.
import type { StartProxy } from './proxyApi';

export const startPackageProxy: StartProxy = async (options) => {
  let loaded: { startProxy?: StartProxy };
  try {
    // Inside try: a package without the proxy fails here with a message, not at load.
    loaded = require('context-workbench/proxy');
  } catch (e) {
    throw Object.assign(new Error(`this build has no proxy: the context-workbench package it was built with lacks context-workbench/proxy (${e instanceof Error ? e.message : String(e)})`), { code: 'unavailable' });
  }
  if (typeof loaded.startProxy !== 'function') throw Object.assign(new Error('context-workbench/proxy has no startProxy'), { code: 'unavailable' });
  return loaded.startProxy(options);
};
