// The npm package's proxy server (`context-workbench/proxy`, node:http): imported by the desktop
// entry only, so the web bundle never pulls in Node's server modules.
import { startProxy } from 'context-workbench/proxy';
import type { StartProxy } from './proxyApi';

export const startPackageProxy: StartProxy = startProxy;
