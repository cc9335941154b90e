//! `workbench llm-check`: send one short prompt to the configured LLM, so a user can see that
//! summaries will work before a long run depends on them.

use std::process::ExitCode;

use context_workbench::host::{ChatMessage, CompletionRequest};
use context_workbench::{Config, Engine};
use workbench_cli::native::{LlmEndpoint, NativeHost, OpenAiCompatibleClient, WorkspaceFs};

pub fn run(config: Config, url: Option<String>, model: Option<String>, prompt: String) -> ExitCode {
    let fail = |message: String| {
        eprintln!("workbench: {message}");
        ExitCode::FAILURE
    };
    let endpoint = match LlmEndpoint::from_flags_and_env(url, model, |k| std::env::var(k).ok()) {
        Ok(endpoint) => endpoint,
        Err(e) => return fail(e.message),
    };
    let fs = match WorkspaceFs::new(".") {
        Ok(fs) => fs,
        Err(e) => return fail(e.message),
    };
    let engine = Engine::new(NativeHost::new(fs, endpoint.map(OpenAiCompatibleClient::new)), config);
    let request = CompletionRequest {
        messages: vec![ChatMessage { role: "user".into(), content: prompt }],
        max_output_tokens: Some(64),
        timeout_ms: None,
        purpose: "llm_check".into(),
    };
    match pollster::block_on(engine.complete(request)) {
        Ok(reply) => {
            println!("{}", reply.text);
            match reply.usage {
                Some(u) => println!(
                    "usage: {} prompt, {} completion, {} cached",
                    u.prompt_tokens, u.completion_tokens, u.cached_tokens
                ),
                None => println!("usage: not reported"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{e} [{}]", e.code())),
    }
}
