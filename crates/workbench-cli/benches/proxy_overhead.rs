//! What the proxy adds to each request, measured in one run against the same scripted upstream
//! on 127.0.0.1: the median time per request through the proxy minus the median directly (the
//! two taken in turn), for a side call (passed through) and a managed call (the engine's prompt),
//! streamed and whole, over a kept-alive connection and a new one each time; and the engine's own
//! time for the managed call (decided, prepared, its reply read and recorded, the store written),
//! taken as the proxy meets it (in a process of its own, a call after each direct request), so
//! what each proxy adds beyond its engine is in view. Each is measured warm, as a proxy kept in
//! front all day is: after `BENCH_WARM_UP` unmeasured requests of each case (a tenth of them
//! streamed), and the engine after as many calls; a fresh Node process runs its first thousand
//! requests or so markedly slower. Not a test: it prints.
//!
//! `cargo bench --bench proxy_overhead` (`BENCH_REQUESTS`, default 200 per case;
//! `BENCH_WARM_UP`, default 1000). The npm package's proxy (and its engine in wasm,
//! `bindings/bench/proxy-engine.mjs`) is measured too when `bindings/dist` is built.

#[path = "../tests/proxy_support/mod.rs"]
mod proxy_support;

use std::io::{BufRead as _, Write as _};
use std::time::{Duration, Instant};

use context_workbench::proxy::args::Shell;
use context_workbench::proxy::{Decision, End, Format, RequestHead, Route};
use context_workbench::proxy::{Gateway, Upstreams, Worker};
use proxy_support::{Build, Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, scratch, sse_chunks};
use serde_json::{Value, json};

const HEADERS: [(&str, &str); 2] = [("x-api-key", "sk-ant-bench"), ("anthropic-version", "2023-06-01")];

/// The scripted upstream's reply, as the pieces it sends: its events when streamed, else the whole message.
fn reply(stream: bool) -> Vec<String> {
    if stream {
        let events =
            anthropic_events("msg_bench", &[json!({"type": "text", "text": "Hello."})], anthropic_usage(20, 0));
        return sse_chunks(&events);
    }
    vec![json!({"id": "msg_bench", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "usage": anthropic_usage(20, 0)}).to_string()]
}

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

/// Median times of `n` requests of `body` to each of `urls`, taken in turn (so both see the
/// machine as it is at the time) after `warm_up` unmeasured ones, each URL on one kept-alive
/// agent or a new one each time.
fn medians<const N: usize>(
    urls: [&str; N],
    body: &[u8],
    (warm_up, n): (usize, usize),
    keep_alive: bool,
) -> [Duration; N] {
    let shared = urls.map(|_| proxy_support::client());
    let mut times = urls.map(|_| Vec::with_capacity(warm_up + n));
    for _ in 0..warm_up + n {
        for (i, url) in urls.iter().enumerate() {
            let fresh;
            let agent = if keep_alive {
                &shared[i]
            } else {
                fresh = proxy_support::client();
                &fresh
            };
            times[i].push(request(agent, url, body));
        }
    }
    times.map(|times| median(times[warm_up..].to_vec()))
}

