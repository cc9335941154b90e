//! What one proxied call looks like as an OpenTelemetry span: its name, its session's trace,
//! its times and its attributes, with the GenAI semantic conventions (`gen_ai.*`) and the
//! engine's own (`workbench.*`). Pure: the shells hand the description to the OpenTelemetry
//! SDK of their platform, which batches and exports it over OTLP/HTTP (docs/telemetry.md).

use serde::Serialize;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

use super::args::Shell;
use super::record::CallRecord;
use super::record::CostBasis;
use super::route::Provider;
use crate::workbench::cost::CacheTtl;

/// One attribute's value, typed as OTLP types it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(untagged)]
pub enum SpanValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Texts(Vec<String>),
}

/// A finished span to export: a child of its session (`parent_span_id`, a span never exported
/// itself), so every call of a session shares one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CallSpan {
    /// `chat MODEL`, as the GenAI conventions name an inference span.
    pub name: String,
    /// 32 lowercase hex digits, derived from the session's trace id.
    pub trace_id: String,
    /// 16 lowercase hex digits, derived from the session's trace id.
    pub parent_span_id: String,
    /// Milliseconds since the Unix epoch, by the host's clock.
    pub start_ms: u64,
    pub end_ms: u64,
    /// Why the call failed (a status other than 2xx, a reply cut short), for the span's
    /// error status; `None`: it succeeded.
    pub error: Option<String>,
    /// In a fixed order.
    pub attributes: Vec<(String, SpanValue)>,
}

/// The span of `record`, a call of the session `trace_id` to `provider`'s API, whose reply
/// ended at `end_ms` (never before the call began).
pub fn call_span(record: &CallRecord, trace_id: &str, provider: Provider, end_ms: u64) -> CallSpan {
    let mut attributes = Attributes::default();
    let system = system_name(provider);
    attributes.text("gen_ai.operation.name", "chat");
    attributes.text("gen_ai.provider.name", system);
    // The name before the conventions' 1.37 (`gen_ai.provider.name`); many backends read it still.
    attributes.text("gen_ai.system", system);
    attributes.text("gen_ai.request.model", &record.model);
    attributes.text("gen_ai.conversation.id", trace_id);
    if let Some(usage) = record.usage {
        // The conventions count the cached and cache-written tokens among the input tokens.
        let input = usage.input_tokens.saturating_add(usage.cache_read_tokens).saturating_add(usage.cache_write_tokens);
        attributes.int("gen_ai.usage.input_tokens", input);
        attributes.int("gen_ai.usage.output_tokens", usage.output_tokens);
        attributes.int("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens);
        attributes.int("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens);
    }
    if let Some(status) = record.status {
        attributes.int("http.response.status_code", u64::from(status));
    }
    let error = failure(record);
    if let Some(error) = &error {
        attributes.text("error.type", error);
    }
    attributes.int("workbench.call", record.call);
    if !record.agent.is_empty() {
        attributes.text("workbench.agent", &record.agent);
    }
    attributes.push("workbench.managed", SpanValue::Bool(record.managed));
    attributes.push("workbench.side_call", SpanValue::Bool(record.side_call));
    attributes.push("workbench.stream", SpanValue::Bool(record.stream));
    attributes.push("workbench.completed", SpanValue::Bool(record.completed));
    attributes.int("workbench.messages", record.messages as u64);
    attributes.int("workbench.new_messages", record.new_messages as u64);
    attributes.int("workbench.agent_tokens", record.client_tokens as u64);
    attributes.int("workbench.sent_tokens", record.prompt_tokens as u64);
    attributes.int("workbench.expected_cached_tokens", record.expected_cached_tokens as u64);
    if !record.rewrites.is_empty() {
        attributes.push("workbench.rewrites", SpanValue::Texts(record.rewrites.clone()));
    }
    if let Some(cost) = &record.cost {
        let ttl = match cost.cache_ttl {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        };
        attributes.text("workbench.cache_ttl", ttl);
    }
    // The call's dollars as `calls.jsonl` holds them (`super::dollars`): one basis everywhere.
    if let Some(dollars) = &record.dollars {
        attributes.float("workbench.usd.agent", dollars.agent);
        attributes.float("workbench.usd.sent", dollars.sent);
        attributes.float("workbench.usd.saved", dollars.agent - dollars.sent);
        let basis = match dollars.basis {
            CostBasis::Reported => "reported",
            CostBasis::Estimated => "estimated",
            CostBasis::NoModel => "no_model",
        };
        attributes.text("workbench.usd.basis", basis);
        attributes.text("workbench.usd.priced_as", &dollars.priced_as);
        attributes.text("workbench.usd.prices_read_on", &dollars.prices_read_on);
        if dollars.ttl_saving != 0.0 {
            attributes.float("workbench.usd.ttl_saving", dollars.ttl_saving);
        }
    }
    if !record.notes.is_empty() {
        attributes.push("workbench.notes", SpanValue::Texts(record.notes.clone()));
    }
    CallSpan {
        name: format!("chat {}", record.model).trim_end().to_owned(),
        trace_id: format!("{:032x}", xxh3_128(trace_id.as_bytes())),
        parent_span_id: session_span_id(trace_id),
        start_ms: record.at_ms,
        end_ms: end_ms.max(record.at_ms),
        error,
        attributes: attributes.0,
    }
}

/// Where the spans go: `url` (the config's `proxy.otlp`, or `--otlp`) as the collector's
/// traces URL, `/v1/traces` added to a base address; `None` when it is empty. The error says
/// what is wrong with it.
pub fn traces_url(url: &str) -> Result<Option<String>, String> {
    let url = url.trim();
    if url.is_empty() {
        return Ok(None);
    }
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(""));
    if host.is_none_or(|h| h.is_empty() || h.contains(char::is_whitespace)) || url.contains(['?', '#']) {
        return Err(format!(
            "--otlp `{url}`: expected an OTLP/HTTP collector's http:// or https:// address, such as http://localhost:4318"
        ));
    }
    let url = url.trim_end_matches('/');
    Ok(Some(if url.ends_with("/v1/traces") { url.to_owned() } else { format!("{url}/v1/traces") }))
}

/// The log line when the export starts.
pub fn start_line(shell: Shell, url: &str) -> String {
    format!("{}: OpenTelemetry: one span per call to {url}", shell.proxy())
}

/// The log line at stop: of the `ended` spans, how many the collector took; the others were
/// dropped (a full queue, a collector down, slow or refusing).
pub fn stop_line(shell: Shell, url: &str, ended: u64, exported: u64) -> String {
    let dropped = ended.saturating_sub(exported);
    let spans = if ended == 1 { "span" } else { "spans" };
    let mut line = format!("{}: OpenTelemetry: {exported} of {ended} {spans} exported to {url}", shell.proxy());
    if dropped > 0 {
        line.push_str(&format!(", {dropped} dropped (the collector did not take them)"));
    }
    line
}

/// The `gen_ai.provider.name` of a provider's API.
fn system_name(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "anthropic",
        Provider::OpenAi => "openai",
        Provider::Gemini => "gcp.gemini",
    }
}

