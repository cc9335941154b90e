//! `--otlp`: each call's span as the engine describes it (`context_workbench::proxy::telemetry`),
//! exported by the OpenTelemetry SDK over OTLP/HTTP (protobuf). Its batch span processor runs
//! on a thread of its own with a bounded queue: ending a span never waits on the collector, and
//! a full queue drops. What the collector never took (dropped, refused, unreachable) is counted
//! in the line [`Telemetry::stop`] returns.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use context_workbench::proxy::args::Shell;
use context_workbench::proxy::telemetry::{CallSpan, SpanValue, stop_line};
use opentelemetry::trace::{
    Span, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer,
    TracerProvider,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider, SpanData, SpanExporter,
};

/// How long one export may take before it counts as failed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// Spans waiting for the exporter; past it, new ones are dropped.
const QUEUE: usize = 4096;

pub struct Telemetry {
    url: String,
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    ended: AtomicU64,
    exported: Arc<AtomicU64>,
}

impl Telemetry {
    /// An exporter to the collector's traces URL; nothing is sent until a span ends.
    pub fn start(url: &str) -> Result<Telemetry, String> {
        if url.starts_with("https://") {
            // The exporter's HTTP client is built without TLS (a second TLS stack for spans).
            return Err(format!(
                "--otlp {url}: `workbench proxy` exports over http:// (a local collector); the npm package's proxy takes https://"
            ));
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("--otlp {url}: {e}"))?;
        let exported = Arc::new(AtomicU64::new(0));
        let counted = Counted { inner: exporter, exported: Arc::clone(&exported) };
        let batches = BatchConfigBuilder::default()
            .with_max_queue_size(QUEUE)
            .with_scheduled_delay(Duration::from_millis(500))
            .build();
        let processor = BatchSpanProcessor::builder(counted).with_batch_config(batches).build();
        let resource = Resource::builder().with_service_name("context-workbench").build();
        let provider = SdkTracerProvider::builder().with_span_processor(processor).with_resource(resource).build();
        let tracer = provider.tracer("context-workbench");
        Ok(Telemetry { url: url.to_owned(), provider, tracer, ended: AtomicU64::new(0), exported })
    }

    /// Queue `span` for export (returns at once).
    pub fn export(&self, span: CallSpan) {
        let parent = match (TraceId::from_hex(&span.trace_id), SpanId::from_hex(&span.parent_span_id)) {
            (Ok(trace), Ok(parent)) => SpanContext::new(trace, parent, TraceFlags::SAMPLED, true, TraceState::NONE),
            _ => return,
        };
        let context = Context::new().with_remote_span_context(parent);
        let attributes: Vec<KeyValue> =
            span.attributes.into_iter().map(|(key, value)| KeyValue::new(key, otel(value))).collect();
        let mut exported = self
            .tracer
            .span_builder(span.name)
            .with_kind(SpanKind::Client)
            .with_start_time(at(span.start_ms))
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &context);
        if let Some(error) = span.error {
            exported.set_status(Status::error(error));
        }
        exported.end_with_timestamp(at(span.end_ms));
        self.ended.fetch_add(1, Ordering::Relaxed);
    }

    /// Send what is queued (for at most the export timeout) and stop: the line that says how
    /// many spans went out and how many were dropped. Blocks: call it off the event loop.
    pub fn stop(&self) -> String {
        let _ = self.provider.shutdown_with_timeout(EXPORT_TIMEOUT * 2);
        let ended = self.ended.load(Ordering::Relaxed);
        stop_line(Shell::Native, &self.url, ended, self.exported.load(Ordering::Relaxed))
    }
}

/// The OTLP exporter, counting the spans the collector took.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    exported: Arc<AtomicU64>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len() as u64;
        let result = self.inner.export(batch).await;
        if result.is_ok() {
            self.exported.fetch_add(spans, Ordering::Relaxed);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn otel(value: SpanValue) -> Value {
    match value {
        SpanValue::Bool(b) => Value::Bool(b),
        SpanValue::Int(i) => Value::I64(i),
        SpanValue::Float(f) => Value::F64(f),
        SpanValue::Text(s) => Value::String(s.into()),
        SpanValue::Texts(list) => Value::Array(Array::String(list.into_iter().map(StringValue::from).collect())),
    }
}

/// Now, in milliseconds since the Unix epoch (the spans' clock, as the native host's).
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