/// One request of `body` to `url`, its reply read whole: how long it took.
fn request(agent: &ureq::Agent, url: &str, body: &[u8]) -> Duration {
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
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// An engine under measure, in a process of its own as in a proxy (idle while the bench makes a
/// direct request): the managed call of the bench, a call per line it is sent, each answered
/// with the engine's time for it and the part of it that saved the session, in milliseconds.
struct EngineProcess {
    child: std::process::Child,
    /// Closed when dropped: the process then cleans up and ends.
    to_engine: Option<std::process::ChildStdin>,
    from_engine: std::io::BufReader<std::process::ChildStdout>,
}

impl EngineProcess {
    /// The native engine: this bench run again, as `ENGINE_OF_BENCH` asks.
    fn native(stream: bool) -> Option<EngineProcess> {
        let mut command = std::process::Command::new(std::env::current_exe().ok()?);
        command.env(ENGINE_OF_BENCH, if stream { "streamed" } else { "whole" });
        EngineProcess::start(command, None)
    }

    /// The npm package's engine, in wasm under Node (`bindings/bench/proxy-engine.mjs`).
    fn npm(stream: bool) -> Option<EngineProcess> {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/bench/proxy-engine.mjs");
        let headers: Vec<[&str; 2]> = HEADERS.iter().map(|(name, value)| [*name, *value]).collect();
        let request = String::from_utf8(body(true, stream)).unwrap();
        let pause_ms = if stream { proxy_support::EVENT_PAUSE.as_millis() } else { 0 };
        let pieces = reply(stream);
        let length = (!stream).then(|| pieces[0].len().to_string());
        let setup = json!({"request": request, "reply": pieces, "contentType": content_type(stream), "contentLength": length, "headers": headers, "pauseMs": pause_ms});
        let mut command = std::process::Command::new("node");
        command.arg(script);
        EngineProcess::start(command, Some(setup))
    }

    fn start(mut command: std::process::Command, setup: Option<Value>) -> Option<EngineProcess> {
        use std::process::Stdio;
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().ok()?;
        let mut to_engine = child.stdin.take()?;
        let from_engine = std::io::BufReader::new(child.stdout.take()?);
        if let Some(setup) = setup {
            writeln!(to_engine, "{setup}").ok()?;
        }
        Some(EngineProcess { child, to_engine: Some(to_engine), from_engine })
    }

    /// One call: the engine's time for it (None once the process failed).
    fn call(&mut self) -> Option<EngineTime> {
        writeln!(self.to_engine.as_mut()?, "call").ok()?;
        let mut line = String::new();
        self.from_engine.read_line(&mut line).ok()?;
        let mut ms = line.split_whitespace().map(|v| v.parse::<f64>().ok().map(|ms| Duration::from_secs_f64(ms / 1e3)));
        let (all, save) = (ms.next()??, ms.next()??);
        Some(EngineTime { all, waited: all.saturating_sub(save) })
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        self.to_engine = None;
        let _ = self.child.wait();
    }
}

/// The engine's time for a call: all of it, and what a proxy waits for (all but the session's
/// save, which runs while the upstream has the call).
#[derive(Clone, Copy)]
struct EngineTime {
    all: Duration,
    waited: Duration,
}

/// The engine's median times for the managed call, taken as the proxy meets it: each call comes
/// after a direct request of the same body to the upstream, as the bench alternates requests
/// direct and through the proxy; the first `warm_up` calls are not measured.
fn engine_median(
    engine: &mut EngineProcess,
    url: &str,
    body: &[u8],
    (warm_up, n): (usize, usize),
) -> Option<EngineTime> {
    let agent = proxy_support::client();
    let mut times = Vec::with_capacity(warm_up + n);
    for _ in 0..warm_up + n {
        request(&agent, url, body);
        times.push(engine.call()?);
    }
    let times = times.split_off(warm_up);
    Some(EngineTime {
        all: median(times.iter().map(|t| t.all).collect()),
        waited: median(times.iter().map(|t| t.waited).collect()),
    })
}

/// What the bench runs as when it is a native engine process (see [`EngineProcess::native`]).
const ENGINE_OF_BENCH: &str = "PROXY_OVERHEAD_ENGINE";

/// The native engine process: the call read and decided, prepared by a worker, its session saved,
/// the reply read piece by piece (a stream's pieces paced as the scripted upstream sends them,
/// the waits not counted) and recorded, once per line on stdin.
fn serve_native_engine(stream: bool) {
    let dir = scratch("bench-engine");
    let mut config = context_workbench::Config::default();
    config.store.root = ".trace".into();
    let gateway = Gateway::new(&config, Upstreams::default(), Shell::Native);
    let fs = workbench_cli::native::WorkspaceFs::new(&dir).unwrap();
    let worker = Worker::new(workbench_cli::native::NativeHost::new(fs, None), config, false, Default::default());
    let (raw, reply) = (body(true, stream), reply(stream));
    let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers: vec![] };
    for _ in std::io::stdin().lines() {
        let start = Instant::now();
        let Decision::Manage { key, request } = gateway.read(&head, Route::Managed(Format::Anthropic), &raw) else {
            panic!("a managed call")
        };
        let prepared = context_workbench::host::block_on(worker.prepare(&key, &request, Vec::new()));
        assert!(prepared.body.is_some());
        let saving = Instant::now();
        context_workbench::host::block_on(worker.save_behind());
        let save = saving.elapsed();
        let mut took = start.elapsed();
        let length = (!stream).then(|| reply[0].len() as u64);
        let mut pump = gateway.reply_pump(Format::Anthropic, 200, Some(content_type(stream)), length);
        let mut outcome = None;
        for piece in &reply {
            if stream {
                std::thread::sleep(proxy_support::EVENT_PAUSE);
            }
            let start = Instant::now();
            outcome = pump.feed(piece.as_bytes(), gateway.counter());
            took += start.elapsed();
            if outcome.is_some() {
                break;
            }
        }
        let start = Instant::now();
        let outcome = outcome.or_else(|| pump.end(End::Done, gateway.counter()).outcome).expect("the reply");
        let record = context_workbench::host::block_on(worker.finish(&key.name(), 200, outcome));
        assert!(record.completed, "{record:?}");
        println!("{:.4} {:.4}", ms(took + start.elapsed()), ms(save));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// What a trip from the proxy's runtime thread to a session thread and back costs with no work
/// in it (the proxy's own channels: std's to the thread, Tokio's oneshot back), back to back and
/// after both sat idle for `idle`, as between a streamed reply's events or an agent's calls.
fn hop_median(idle: Duration, n: usize) -> Duration {
    let (to_thread, commands) = std::sync::mpsc::channel::<tokio::sync::oneshot::Sender<()>>();
    let thread = std::thread::spawn(move || {
        while let Ok(reply) = commands.recv() {
            let _ = reply.send(());
        }
    });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let times: Vec<Duration> = runtime.block_on(async {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            tokio::time::sleep(idle).await;
            let start = Instant::now();
            let (reply, back) = tokio::sync::oneshot::channel();
            to_thread.send(reply).unwrap();
            back.await.unwrap();
            times.push(start.elapsed());
        }
        times
    });
    drop(to_thread);
    thread.join().unwrap();
    median(times)
}

fn content_type(stream: bool) -> &'static str {
    if stream { "text/event-stream" } else { "application/json" }
}

