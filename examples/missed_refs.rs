// Temporary diagnostic: which references does the workbench drop, and where were they learned?
use context_workbench::import::import;
use context_workbench::model::Role;
use context_workbench::replay::*;
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let window: usize = args[1].parse().unwrap();
    let mut by_source: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_age: BTreeMap<usize, usize> = BTreeMap::new();
    let mut samples = Vec::new();
    for path in &args[2..] {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(trajs) = import(path, &text) else { continue };
        for t in trajs {
            let flat: Vec<String> =
                t.messages.iter().map(|m| flatten(m.role, &m.content).content.to_string()).collect();
            let mut strategies = strategies_by_name("workbench", window).unwrap();
            let mut prompts: Vec<String> = Vec::new();
            replay_with(&t, &mut strategies, &Default::default(), window, &mut |_, _, p| {
                prompts.push(p.messages.iter().map(|m| m.content.as_ref()).collect::<Vec<_>>().join("\n"));
            })
            .unwrap();
            for (k, &start) in t.calls.iter().enumerate() {
                let end = t.calls.get(k + 1).copied().unwrap_or(t.messages.len());
                for r in action_references(&t.messages[start..end]) {
                    if t.messages
                        .iter()
                        .zip(&flat)
                        .any(|(m, f)| matches!(m.role, Role::System | Role::User) && f.contains(&r))
                    {
                        continue;
                    }
                    let Some(first) = (0..start)
                        .find(|&i| !matches!(t.messages[i].role, Role::System | Role::User) && flat[i].contains(&r))
                    else {
                        continue;
                    };
                    if prompts[k].contains(&r) {
                        continue;
                    }
                    let last = (0..start)
                        .rev()
                        .find(|&i| !matches!(t.messages[i].role, Role::System | Role::User) && flat[i].contains(&r))
                        .unwrap();
                    let m = &t.messages[last];
                    let src = match m.role { Role::Tool => format!("tool:{}", m.tool_results().next().map(|r| r.name.clone()).unwrap_or_default()), Role::Assistant => if m.tool_calls().next().is_some() && flat[last].contains(&r) && m.content.iter().all(|p| !matches!(p, context_workbench::model::ContentPart::Text{text} if text.contains(&r))) {"assistant-call".into()} else {"assistant-text".into()}, r => format!("{r:?}") };
                    *by_source.entry(src.clone()).or_default() += 1;
                    let age = start - last;
                    *by_age
                        .entry(if age < 10 {
                            age
                        } else if age < 50 {
                            10
                        } else if age < 200 {
                            50
                        } else {
                            200
                        })
                        .or_default() += 1;
                    if samples.len() < 400 {
                        samples.push(format!("{} k={k} ref={r} first={first} last={last} age={age} src={src}", t.name));
                    }
                    let _ = first;
                }
            }
        }
    }
    println!("by source: {by_source:?}");
    println!("by age of last mention: {by_age:?}");
    for s in samples {
        println!("{s}");
    }
}
