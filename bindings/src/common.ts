// What both entry points export.
export { ContextEngine, type EngineOptions, type EventListener, type ProgressListener } from './engine.js';
export { ReplaySession, MAX_TRAJECTORY_BYTES } from './replay.js';
export { TraceStore, type SessionState, type SessionSummary } from './store.js';
export { callTotals, defaultConfig, messageIds, normalizeWorkspacePath, resolveConfig, storeFormatVersion, withoutReminders, type CallTotals, type Prices, type ResolvedConfig } from './facts.js';
export { messageFromAnthropic, messageFromOpenAi, type AnthropicReplyBlock, type OpenAiReplyMessage } from './replies.js';
export { ContextWorkbenchError } from './errors.js';
export { loadEncoding, measureTokens, type CountSources } from './count.js';
export { init, type Encoding, type InitOptions, type RanksSource, type WasmSource } from './init.js';
export { DEFAULT_HOST_TIMEOUT_MS, HOST_METHODS } from './host.js';
export { memoryHost, type MemoryHost, type MemoryHostOptions } from './hosts/memory.js';
export { openAiCompatibleLlm, type OpenAiLlmOptions } from './hosts/openai.js';
export type { Llm } from './hosts/shared.js';
export type * from './types.js';
