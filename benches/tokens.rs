//! Native token counting (o200k_base): time to first count and throughput (by wall and by CPU
//! time) on a corpus of real trajectories. Not a test: it prints numbers of one run and asserts nothing about time.
//!
//! `cargo bench --bench tokens`. `bindings/bench/run.mjs` (`npm run bench`) runs it too, reads its
//! last line (`json {...}`) and sets it beside the wasm and JavaScript counters.
//!
//! The corpus, the same in `bindings/bench/corpus.mjs`: the `.json` files of
//! `data/traces/vorflux` in name order, concatenated, whole files until at least
//! `BENCH_CORPUS_MB` (default 2) MB. MB here is 10^6 bytes of UTF-8.

use std::path::Path;
use std::time::Instant;

use context_workbench::tokens::{Encoding, TokenCounter};

/// The short text of the time to first count (the same in `bindings/bench/count.mjs`).
const SHORT: &str = "Run the failing test again and read the traceback.";
/// Timed counts of the corpus, after one warm-up count; the median is reported.
const REPS: usize = 5;

fn main() {
    // First thing in the process, so it is cold: the BPE ranks are built on first use.
    let start = Instant::now();
    let counter = TokenCounter::new(Encoding::O200kBase);
    let short_tokens = counter.count(SHORT);
    let first_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    std::hint::black_box(counter.count(std::hint::black_box(SHORT)));
    let warm_us = start.elapsed().as_secs_f64() * 1e6;

    let (corpus, files) = corpus();
    let tokens = counter.count(&corpus);
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let (start, start_cpu) = (Instant::now(), cpu_seconds());
        assert_eq!(counter.count(std::hint::black_box(&corpus)), tokens);
        wall.push(start.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - start_cpu);
    }
    let (median, median_cpu) = (median(&mut wall), median(&mut cpu));
    let mb = corpus.len() as f64 / 1e6;
    let peak_mb = peak_rss_mb();

    println!("native token counting (tiktoken-rs via TokenCounter, o200k_base)");
    println!("corpus: {files} vorflux files, {mb:.2} MB, {tokens} tokens");
    println!(
        "throughput: {:.2} MB/s, {:.2} M tokens/s (median of {REPS}); by CPU time {:.2} MB/s",
        mb / median,
        tokens as f64 / median / 1e6,
        mb / median_cpu
    );
    println!(
        "first count: {first_ms:.1} ms (counter + {short_tokens} tokens, cold); a warm short count: {warm_us:.1} µs"
    );
    println!("peak RSS: {}", peak_mb.map_or("n/a".into(), |m| format!("{m:.1} MB")));
    // A run with no safe boundary is cut into equal 1 MiB chunks, each one piece whose merges are
    // slow: counted once, 20 MiB of one letter should cost about what its first chunk does.
    let run = "a".repeat(20 << 20);
    let timed = |text: &str| {
        let start = Instant::now();
        std::hint::black_box(counter.count(std::hint::black_box(text)));
        start.elapsed().as_secs_f64()
    };
    let (one_chunk, whole) = (timed(&run[..1 << 20]), timed(&run));
    println!("20 MiB of one letter: {whole:.2} s, {:.2}x the time of its first 1 MiB chunk", whole / one_chunk);
    let json = serde_json::json!({
        "bytes": corpus.len(), "files": files, "tokens": tokens, "seconds": median, "cpu_seconds": median_cpu,
        "short_tokens": short_tokens, "first_ms": first_ms, "peak_rss_mb": peak_mb,
    });
    println!("json {json}");
}

/// The corpus described in the module docs, and how many files it holds.
fn corpus() -> (String, usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/traces/vorflux");
    let limit = std::env::var("BENCH_CORPUS_MB").ok().and_then(|v| v.parse::<f64>().ok()).unwrap_or(2.0) * 1e6;
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the shared traces beside the clone)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut text = String::new();
    let mut files = 0;
    for path in paths {
        if text.len() as f64 >= limit {
            break;
        }
        text.push_str(&std::fs::read_to_string(&path).unwrap());
        files += 1;
    }
    (text, files)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// CPU time of the process so far, in seconds (steadier than wall time on a busy machine).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for clock_gettime to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// The process's peak resident set (VmHWM, Linux) in MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0 / 1e6)
}
