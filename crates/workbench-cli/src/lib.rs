//! The native side of Context Workbench: the host the `workbench` CLI runs the engine on (files
//! under a workspace root with `std::fs`, an OpenAI-compatible LLM client, the system clock). The
//! engine itself (`context_workbench`) does no I/O; this crate and the npm package's hosts do.

pub mod native;
