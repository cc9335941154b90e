//! Events per second that `workbench serve` delivers to 50 concurrent WebSocket clients on this
//! machine. Not a test: it prints the numbers of one run, and checks only that every client
//! received every event, in order, with no gap.
//!
//! `cargo bench --bench serve` (`BENCH_CLIENTS`, `BENCH_EVENTS`, `BENCH_BATCH`, `BENCH_BURST` to
//! change the defaults 50, 5000, 50, 20000). The real binary serves a fresh trace root; an
//! engine in this process appends to the trace, and every client is a thread reading its own
//! socket. Two phases:
//! - steady: rounds of BATCH assistant messages under a focused goal (one `message_added`
//!   event each), each round saved with `Engine::persist`, as fast as the engine saves. The
//!   server keeps up, so the rate delivered is the writer's; latency runs from the start of
//!   the save that writes an event to its receipt (the server checks the log every 50 ms);
//! - burst: BURST messages recorded, then one save: the server's own delivery rate, from the
//!   first receipt of the burst by any client to the last receipt by all of them.

#[path = "../tests/serve_support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use context_workbench::MessageDraft;
use context_workbench::model::Role;
use support::{Server, open_trace, persist, scratch};
use workbench_cli::native::NativeHost;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let clients = setting("BENCH_CLIENTS", 50) as usize;
    let events = setting("BENCH_EVENTS", 5000);
    let batch = setting("BENCH_BATCH", 50).max(1);
    let burst = setting("BENCH_BURST", 20_000);
    let root = scratch("bench");
    let writer = open_trace(&root, "bench");
    writer.record(MessageDraft::text(Role::User, "Deliver events to every watcher.")).expect("record");
    assert!(!writer.call_goal_tool("goal", r#"{"add": "stream the events"}"#).is_error);
    assert!(!writer.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    let base = persist(&writer);
    let server = Server::start(&root);

    // The id of the last event, set before the save that writes it: a client stops there.
    let last = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(Barrier::new(clients + 1));
    let readers: Vec<_> = (0..clients)
        .map(|n| {
            let mut watcher = server.watch("bench", base);
            let (last, ready) = (Arc::clone(&last), Arc::clone(&ready));
            std::thread::spawn(move || {
                assert_eq!(watcher.next()["event"], "connected");
                ready.wait();
                let mut received = Vec::new();
                loop {
                    let (id, _) = watcher.next_event();
                    received.push((id, Instant::now()));
                    let end = last.load(Ordering::Acquire);
                    if end != 0 && id >= end {
                        break;
                    }
                }
                let ids = received.iter().map(|r| r.0);
                assert!(ids.eq(base + 1..=base + received.len() as u64), "client {n}: a gap or a reorder");
                watcher.close();
                received
            })
        })
        .collect();
    ready.wait();

    // Steady: when each event's save started, by id - base - 1.
    let start = Instant::now();
    let mut saved_at = Vec::new();
    let mut saves = 0;
    while (saved_at.len() as u64) < events {
        let t = Instant::now();
        for _ in 0..batch.min(events - saved_at.len() as u64) {
            record_step(&writer);
        }
        let newest = newest_id(&writer);
        persist(&writer);
        saves += 1;
        saved_at.resize((newest - base) as usize, t);
    }
    let writing = start.elapsed().as_secs_f64();
    let steady_end = base + saved_at.len() as u64;

    // Burst: everything in one save.
    for _ in 0..burst {
        record_step(&writer);
    }
    let newest = newest_id(&writer);
    last.store(newest, Ordering::Release);
    persist(&writer);

    let (mut latencies_ms, mut steady_done, mut burst_first, mut burst_done) = (Vec::new(), start, None, start);
    for reader in readers {
        let received = reader.join().expect("a client failed");
        assert_eq!(received.last().map(|r| r.0), Some(newest), "every client receives every event");
        for (id, at) in received {
            if id <= steady_end {
                latencies_ms.push(at.duration_since(saved_at[(id - base - 1) as usize]).as_secs_f64() * 1e3);
                steady_done = steady_done.max(at);
            } else {
                burst_first = Some(burst_first.map_or(at, |first: Instant| first.min(at)));
                burst_done = burst_done.max(at);
            }
        }
    }
    latencies_ms.sort_by(f64::total_cmp);
    let at = |q: f64| latencies_ms[((latencies_ms.len() as f64 * q).ceil() as usize).clamp(1, latencies_ms.len()) - 1];
    let steady = steady_end - base;
    let steady_s = steady_done.duration_since(start).as_secs_f64();
    let burst_events = newest - steady_end;
    let burst_s = burst_first.map_or(0.0, |first| burst_done.duration_since(first).as_secs_f64());
    let total = |n: u64, s: f64| n as f64 * clients as f64 / s;

    println!("workbench serve, {clients} WebSocket clients, every client received every event in order");
    println!(
        "steady: {steady} events in {saves} saves of {batch}, written at {:.0} events/s; delivered {:.0} events/s in total \
         ({:.0} per client) over {steady_s:.2} s",
        steady as f64 / writing,
        total(steady, steady_s),
        steady as f64 / steady_s
    );
    println!(
        "steady latency, save start to receipt: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        at(0.5),
        at(0.99),
        at(1.0)
    );
    println!(
        "burst: {burst_events} events in one save; delivered {:.0} events/s in total ({:.0} per client) over {burst_s:.2} s",
        total(burst_events, burst_s),
        burst_events as f64 / burst_s
    );
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

fn record_step(writer: &context_workbench::Engine<NativeHost>) {
    writer.record(MessageDraft::text(Role::Assistant, "One more step of the stream.")).expect("record");
}

fn newest_id(writer: &context_workbench::Engine<NativeHost>) -> u64 {
    writer.events_since(0).last().map_or(0, |e| e.id)
}