fn main() {
    if let Ok(kind) = std::env::var(ENGINE_OF_BENCH) {
        return serve_native_engine(kind == "streamed");
    }
    let n: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let warm_up: usize = std::env::var("BENCH_WARM_UP").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    // How many requests (calls) go unmeasured, then how many are measured: fewer streamed ones
    // warm up, at some 25 ms each.
    let counts = |stream: bool| (if stream { warm_up / 10 } else { warm_up }, n);
    let upstream = Upstream::start(|request: &Received| {
        let body: Value = request.json();
        if body["stream"] == json!(true) {
            let events =
                anthropic_events("msg_bench", &[json!({"type": "text", "text": "Hello."})], anthropic_usage(20, 0));
            Reply::Events { events, cut_after: None }
        } else {
            Reply::Json { status: 200, body: reply(false).concat() }
        }
    });
    let builds = [Build::Native, Build::Npm];
    for build in builds {
        if build == Build::Npm
            && !std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/dist/cli.js").is_file()
        {
            println!("npm: not measured (bindings/dist is not built)");
            continue;
        }
        // The engine's own time for the managed call, whole and streamed.
        let direct = format!("{}/v1/messages", upstream.url);
        let engine = |stream| {
            let mut engine = match build {
                Build::Native => EngineProcess::native(stream)?,
                Build::Npm => EngineProcess::npm(stream)?,
                // Only the shells are measured: the machine has no socket to time.
                Build::Machine => return None,
            };
            engine_median(&mut engine, &direct, &body(true, stream), counts(stream))
        };
        let engine = [engine(false), engine(true)];
        match engine {
            [Some(whole), Some(streamed)] => println!(
                "{build:?} engine: a managed call decided, prepared, saved, its reply read and recorded in {:.2} ms whole, {:.2} ms streamed; \
                 a proxy waits for {:.2} ms, {:.2} ms of it, the save running behind the call (medians of {n})",
                ms(whole.all),
                ms(streamed.all),
                ms(whole.waited),
                ms(streamed.waited)
            ),
            _ => println!("{build:?} engine: not measured (its process failed)"),
        }
        if build == Build::Native {
            let trips: Vec<String> = [0, 1, 25]
                .map(|ms| format!("{:.3} ms after {ms} ms idle", self::ms(hop_median(Duration::from_millis(ms), 100))))
                .into();
            println!("Native session thread, a trip there and back with no work: {}", trips.join(", "));
        }
        let dir = scratch("bench-proxy");
        let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
        println!(
            "{build:?} proxy, added per request (median through the proxy − median direct, {n} requests each, in turn):"
        );
        for (name, tools, stream) in
            [("side call", false, false), ("managed, whole", true, false), ("managed, streamed", true, true)]
        {
            for keep_alive in [true, false] {
                let body = body(tools, stream);
                let urls = [&upstream.url, &proxy.url].map(|url| format!("{url}/v1/messages"));
                let [direct, through] = medians([&urls[0], &urls[1]], &body, counts(stream), keep_alive);
                let added = through.as_secs_f64() - direct.as_secs_f64();
                let beyond = match engine[usize::from(stream)] {
                    Some(engine) if tools => {
                        let beyond = |engine: Duration| (added - engine.as_secs_f64()) * 1e3;
                        format!(
                            ", {:>+5.2} ms beyond the engine, {:>+5.2} ms beyond the part waited for",
                            beyond(engine.all),
                            beyond(engine.waited)
                        )
                    }
                    _ => String::new(),
                };
                println!(
                    "  {name:<18} {:<11} direct {:>6.2} ms, through {:>6.2} ms: {:>+6.2} ms{beyond}",
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
