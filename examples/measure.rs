use context_workbench::import::import;
use context_workbench::model::*;
use context_workbench::prompt::CallInput;
use context_workbench::testing::{TestHost, block_on};
use context_workbench::{Config, Engine, MessageDraft};
use std::time::Instant;

fn strip(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start_matches(' ');
            let d = t.bytes().take_while(u8::is_ascii_digit).count();
            if d > 0 {
                if let Some(r) = t[d..].strip_prefix('→').or_else(|| t[d..].strip_prefix('\t')) {
                    return r.to_string();
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
fn flat(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Reasoning { .. } => String::new(),
            ContentPart::ToolCall(c) => format!("{}({})", c.name, c.arguments),
            ContentPart::ToolResult(r) => r.output.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let config = match std::env::args().nth(2) {
        Some(j) => Config::from_json(&j).unwrap(),
        None => Config::default(),
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut counted, mut kept, mut sum_prompt, mut sum_cached, mut calls_total, mut rewrites) =
        (0, 0, 0usize, 0usize, 0, 0);
    let t0 = Instant::now();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        let Ok(trajs) = import(f.to_str().unwrap(), &text) else { continue };
        for t in trajs {
            let engine = Engine::new(TestHost::default(), config.clone());
            let mut system = String::new();
            let mut recorded = 0;
            let mut peak = 0;
            let mut rw = 0;
            for (k, &n) in t.calls.iter().enumerate() {
                while recorded < n {
                    let m = &t.messages[recorded];
                    if recorded == 0 && m.role == Role::System {
                        system = flat(&m.content);
                    } else {
                        engine.record(MessageDraft::new(m.role, m.content.clone())).unwrap();
                    }
                    recorded += 1;
                }
                let a = match block_on(
                    engine.prepare_call(&CallInput { system_prompt: system.clone(), ..Default::default() }),
                ) {
                    Ok(a) => a,
                    Err(e) => {
                        eprintln!("{} call {k}: {e}", t.name);
                        break;
                    }
                };
                peak = peak.max(a.tokens);
                sum_prompt += a.tokens;
                sum_cached += a.expected_cached_tokens;
                calls_total += 1;
                if !a.rewrites.is_empty() {
                    rw += 1;
                }
                // edits produced at this call
                let end = t.calls.get(k + 1).copied().unwrap_or(t.messages.len());
                let mut prompt_text: Option<String> = None;
                let mut hist_text: Option<String> = None;
                for m in &t.messages[n..end.max(n)] {
                    if m.role != Role::Assistant {
                        continue;
                    }
                    for c in m.tool_calls() {
                        let v: serde_json::Value = serde_json::from_str(&c.arguments).unwrap_or_default();
                        let Some(old) = v.get("old_string").and_then(|x| x.as_str()) else { continue };
                        let old = strip(old);
                        if old.chars().count() < 20 {
                            continue;
                        }
                        let h = hist_text.get_or_insert_with(|| {
                            strip(&t.messages[..n].iter().map(|m| flat(&m.content)).collect::<Vec<_>>().join("\n"))
                        });
                        if !h.contains(&old) {
                            continue;
                        }
                        counted += 1;
                        let p = prompt_text.get_or_insert_with(|| {
                            strip(&a.view.messages.iter().map(|m| flat(&m.content)).collect::<Vec<_>>().join("\n"))
                        });
                        if p.contains(&old) {
                            kept += 1;
                        } else if std::env::var("SHOW").is_ok() {
                            eprintln!("LOST {} call {k}: {}", t.name, &old[..old.len().min(80)]);
                            let first = old.lines().next().unwrap();
                            for (i, m) in t.messages[..n].iter().enumerate() {
                                let f = strip(&flat(&m.content));
                                if f.contains(&old) {
                                    eprintln!(
                                        "  whole in msg {i} {:?}: {}",
                                        m.role,
                                        &flat(&m.content)[..200.min(flat(&m.content).len())]
                                    );
                                } else if f.contains(first) {
                                    eprintln!("  first line in msg {i}");
                                }
                            }
                            for b in engine.history_view().blocks {
                                eprintln!(
                                    "  block {}..{} anchors {:?}",
                                    b.start,
                                    b.end,
                                    b.content
                                        .anchors
                                        .iter()
                                        .map(|a| format!("{}:{}-{}", a.path, a.start_line, a.end_line))
                                        .collect::<Vec<_>>()
                                );
                            }
                            eprintln!("  OLD<<{old}>>");
                        }
                    }
                }
            }
            rewrites += rw;
            eprintln!("{:40} calls {:4} peak {:7} rewrites {:3}", t.name, t.calls.len(), peak, rw);
        }
    }
    println!(
        "edits {kept}/{counted} = {:.3}; cached share {:.3}; Σprompt {sum_prompt}; rewrites {rewrites}/{calls_total}; {:?}",
        kept as f64 / counted.max(1) as f64,
        sum_cached as f64 / sum_prompt as f64,
        t0.elapsed()
    );
}
