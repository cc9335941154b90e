//! TypeScript declarations for what crosses the boundary, emitted into the generated `.d.ts`.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const HOST_TS: &'static str = r#"
/** One message of a completion request: the plain role/content shape every provider accepts. */
export interface ChatMessage { role: string; content: string; }

/** A request to the host's LLM. The host picks the model; the engine says what it needs. */
export interface CompletionRequest {
  messages: ChatMessage[];
  /** Upper bound on the reply's tokens. */
  maxOutputTokens?: number;
  /** How long the engine will wait; give up after it. */
  timeoutMs?: number;
  /** Why the engine asks (`summary`, `state_update`, …). */
  purpose: string;
}

/** Token usage as the provider reported it. */
export interface Usage { promptTokens: number; completionTokens: number; cachedTokens?: number; }

export interface Completion { text: string; usage?: Usage; }
export interface FileContent { text: string; mtimeMs: number; }
export interface FileStat { isDir: boolean; size: number; mtimeMs: number; }
export interface DirEntry { name: string; isDir: boolean; }
/** A step of a long operation (a compaction) or a notice the user should see. */
export interface Progress { operation: string; message: string; done: boolean; }

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
}

/** The engine's configuration; every field is optional (see the README for each one). */
export interface Config {
  encoding?: "o200k_base" | "cl100k_base";
  window?: number;
  compact_threshold?: number;
  max_prompt_tokens?: number | null;
  min_rounds_kept?: number;
  dynamic_tail_budget?: number;
  summary_timeout_ms?: number;
  rehydrate_tokens?: number;
  read_tool?: string | null;
  prices?: { uncached_input?: number; cache_read?: number; cache_write?: number; output?: number };
  prune?: { minimum?: number; protect?: number; protected_tools?: string[] };
  compress?: {
    ls_entries?: number; glob_hits?: number; grep_matches?: number; read_lines?: number; read_share?: number;
    edit_snippet_lines?: number; write_lines?: number; stderr_tail_lines?: number; summary_tokens?: number;
    max_line_chars?: number; budget_share?: number; min_tokens?: number; max_tokens?: number;
    /** Tool name (case-insensitive) → family. */
    tool_families?: Record<string, "ls" | "glob" | "grep" | "read" | "edit" | "write" | "bash" | "todo_write" | "default">;
  };
  workbench?: {
    tail_compaction?: boolean; plan_in_tail?: boolean; todo_probe?: boolean; llm_compactor?: boolean;
    trigger_tool_calls?: number; raw_output_share?: number; keep_turns?: number; min_turns?: number; max_turns?: number;
    block_tokens?: number; anchor_tokens?: number; index_tokens?: number; delta_tokens?: number; min_calls_between_rewrites?: number;
    min_horizon?: number; max_horizon?: number; first_sight_share?: number;
  };
  /** The trace store (R8): where traces are saved, and what is redacted in them. */
  store?: { root?: string; redact?: boolean; redact_patterns?: string[]; name_originals?: boolean; originals_base?: string };
  goals?: {
    max_branches?: number; max_description_chars?: number; max_summary_chars?: number; max_goals?: number; max_depth?: number;
  };
  /** The proxy in front of an agent's provider (`workbench proxy`). */
  proxy?: { max_body_bytes?: number; side_call_tokens?: number; upstream_timeout_ms?: number; max_sessions?: number; body_timeout_ms?: number; shutdown_grace_ms?: number };
}

"#;
