// The package's proxy entry (`context-workbench/proxy`, Node only): the engine in front of the
// agents people already use, as `workbench proxy` puts it, from the wasm build.
import '../platform-node.js';

export { startProxy, type ProxyOptions, type RunningProxy } from './start.js';
export type { EngineThreads } from './pool.js';
export type { ProxyCallRecord } from '../types.js';
