// `--otlp`: each call's span as the engine describes it (wasm `ProxyExchange.span`), exported by
// the OpenTelemetry JS SDK over OTLP/HTTP (protobuf). Its batch span processor has a bounded
// queue (a full one drops) and exports on its own timer: ending a span never waits on the
// collector. What the collector never took is counted in the line `stop` returns.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { type CallSpan, otlpLine } from '../wasm/context_workbench.js';

/** How long one export may take before it counts as failed. */
const EXPORT_TIMEOUT_MS = 5_000;

export class Telemetry {
  #ended = 0;
  #exported = 0;
  readonly #provider: BasicTracerProvider;
  readonly #tracer;

  /** An exporter to the collector's traces URL; nothing is sent until a span ends. */
  constructor(readonly url: string) {
    const otlp = new OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS });
    const counted: SpanExporter = {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) => otlp.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) this.#exported += spans.length;
        done(result);
      }),
      shutdown: () => otlp.shutdown(),
      forceFlush: () => otlp.forceFlush(),
    };
    const processor = new BatchSpanProcessor(counted, { maxQueueSize: 2048, scheduledDelayMillis: 500, exportTimeoutMillis: EXPORT_TIMEOUT_MS });
    this.#provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'context-workbench' }), spanProcessors: [processor] });
    this.#tracer = this.#provider.getTracer('context-workbench');
  }

  /** The log line of the start. */
  startLine(): string {
    return otlpLine(this.url);
  }

  /** Queue `span` for export (returns at once). */
  export(span: CallSpan): void {
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId: span.trace_id, spanId: span.parent_span_id, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const attributes = Object.fromEntries(span.attributes);
    const exported = this.#tracer.startSpan(span.name, { kind: SpanKind.CLIENT, startTime: new Date(span.start_ms), attributes }, parent);
    if (span.error !== null) exported.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
    exported.end(new Date(span.end_ms));
    this.#ended += 1;
  }

  /** Send what is queued (each export within its timeout) and stop: the line with the count. */
  async stop(): Promise<string> {
    await this.#provider.shutdown().catch(() => undefined);
    return otlpLine(this.url, this.#ended, this.#exported);
  }
}
