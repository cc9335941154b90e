//! Events per second that `workbench serve` delivers to 50 concurrent WebSocket clients on this
//! machine. Not a test: it prints the numbers of one run, and checks only that every client
//! received every event, in order, with no gap.
//!
//! `cargo bench --bench serve` (`BENCH_CLIENTS`, `BENCH_EVENTS`, `BENCH_BATCH` to change the
//! defaults 50, 5000, 50). The real binary serves a fresh trace root; an engine in this process
//! appends to the trace as fast as it can save: each round records BATCH assistant messages
//! under a focused goal (one `message_added` event each) and persists them. Every client is a
//! thread reading its own socket. Latency runs from the start of the persist that writes an
//! event to its receipt by a client; the server checks the log every 50 ms, so that poll is
//! most of it.

#[path = "../tests/serve_support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use context_workbench::MessageDraft;
use context_workbench::model::Role;
use support::{Server, open_trace, persist, scratch};

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let clients = setting("BENCH_CLIENTS", 50);
    let events = setting("BENCH_EVENTS", 5000) as u64;
    let batch = setting("BENCH_BATCH", 50).max(1) as u64;
    let root = scratch("bench");
    let writer = open_trace(&root, "bench");
    writer.record(MessageDraft::text(Role::User, "Deliver events to every watcher.")).expect("record");
    assert!(!writer.call_goal_tool("goal", r#"{"add": "stream the events"}"#).is_error);
    assert!(!writer.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    let base = persist(&writer);
    let server = Server::start(&root);

    // The id of the last event, set before the persist that writes it: a client stops there.
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
                let ids: Vec<u64> = received.iter().map(|r| r.0).collect();
                assert!(ids.iter().copied().eq(base + 1..=base + ids.len() as u64), "client {n}: a gap or a reorder");
                watcher.close();
                received
            })
        })
        .collect();
    ready.wait();

    let start = Instant::now();
    // When each event's persist started, by id - base - 1.
    let mut appended = Vec::new();
    let mut persists = 0;
    while (appended.len() as u64) < events {
        let t = Instant::now();
        for k in 0..batch.min(events - appended.len() as u64) {
            writer
                .record(MessageDraft::text(
                    Role::Assistant,
                    format!("Step {} of the stream.", appended.len() as u64 + k),
                ))
                .expect("record");
        }
        let newest = writer.events_since(0).last().map_or(0, |e| e.id);
        if newest - base >= events {
            last.store(newest, Ordering::Release);
        }
        persist(&writer);
        persists += 1;
        appended.resize((newest - base) as usize, t);
    }
    let writing = start.elapsed().as_secs_f64();
    let total = appended.len() as u64;

    let mut latencies_ms = Vec::new();
    let mut finished = start;
    for reader in readers {
        let received = reader.join().expect("a client failed");
        assert_eq!(received.len() as u64, total, "every client receives every event");
        for (id, at) in received {
            latencies_ms.push(at.duration_since(appended[(id - base - 1) as usize]).as_secs_f64() * 1e3);
            finished = finished.max(at);
        }
    }
    let elapsed = finished.duration_since(start).as_secs_f64();
    latencies_ms.sort_by(f64::total_cmp);
    let at = |q: f64| latencies_ms[((latencies_ms.len() as f64 * q).ceil() as usize).clamp(1, latencies_ms.len()) - 1];
    let delivered = total * clients as u64;

    println!("workbench serve: {clients} WebSocket clients, {total} events appended in {persists} saves of {batch}");
    println!(
        "appending: {:.0} events/s ({writing:.2} s, the writer's engine.persist included)",
        total as f64 / writing
    );
    println!(
        "delivered: {delivered} events in {elapsed:.2} s = {:.0} events/s in total, {:.0} per client",
        delivered as f64 / elapsed,
        total as f64 / elapsed
    );
    println!("latency, persist start to receipt: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms", at(0.5), at(0.99), at(1.0));
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}
