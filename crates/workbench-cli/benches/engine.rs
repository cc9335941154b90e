//! Engine latency and peak memory on the longest shared trajectory, natively. Not a test: it
//! prints numbers of one run and asserts nothing about time.
//!
//! `cargo bench --bench engine` (`BENCH_TRACE=path` for another trajectory, relative to the
//! repository root). The loop is the replay's `workbench` strategy (src/replay/strategies/
//! workbench.rs): at each recorded call, `Engine::record` each message that is new since the
//! previous call (a leading system message becomes the system prompt), then
//! `Engine::prepare_call`; default configuration, 200k window, no LLM (the embedded compactor).
//! Each `record` and each `prepare_call` is timed on its own.

use std::path::Path;
use std::time::Instant;

use context_workbench::host::block_on;
use context_workbench::import::{Trajectory, import};
use context_workbench::model::Role;
use context_workbench::prompt::CallInput;
use context_workbench::replay::{ReplayHost, flatten};
use context_workbench::{Config, Engine, Host, MessageDraft};
use workbench_cli::native::{NativeHost, WorkspaceFs};

/// The vorflux run with the most recorded calls (735).
const LONGEST: &str = "../../data/traces/vorflux/django__django-15973.json";

fn main() {
    let file = std::env::var("BENCH_TRACE").unwrap_or_else(|_| LONGEST.into());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(&file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trajectory = import(&file, &text).expect("a trajectory").remove(0);
    drop(text);
    let rss_before = peak_rss_mb();

    let t = Instant::now();
    let engine = Engine::new(ReplayHost::default(), config());
    let new_ms = t.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    let mut run = replay(&engine, &trajectory);
    let total = start.elapsed().as_secs_f64();
    let Run { record_us, prepare_us, rewriting_us, refused, failed, rewrites, peak_tokens } = &mut run;

    println!(
        "engine latency, natively: {} ({} messages, {} calls), replayed in {total:.2} s",
        trajectory.name,
        trajectory.messages.len(),
        trajectory.calls.len()
    );
    println!("Engine::new: {new_ms:.1} ms (cold: it loads the BPE ranks; not in the rows below)");
    println!("{:<28} {:>6} {:>10} {:>10} {:>10} {:>10}", "operation", "n", "mean", "p50", "p95", "max");
    print_row("record (per message)", record_us);
    print_row("prepare_call (per prompt)", prepare_us);
    print_row("  of which rewrote history", rewriting_us);
    println!(
        "prompts: peak {peak_tokens} tokens, {rewrites} rewrites; {refused} messages refused, {failed} calls failed"
    );
    let mb = |m: Option<f64>| m.map_or("n/a".into(), |m| format!("{m:.1} MB"));
    println!("peak RSS: {} ({} after reading and importing the trajectory)", mb(peak_rss_mb()), mb(rss_before));

    // The same loop with a trace store on disk: every prepare_call also saves the trace.
    let dir = std::env::temp_dir().join(format!("cw-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let fs = WorkspaceFs::new(&dir).expect("the scratch directory");
    let stored = block_on(Engine::open(NativeHost::new(fs, None), config(), Some("bench"))).expect("a new trace").0;
    let mut saved = replay(&stored, &trajectory);
    let bytes: u64 = std::fs::read_dir(dir.join(".trace/bench"))
        .map_or(0, |d| d.filter_map(|e| e.ok()?.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum());
    println!("with a trace store (saved after every call, {:.1} MB of files besides messages/):", bytes as f64 / 1e6);
    print_row("prepare_call + save", &mut saved.prepare_us);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let save = mean(&saved.prepare_us) - mean(prepare_us);
    println!(
        "a save costs {:.2} ms per call on average, {:.1}x a prepare_call alone",
        save / 1e3,
        save / mean(prepare_us)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn config() -> Config {
    let mut config = Config { window: 200_000, ..Config::default() };
    config.workbench.llm_compactor = false;
    config
}

/// Timings of one replay of the trajectory's calls through an engine.
#[derive(Default)]
struct Run {
    record_us: Vec<f64>,
    prepare_us: Vec<f64>,
    rewriting_us: Vec<f64>,
    refused: usize,
    failed: usize,
    rewrites: usize,
    peak_tokens: usize,
}

fn replay<H: Host>(engine: &Engine<H>, trajectory: &Trajectory) -> Run {
    let mut run = Run::default();
    let mut system_prompt = String::new();
    let mut recorded = 0;
    for &end in &trajectory.calls {
        for (i, m) in trajectory.messages[..end].iter().enumerate().skip(recorded) {
            if i == 0 && m.role == Role::System {
                system_prompt = flatten(m.role, &m.content).content.to_string();
                continue;
            }
            let t = Instant::now();
            let result = engine.record(MessageDraft::from(m));
            run.record_us.push(t.elapsed().as_secs_f64() * 1e6);
            run.refused += usize::from(result.is_err());
        }
        recorded = end;
        let input = CallInput { system_prompt: system_prompt.clone(), ..CallInput::default() };
        let t = Instant::now();
        let result = block_on(engine.prepare_call(&input));
        let us = t.elapsed().as_secs_f64() * 1e6;
        run.prepare_us.push(us);
        match result {
            Ok(assembly) => {
                if !assembly.rewrites.is_empty() {
                    run.rewriting_us.push(us);
                }
                run.rewrites += assembly.rewrites.len();
                run.peak_tokens = run.peak_tokens.max(assembly.tokens);
            }
            Err(_) => run.failed += 1,
        }
    }
    run
}

fn print_row(name: &str, micros: &mut [f64]) {
    micros.sort_by(f64::total_cmp);
    let n = micros.len();
    if n == 0 {
        return println!("{name:<28} {n:>6}");
    }
    let at = |q: f64| micros[((n as f64 * q).ceil() as usize).clamp(1, n) - 1];
    let mean = micros.iter().sum::<f64>() / n as f64;
    let fmt = |us: f64| if us >= 1000.0 { format!("{:.2} ms", us / 1e3) } else { format!("{us:.1} µs") };
    println!(
        "{name:<28} {n:>6} {:>10} {:>10} {:>10} {:>10}",
        fmt(mean),
        fmt(at(0.5)),
        fmt(at(0.95)),
        fmt(micros[n - 1])
    );
}

/// The process's peak resident set (VmHWM, Linux) in MB (10^6 bytes).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0 / 1e6)
}
