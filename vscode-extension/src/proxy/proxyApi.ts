// The proxy the npm package runs (`context-workbench/proxy`, Node only), as the extension uses it:
// its types only (erased at build), so that only the desktop entry imports the package's server.
import type { ProxyOptions, RunningProxy } from 'context-workbench/proxy';

export type { ProxyOptions, RunningProxy };

/** Rejects with an Error whose `code` is `port_in_use`, `invalid_input`, `invalid_config` or `io`. */
export type StartProxy = (options?: ProxyOptions) => Promise<RunningProxy>;
