// The proxy the npm package runs (`context-workbench/proxy`, Node only), as the extension uses it.
// Declared here so that only the desktop entry imports the package's Node server.

export interface ProxyOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** "URL" (both routes) or "anthropic=URL" / "openai=URL". */
  upstream?: string | string[];
  /** The directory sessions belong to. */
  workspace?: string;
  /** The trace root, relative to `workspace`. */
  store?: string;
  window?: number;
  /** Engine configuration overrides (the package's `Config`). */
  config?: object;
  /** The log lines `workbench proxy` prints on stderr. */
  log?: (line: string) => void;
}

export interface RunningProxy {
  url: string;
  port: number;
  storeDir: string;
  /** Stops accepting, finishes the requests in flight, saves every session. */
  close(): Promise<void>;
}

/** Rejects with an Error whose `code` is `port_in_use`, `invalid_config` or `io`. */
export type StartProxy = (options?: ProxyOptions) => Promise<RunningProxy>;
