//! A client for an OpenAI-compatible `/v1/chat/completions` endpoint (OpenAI, vLLM, Ollama,
//! llama.cpp, LiteLLM, OpenRouter …). The API key comes from the environment only and is never
//! printed, not even by `Debug`.

use std::time::Duration;

use serde_json::{Value, json};

use context_workbench::host::{Completion, CompletionRequest, HostError, HostErrorKind, Usage};

/// Where the LLM is: from `--llm-url`/`WORKBENCH_LLM_URL`, `--llm-model`/`WORKBENCH_LLM_MODEL`
/// and `WORKBENCH_LLM_API_KEY`.
#[derive(Clone, PartialEq, Eq)]
pub struct LlmEndpoint {
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl std::fmt::Debug for LlmEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = if self.api_key.is_some() { "<set>" } else { "<none>" };
        f.debug_struct("LlmEndpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &key)
            .finish()
    }
}

impl LlmEndpoint {
    /// Flags win over the environment. `Ok(None)` when no URL is given anywhere.
    pub fn from_flags_and_env(
        url: Option<String>,
        model: Option<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, HostError> {
        let Some(url) = url.or_else(|| env("WORKBENCH_LLM_URL")).filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let model = model.or_else(|| env("WORKBENCH_LLM_MODEL")).filter(|m| !m.is_empty()).ok_or_else(|| {
            HostError::new(
                HostErrorKind::LlmNotConfigured,
                format!("an LLM URL is set ({url}) but no model: set --llm-model or WORKBENCH_LLM_MODEL"),
            )
        })?;
        let api_key = env("WORKBENCH_LLM_API_KEY").filter(|k| !k.is_empty());
        Ok(Some(LlmEndpoint { url, model, api_key }))
    }

    /// The full chat-completions URL: `…/chat/completions` is used as given, `…/v1` gets
    /// `/chat/completions`, a bare server address gets `/v1/chat/completions`.
    pub fn chat_completions_url(&self) -> String {
        let base = self.url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        }
    }
}

#[derive(Debug, Clone)]
pub struct OpenAiCompatibleClient {
    endpoint: LlmEndpoint,
}

/// Used when a request names no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

impl OpenAiCompatibleClient {
    pub fn new(endpoint: LlmEndpoint) -> Self {
        OpenAiCompatibleClient { endpoint }
    }

    /// One blocking completion.
    pub fn complete(&self, request: &CompletionRequest) -> Result<Completion, HostError> {
        let url = self.endpoint.chat_completions_url();
        let timeout = request.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let agent: ureq::Agent =
            ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into();
        let mut body = json!({ "model": self.endpoint.model, "messages": request.messages, "stream": false });
        if let Some(max) = request.max_output_tokens {
            body["max_tokens"] = json!(max);
        }
        let mut call = agent.post(&url).header("Content-Type", "application/json");
        if let Some(key) = &self.endpoint.api_key {
            call = call.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = call.send(body.to_string()).map_err(|e| transport_error(&url, e))?;
        let status = response.status();
        let text = response.body_mut().read_to_string().map_err(|e| transport_error(&url, e))?;
        if !status.is_success() {
            let excerpt: String = text.chars().take(300).collect();
            return Err(HostError::new(HostErrorKind::Llm, format!("LLM endpoint {url} answered {status}: {excerpt}")));
        }
        parse_chat_completion(&text)
            .map_err(|why| HostError::new(HostErrorKind::Llm, format!("LLM endpoint {url}: {why}")))
    }
}

fn transport_error(url: &str, e: ureq::Error) -> HostError {
    let kind = if matches!(e, ureq::Error::Timeout(_)) { HostErrorKind::Timeout } else { HostErrorKind::Llm };
    HostError::new(kind, format!("LLM endpoint {url}: {e}"))
}

/// The text and usage of an OpenAI chat-completions response body.
fn parse_chat_completion(body: &str) -> Result<Completion, String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("response is not JSON: {e}"))?;
    let message = &value["choices"][0]["message"];
    if message.is_null() {
        return Err("response has no choices[0].message".into());
    }
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => return Err(format!("choices[0].message.content is {other}")),
    };
    let u = &value["usage"];
    let usage = u["prompt_tokens"].as_u64().map(|prompt_tokens| Usage {
        prompt_tokens,
        completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        cached_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
    });
    Ok(Completion { text, usage })
}

#[cfg(test)]
mod tests {
    use super::*;
    use context_workbench::host::ChatMessage;
    use context_workbench_testing::serve_once;

    fn request() -> CompletionRequest {
        CompletionRequest {
            messages: vec![ChatMessage { role: "user".into(), content: "hi".into() }],
            max_output_tokens: Some(50),
            timeout_ms: Some(5_000),
            purpose: "test".into(),
        }
    }

    fn endpoint(url: String) -> LlmEndpoint {
        LlmEndpoint { url, model: "scripted".into(), api_key: Some("sk-test-secret".into()) }
    }

    #[test]
    fn completes_against_an_openai_compatible_server() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"hello"}}],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}}}"#;
        let (url, server) = serve_once("200 OK", body);
        let reply = OpenAiCompatibleClient::new(endpoint(url)).complete(&request()).unwrap();
        assert_eq!(reply.text, "hello");
        assert_eq!(reply.usage, Some(Usage { prompt_tokens: 9, completion_tokens: 1, cached_tokens: 8 }));
        let received = server.join().unwrap();
        assert!(received.starts_with("POST /v1/chat/completions "), "{received}");
        assert!(received.contains("Bearer sk-test-secret"));
        assert!(received.contains(r#""model":"scripted""#) && received.contains(r#""max_tokens":50"#));
    }

    #[test]
    fn http_errors_and_bad_bodies_are_llm_errors() {
        let (url, server) = serve_once("500 Internal Server Error", r#"{"error":"overloaded"}"#);
        let err = OpenAiCompatibleClient::new(endpoint(url)).complete(&request()).unwrap_err();
        server.join().unwrap();
        assert_eq!(err.kind, HostErrorKind::Llm);
        assert!(err.message.contains("500") && err.message.contains("overloaded"), "{}", err.message);
        assert!(parse_chat_completion("{}").is_err());
        assert!(parse_chat_completion("not json").is_err());
    }

    #[test]
    fn configuration_from_flags_and_environment() {
        let env = |k: &str| match k {
            "WORKBENCH_LLM_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            "WORKBENCH_LLM_API_KEY" => Some("sk-hidden".to_owned()),
            _ => None,
        };
        assert_eq!(LlmEndpoint::from_flags_and_env(None, None, |_| None).unwrap(), None);
        let err = LlmEndpoint::from_flags_and_env(None, None, env).unwrap_err();
        assert!(err.message.contains("WORKBENCH_LLM_MODEL"));
        let e = LlmEndpoint::from_flags_and_env(None, Some("m".into()), env).unwrap().unwrap();
        assert_eq!(e.chat_completions_url(), "http://127.0.0.1:9/v1/chat/completions");
        assert!(!format!("{e:?}").contains("sk-hidden"));
        let e = LlmEndpoint::from_flags_and_env(Some("http://h:1".into()), Some("m".into()), env).unwrap().unwrap();
        assert_eq!(e.chat_completions_url(), "http://h:1/v1/chat/completions");
    }
}