/// The session's span id: never zero (OTLP's "none").
fn session_span_id(trace_id: &str) -> String {
    format!("{:016x}", xxh3_64(trace_id.as_bytes()).max(1))
}

/// Why the call failed, for `error.type`: its status when not 2xx, or a reply that did not
/// come back whole.
fn failure(record: &CallRecord) -> Option<String> {
    match record.status {
        Some(status) if !(200..300).contains(&status) => Some(status.to_string()),
        None => Some("no reply".into()),
        Some(_) if !record.completed && !record.side_call => Some("incomplete".into()),
        Some(_) => None,
    }
}

#[derive(Default)]
struct Attributes(Vec<(String, SpanValue)>);

impl Attributes {
    fn push(&mut self, key: &str, value: SpanValue) {
        self.0.push((key.to_owned(), value));
    }

    fn text(&mut self, key: &str, value: &str) {
        self.push(key, SpanValue::Text(value.to_owned()));
    }

    /// OTLP integers are signed: a count past `i64::MAX` (nonsense) is capped there.
    fn int(&mut self, key: &str, value: u64) {
        self.push(key, SpanValue::Int(i64::try_from(value).unwrap_or(i64::MAX)));
    }

    fn float(&mut self, key: &str, value: f64) {
        self.push(key, SpanValue::Float(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ProviderUsage;
    use crate::proxy::record::CallDollars;
    use crate::workbench::cost::CallCost;

    fn record() -> CallRecord {
        CallRecord {
            trace_id: "t-1".into(),
            call: 3,
            at_ms: 1_000,
            model: "claude-sonnet-4-5".into(),
            agent: "Claude Code 2.1.3".into(),
            managed: true,
            client_tokens: 900,
            prompt_tokens: 600,
            rewrites: vec!["compaction 2..5".into()],
            cost: Some(CallCost { agent_cost: 90.0, sent_cost: 60.0, ..CallCost::default() }),
            dollars: Some(CallDollars { agent: 0.75, sent: 0.5, ..CallDollars::default() }),
            status: Some(200),
            completed: true,
            usage: Some(ProviderUsage {
                input_tokens: 10,
                cache_read_tokens: 500,
                cache_write_tokens: 90,
                output_tokens: 40,
                ..ProviderUsage::default()
            }),
            ..CallRecord::default()
        }
    }

    fn value<'a>(span: &'a CallSpan, key: &str) -> Option<&'a SpanValue> {
        span.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[test]
    fn a_call_carries_the_genai_usage_with_its_cache_among_the_input() {
        let span = call_span(&record(), "t-1", Provider::Anthropic, 1_250);
        assert_eq!(span.name, "chat claude-sonnet-4-5");
        assert_eq!((span.start_ms, span.end_ms, span.error.as_deref()), (1_000, 1_250, None));
        assert_eq!(value(&span, "gen_ai.system"), Some(&SpanValue::Text("anthropic".into())));
        assert_eq!(value(&span, "gen_ai.usage.input_tokens"), Some(&SpanValue::Int(600)));
        assert_eq!(value(&span, "gen_ai.usage.cache_read.input_tokens"), Some(&SpanValue::Int(500)));
        assert_eq!(value(&span, "gen_ai.usage.cache_creation.input_tokens"), Some(&SpanValue::Int(90)));
        assert_eq!(value(&span, "workbench.agent_tokens"), Some(&SpanValue::Int(900)));
        assert_eq!(value(&span, "workbench.usd.saved"), Some(&SpanValue::Float(0.25)));
        assert_eq!(value(&span, "workbench.usd.basis"), Some(&SpanValue::Text("reported".into())));
    }

    #[test]
    fn the_calls_of_a_session_share_its_trace_and_no_other_session_does() {
        let (a, b) =
            (call_span(&record(), "t-1", Provider::OpenAi, 0), call_span(&record(), "t-2", Provider::OpenAi, 0));
        let again = call_span(&CallRecord { call: 4, ..record() }, "t-1", Provider::OpenAi, 0);
        assert_eq!((&a.trace_id, &a.parent_span_id), (&again.trace_id, &again.parent_span_id));
        assert_ne!(a.trace_id, b.trace_id);
        assert_eq!((a.trace_id.len(), a.parent_span_id.len()), (32, 16));
        assert_eq!(a.end_ms, a.start_ms, "an end before the start is the start");
    }

    #[test]
    fn a_collector_address_becomes_its_traces_url() {
        assert_eq!(traces_url(" "), Ok(None));
        assert_eq!(traces_url("http://localhost:4318").unwrap().unwrap(), "http://localhost:4318/v1/traces");
        assert_eq!(traces_url("https://c.example/otel/").unwrap().unwrap(), "https://c.example/otel/v1/traces");
        assert_eq!(traces_url("http://h:6006/v1/traces").unwrap().unwrap(), "http://h:6006/v1/traces");
        for bad in ["localhost:4318", "ftp://h", "http://", "http://h/x?y=1"] {
            assert!(traces_url(bad).unwrap_err().contains("expected an OTLP/HTTP collector"), "{bad}");
        }
    }

    #[test]
    fn the_stop_line_counts_what_the_collector_never_took() {
        let line = stop_line(Shell::Native, "http://h/v1/traces", 3, 1);
        assert_eq!(
            line,
            "workbench proxy: OpenTelemetry: 1 of 3 spans exported to http://h/v1/traces, 2 dropped (the collector did not take them)"
        );
        assert!(!stop_line(Shell::Npm, "u", 1, 1).contains("dropped"));
    }

    #[test]
    fn nonsense_usage_and_a_failed_call_give_bounded_numbers_and_an_error() {
        let usage = ProviderUsage {
            input_tokens: u64::MAX,
            cache_read_tokens: 5,
            output_tokens: 1,
            ..ProviderUsage::default()
        };
        let failed = CallRecord { status: Some(500), usage: Some(usage), ..record() };
        let span = call_span(&failed, "t-1", Provider::Gemini, 2_000);
        assert_eq!(value(&span, "gen_ai.usage.input_tokens"), Some(&SpanValue::Int(i64::MAX)));
        assert_eq!(span.error.as_deref(), Some("500"));
        let silent = CallRecord { status: None, usage: None, cost: None, dollars: None, ..record() };
        let span = call_span(&silent, "t-1", Provider::Gemini, 2_000);
        assert_eq!(span.error.as_deref(), Some("no reply"));
        assert_eq!(value(&span, "gen_ai.usage.output_tokens"), None);
        assert_eq!(value(&span, "workbench.usd.sent"), None);
    }
}
