//! What the proxy adds to each request, measured in one run against the same scripted upstream
//! on 127.0.0.1: the median time per request through the proxy minus the median directly, for a
//! side call (passed through) and a managed call (the engine's prompt), streamed and whole, over
//! a kept-alive connection and a new one each time; and the engine's own time for the managed
//! call (its log's prepare), so the overhead beyond the engine is in view. Not a test: it prints.
//!
//! `cargo bench --bench proxy_overhead` (`BENCH_REQUESTS`, default 200 per case). The npm
//! package's proxy is measured too when `bindings/dist` is built.

#[path = "../tests/proxy_support/mod.rs"]
mod proxy_support;

use std::time::{Duration, Instant};

use context_workbench::proxy::{Decision, Format, RequestHead, Route};
use context_workbench::proxy::{Gateway, Upstreams, Worker};
use proxy_support::{Build, Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, scratch};
use serde_json::{Value, json};

const HEADERS: [(&str, &str); 2] = [("x-api-key", "sk-ant-bench"), ("anthropic-version", "2023-06-01")];

fn body(tools: bool, stream: bool) -> Vec<u8> {
    let mut body = json!({
        "model": "claude-bench",
        "max_tokens": 100,
        "stream": stream,
        "system": "You are a coding agent.",
        "metadata": {"user_id": json!({"session_id": "bench"}).to_string()},
        "messages": [{"role": "user", "content": "Say hello."}],
    });
    if tools {
        body["tools"] = json!([{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]);
    }
    body.to_string().into_bytes()
}

/// Median time of `n` requests of `body` to `url`, on one kept-alive agent or a new one each.
fn median(url: &str, body: &[u8], n: usize, keep_alive: bool) -> Duration {
    let shared = proxy_support::client();
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let fresh;
            let agent = if keep_alive {
                &shared
            } else {
                fresh = proxy_support::client();
                &fresh
            };
            let mut request = agent.post(url).header("content-type", "application/json");
            for (name, value) in HEADERS {
                request = request.header(name, value);
            }
            let start = Instant::now();
            let mut response = request.send(body).expect("an answer");
            let text = response.body_mut().read_to_string().expect("a body");
            let took = start.elapsed();
            assert_eq!(response.status().as_u16(), 200, "{text}");
            took
        })
        .collect();
    times.sort();
    times[n / 2]
}

/// The engine's median time for the managed call: read and decided, then prepared by a worker.
fn engine_median(n: usize) -> Duration {
    let dir = scratch("bench-engine");
    let mut config = context_workbench::Config::default();
    config.store.root = ".trace".into();
    let gateway = Gateway::new(&config, Upstreams::default());
    let host = workbench_cli::native::NativeHost::new(workbench_cli::native::WorkspaceFs::new(&dir).unwrap(), None);
    let worker = Worker::new(host, config, false, Default::default());
    let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers: vec![] };
    let raw = body(true, false);
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            let Decision::Manage { key, request } = gateway.decide(&head, Route::Managed(Format::Anthropic), &raw)
            else {
                panic!("a managed call")
            };
            let prepared = context_workbench::host::block_on(worker.prepare(&key, &request, Vec::new()));
            assert!(prepared.body.is_some());
            let took = start.elapsed();
            let _ = context_workbench::host::block_on(worker.finish(&key.name(), 200, Default::default()));
            took
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn main() {
    let n: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let upstream = Upstream::start(|request: &Received| {
        let body: Value = request.json();
        let events =
            anthropic_events("msg_bench", &[json!({"type": "text", "text": "Hello."})], anthropic_usage(20, 0));
        if body["stream"] == json!(true) {
            Reply::Events { events, cut_after: None }
        } else {
            let message = json!({"id": "msg_bench", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "usage": anthropic_usage(20, 0)});
            Reply::Json { status: 200, body: message.to_string() }
        }
    });
    let engine = engine_median(n);
    println!("engine: the managed call read, recorded and prepared in {:.2} ms (median of {n})", ms(engine));
    let builds = [Build::Native, Build::Npm];
    for build in builds {
        if build == Build::Npm
            && !std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/dist/cli.js").is_file()
        {
            println!("npm: not measured (bindings/dist is not built)");
            continue;
        }
        let dir = scratch("bench-proxy");
        let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
        println!("{build:?} proxy, added per request (median through the proxy − median direct, {n} requests each):");
        for (name, tools, stream) in
            [("side call", false, false), ("managed, whole", true, false), ("managed, streamed", true, true)]
        {
            for keep_alive in [true, false] {
                let body = body(tools, stream);
                let direct = median(&format!("{}/v1/messages", upstream.url), &body, n, keep_alive);
                let through = median(&format!("{}/v1/messages", proxy.url), &body, n, keep_alive);
                let added = through.as_secs_f64() - direct.as_secs_f64();
                println!(
                    "  {name:<18} {:<11} direct {:>6.2} ms, through {:>6.2} ms: {:>+6.2} ms",
                    if keep_alive { "keep-alive" } else { "new conn." },
                    ms(direct),
                    ms(through),
                    added * 1e3
                );
            }
        }
        drop(proxy.stop());
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
