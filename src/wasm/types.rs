//! TypeScript declarations for what crosses the boundary and is not generated from a Rust type
//! (`types_data.rs`), emitted into the `.d.ts`: the `Host` interface JS implements, `Config` as
//! an embedder passes it, a prepared call's request by format, and the proxy's call record
//! (its Rust type is in `src/proxy/`, which this does not derive on). `src/ts_types.rs` checks
//! each against the Rust side.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const HOST_TS: &'static str = r#"
/**
 * What the engine asks of its embedder. Paths are workspace-relative with `/`.
 * Methods may return a Promise or a plain value. To classify a failure, reject with an
 * `Error` whose `code` is one of `not_found` (or `ENOENT`), `outside_workspace`,
 * `llm_not_configured`, `llm`, `timeout`, `io`; anything else is `host_failed`.
 */
export interface Host {
  complete(request: CompletionRequest): Promise<Completion> | Completion;
  readFile(path: string): Promise<FileContent> | FileContent;
  /** `null` when nothing exists at `path`. */
  stat(path: string): Promise<FileStat | null> | FileStat | null;
  writeFile(path: string, data: string): Promise<void> | void;
  appendFile(path: string, data: string): Promise<void> | void;
  rename(from: string, to: string): Promise<void> | void;
  /** Removing a missing file is not an error. */
  remove(path: string): Promise<void> | void;
  listDir(path: string): Promise<DirEntry[]> | DirEntry[];
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Optional: progress of a long operation (a compaction) and notices for the user. */
  progress?(update: Progress): void;
  /** Optional: a goal event (R8.2) as it happens, in id order. */
  event?(event: EngineEvent): void;
  /**
   * Optional: take the lock at `path` (a file, made with its directories) for this process until
   * `unlock` or the process ends; `false` while another live process holds it. Without it every
   * lock is taken (a store no other process shares).
   */
  tryLock?(path: string): Promise<boolean> | boolean;
  /** Optional: let go of a lock `tryLock` took. */
  unlock?(path: string): Promise<void> | void;
}

/**
 * The engine's configuration as an embedder passes it: every field optional, and every field of
 * a section (`prune`, `compress` …); see the README for each one. `ResolvedConfig` is the form
 * with every field set.
 */
export type Config = {
  [K in keyof ResolvedConfig]?: ResolvedConfig[K] extends object ? Partial<ResolvedConfig[K]> : ResolvedConfig[K];
};
"#;

#[wasm_bindgen(typescript_custom_section)]
const CALLS_TS: &'static str = r#"
/** OpenAI chat completions: `{messages, tools?}`. */
export interface OpenAiRequest { messages: Array<Record<string, unknown>>; tools?: Array<Record<string, unknown>>; }
/** Anthropic messages: `{system?, messages, tools?}` with cache breakpoints. */
export interface AnthropicRequest {
  system?: Array<Record<string, unknown>>; messages: Array<Record<string, unknown>>; tools?: Array<Record<string, unknown>>;
}
/** An assembled prompt and its request in one serialization (R2.3). */
export type PreparedCall = Assembly & (
  | { format: "openai"; request: OpenAiRequest }
  | { format: "anthropic"; request: AnthropicRequest }
  | { format: "react"; request: string }
);
/** One line of a proxied session's `calls.jsonl`: what the agent sent, what went upstream, what the provider reported. */
export interface ProxyCallRecord {
  call: number; at_ms: number; model: string; /** The agent as the proxy names it (`Claude Code 2.1.328`), or empty. */ agent: string;
  stream: boolean; /** The engine's prompt went upstream (else `notes` say why not). */ managed: boolean;
  messages: number; new_messages: number; /** Prompt tokens the agent sent. */ client_tokens: number;
  /** Prompt tokens the upstream received. */ prompt_tokens: number; expected_cached_tokens: number;
  first_changed_byte?: number; rewrites: string[];
  /** The engine's price of this call beside the agent's own request's, and the session's totals (managed calls). */
  cost?: CallCost;
  /** The call in dollars beside the agent's own request (absent: a model without a price, or an older record). */
  dollars?: CallDollars; status?: number; completed: boolean;
  usage?: { input_tokens: number; cache_read_tokens: number; cache_write_tokens: number; cache_write_1h_tokens?: number; output_tokens: number };
  notes: string[];
  /** A side call of the session's agent (a title, a classifier's check): sent as it came, counted here; `call` is the session's call it came after. */
  side_call?: boolean;
}
"#;
