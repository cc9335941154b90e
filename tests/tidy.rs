//! The architecture's rules as tests (rust-analyzer's "tidy"): the engine crate holds no I/O
//! stack and touches no file system, network, process or clock itself (R11.1); every
//! requirement the code cites is defined in the repository's design document; every file a
//! published crate embeds is in its package; and docs/ARCHITECTURE.md names the CLI's commands
//! and the engine's modules as the code has them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Crates that do I/O (servers, HTTP clients, async runtimes) or parse command lines: they
/// belong to the shells (`crates/workbench-cli`, the npm package), never to the engine.
const SHELL_CRATES: [&str; 9] = ["tokio", "axum", "hyper", "reqwest", "clap", "ureq", "mio", "tower", "socket2"];

/// What the engine's own code may not name: the host does files, network, processes and time.
const SHELL_APIS: [&str; 6] = ["std::fs", "std::net", "std::process", "std::env", "SystemTime::now", "Instant::now"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every package the engine reaches through normal dependencies, as `cargo tree -p
/// context-workbench -e normal` lists them: with the default features on every platform, or
/// for wasm32 with the `wasm` feature (the npm package's build).
fn engine_dependencies(wasm: bool) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut args = vec!["metadata", "--format-version", "1", "--locked"];
    if wasm {
        args.extend(["--features", "context-workbench/wasm", "--filter-platform", "wasm32-unknown-unknown"]);
    }
    let output = Command::new(cargo).args(args).current_dir(root()).output().expect("run cargo metadata");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: BTreeMap<&str, &Value> =
        metadata["resolve"]["nodes"].as_array().unwrap().iter().map(|n| (n["id"].as_str().unwrap(), n)).collect();
    let engine = names.iter().find(|(_, name)| **name == "context-workbench").map(|(id, _)| *id).unwrap();
    let mut seen = BTreeSet::new();
    let mut stack = vec![engine];
    while let Some(id) = stack.pop() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null());
            let dep_id = dep["pkg"].as_str().unwrap();
            if normal && seen.insert(names[dep_id].to_owned()) {
                stack.push(dep_id);
            }
        }
    }
    seen
}

/// The Rust files under `dir`, with their text up to a `#[cfg(test)]` module (tests may do I/O);
/// files that are test modules themselves (`#[cfg(test)] mod x;`) are left out.
fn engine_sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let test_modules: BTreeSet<PathBuf> = files
        .iter()
        .flat_map(|(path, text)| {
            let dir = path.parent().unwrap().to_path_buf();
            let lines: Vec<&str> = text.lines().collect();
            let declared = lines.windows(2).filter(|pair| pair[0].trim() == "#[cfg(test)]");
            let names = declared.filter_map(|pair| pair[1].trim().strip_prefix("mod ")?.strip_suffix(';'));
            names.map(move |name| dir.join(format!("{name}.rs"))).collect::<Vec<_>>()
        })
        .collect();
    files
        .into_iter()
        .filter(|(path, _)| !test_modules.contains(path))
        .map(|(path, text)| {
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default().to_owned();
            (path, code)
        })
        .collect()
}

fn shell_crates_in(dependencies: &BTreeSet<String>) -> Vec<&str> {
    SHELL_CRATES.iter().copied().filter(|name| dependencies.contains(*name)).collect()
}

#[test]
fn the_engine_depends_on_no_io_stack() {
    for wasm in [false, true] {
        let dependencies = engine_dependencies(wasm);
        assert!(dependencies.contains("tiktoken-rs"), "the walk found the engine's dependencies: {dependencies:?}");
        assert_eq!(dependencies.contains("wasm-bindgen"), wasm, "{dependencies:?}");
        let found = shell_crates_in(&dependencies);
        assert!(
            found.is_empty(),
            "the engine crate (context-workbench{}) reaches {found:?} through its normal dependencies; \
             I/O belongs to the shells (crates/workbench-cli, bindings/): move the code that needs it there",
            if wasm { ", wasm feature on wasm32" } else { "" }
        );
    }
}

#[test]
fn the_engine_names_no_file_system_network_process_or_clock() {
    let mut found = Vec::new();
    let sources = ["src", "crates/tokens/src"].into_iter().flat_map(|dir| engine_sources(&root().join(dir)));
    for (path, code) in sources {
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            for api in SHELL_APIS.iter().filter(|api| line.contains(**api)) {
                found.push(format!("{}:{}: {api}", path.strip_prefix(root()).unwrap().display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "the engine does I/O only through its Host (R11.1):\n{}", found.join("\n"));
}

/// `R5.6`-style citations in the repository's code, each with where it was first seen.
fn cited_requirements() -> BTreeMap<String, String> {
    let citation = regex::Regex::new(r"\bR([0-9]{1,2})\.([0-9]{1,2})\b").unwrap();
    let mut cited = BTreeMap::new();
    let dirs = ["src", "tests", "benches", "crates", "bindings/src", "vscode-extension/src", "prompts"];
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root().join(d)).collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if !path.ends_with("node_modules") {
                stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            }
            continue;
        }
        let kind = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["rs", "ts", "mjs", "md"].contains(&kind) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for m in citation.find_iter(&text) {
            cited
                .entry(m.as_str().to_owned())
                .or_insert_with(|| path.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    cited
}

#[test]
fn every_requirement_the_code_cites_is_defined_in_the_design() {
    let design = std::fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let cited = cited_requirements();
    assert!(cited.contains_key("R5.6"), "the walk found the code's citations: {cited:?}");
    let missing: Vec<String> = cited
        .iter()
        .filter(|(r, _)| !design.contains(&format!("**{r}**")))
        .map(|(r, file)| format!("{r} (cited in {file})"))
        .collect();
    assert!(missing.is_empty(), "cited but not defined in docs/design.md: {missing:?}");
}

/// The relative path `to` seen from the directory `dir` (both `/`-separated, relative to one
/// package root), or `None` if it climbs out of that root.
fn join_within(dir: &str, to: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in to.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// What `include_str!`, `include_bytes!` and `include!` name in `code`: a string literal, or the
/// whole argument when it is not one (a path built with `concat!` cannot be checked).
fn included_paths(code: &str) -> Vec<Result<String, String>> {
    let mut found = Vec::new();
    for macro_name in ["include_str!(", "include_bytes!(", "include!("] {
        for (at, _) in code.match_indices(macro_name) {
            let preceding = code[..at].chars().next_back();
            if preceding.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let argument = &code[at + macro_name.len()..];
            let argument = &argument[..argument.find(')').unwrap_or(argument.len())];
            found.push(match argument.trim().strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
                Some(path) if !path.contains(['"', '\\']) => Ok(path.to_owned()),
                _ => Err(argument.trim().to_owned()),
            });
        }
    }
    found
}

/// The workspace's packages that may be published, with their directories.
fn published_packages() -> Vec<(String, PathBuf)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["publish"].as_array().is_none_or(|registries| !registries.is_empty()))
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            (p["name"].as_str().unwrap().to_owned(), manifest.parent().unwrap().to_path_buf())
        })
        .collect()
}

/// A published crate builds from its `.crate` alone: every file its library or binaries embed
/// (`include_str!` and kin, in the packaged `.rs` files outside tests, benches and examples) is
/// in the package `cargo package --list` gives. CI also packages the crates (`.ci/test`); this
/// says which file is missing, and runs with the Rust tests.
#[test]
fn every_file_a_published_crate_embeds_is_in_its_package() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let packages = published_packages();
    let names: Vec<&str> = packages.iter().map(|(name, _)| name.as_str()).collect();
    assert!(names.contains(&"context-workbench") && names.contains(&"workbench-cli"), "{names:?}");
    assert!(!names.contains(&"context-workbench-testing"), "the test host is not published: {names:?}");
    let mut problems = Vec::new();
    let mut embedded = 0;
    for (name, dir) in &packages {
        // `--allow-dirty`: the list of what the working tree would package, committed or not.
        let output = Command::new(&cargo)
            .args(["package", "--list", "--locked", "--allow-dirty", "-p", name])
            .current_dir(root())
            .output()
            .expect("run cargo package --list");
        assert!(output.status.success(), "cargo package --list -p {name}: {}", String::from_utf8_lossy(&output.stderr));
        let listed: BTreeSet<String> = String::from_utf8(output.stdout).unwrap().lines().map(str::to_owned).collect();
        let built = listed.iter().filter(|file| {
            file.ends_with(".rs") && !["tests/", "benches/", "examples/"].iter().any(|d| file.starts_with(d))
        });
        for file in built {
            let code = std::fs::read_to_string(dir.join(file)).unwrap();
            let file_dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
            for path in included_paths(&code) {
                embedded += 1;
                match path.map(|path| (join_within(file_dir, &path), path)) {
                    Ok((Some(resolved), _)) if listed.contains(&resolved) => {}
                    Ok((_, path)) => problems.push(format!(
                        "{name}: {file} embeds {path:?}, which is not in the package (Cargo.toml's `include`, or a file outside the crate)"
                    )),
                    Err(argument) => {
                        problems.push(format!("{name}: {file} embeds `{argument}`, a path this test cannot check"))
                    }
                }
            }
        }
    }
    assert!(embedded >= 6, "the scan found the dashboard's files among the embedded ones ({embedded} in all)");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn join_within_stays_inside_the_package() {
    assert_eq!(join_within("src", "dashboard/dom.js").as_deref(), Some("src/dashboard/dom.js"));
    assert_eq!(join_within("src/goals", "../../prompts/goals.md").as_deref(), Some("prompts/goals.md"));
    assert_eq!(join_within("src", "../bindings/playground/dom.js").as_deref(), Some("bindings/playground/dom.js"));
    assert_eq!(join_within("src", "../../outside/x").as_deref(), None);
    let code =
        "const A: &str = include_str!(\"a.md\");\nconst B: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/b\"));";
    assert_eq!(included_paths(code), [Ok("a.md".to_owned()), Err("concat!(env!(\"OUT_DIR\"".to_owned())]);
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md")
}

/// The text of the section that starts at the line `heading` begins, up to the next heading of
/// the same level or higher.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc.find(&format!("\n{heading}")).unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{heading}`")) + 1;
    let level = heading.split(' ').next().unwrap();
    let rest = &doc[start + heading.len()..];
    let end = (1..=level.len()).filter_map(|n| rest.find(&format!("\n{} ", "#".repeat(n)))).min().unwrap_or(rest.len());
    &doc[start..start + heading.len() + end]
}

/// The names in backticks in `text`.
fn backticked(text: &str) -> BTreeSet<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The CLI's subcommands, as clap names them: the variants of `enum Command` in its `cli.rs`, in
/// kebab case unless a `#[command(name = "…")]` renames one.
fn cli_commands() -> BTreeSet<String> {
    let cli = std::fs::read_to_string(root().join("crates/workbench-cli/src/cli.rs")).unwrap();
    let body = cli.split("\nenum Command {\n").nth(1).expect("cli.rs declares `enum Command`");
    let body = &body[..body.find("\n}\n").expect("the end of `enum Command`")];
    let mut commands = BTreeSet::new();
    let mut renamed = None;
    for line in body.lines() {
        if let Some(name) = line.trim().strip_prefix("#[command(name = \"") {
            renamed = name.split('"').next().map(str::to_owned);
        }
        let Some(variant) = line.strip_prefix("    ").filter(|v| v.starts_with(|c: char| c.is_ascii_uppercase()))
        else {
            continue;
        };
        let ident: String = variant.chars().take_while(|c| c.is_alphanumeric()).collect();
        let kebab = ident.chars().enumerate().fold(String::new(), |mut name, (i, c)| {
            if c.is_ascii_uppercase() && i > 0 {
                name.push('-');
            }
            name.push(c.to_ascii_lowercase());
            name
        });
        commands.insert(renamed.take().unwrap_or(kebab));
    }
    commands
}

#[test]
fn the_architecture_names_every_cli_command() {
    let commands = cli_commands();
    assert!(commands.contains("llm-check") && commands.contains("proxy"), "parsed the CLI's commands: {commands:?}");
    let doc = architecture();
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let marker = "dispatches to one module per command (";
    let listed =
        &flat[flat.find(marker).expect("ARCHITECTURE.md's entry points name the CLI's commands") + marker.len()..];
    let listed = backticked(&listed[..listed.find(')').unwrap()]);
    assert_eq!(
        listed, commands,
        "ARCHITECTURE.md's entry points list the CLI's commands (crates/workbench-cli/src/cli.rs)"
    );
    let crate_section = backticked(section(&doc, "### `crates/workbench-cli`"));
    let missing: Vec<&String> = commands.iter().filter(|c| !crate_section.contains(*c)).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md's `crates/workbench-cli` section does not say what {missing:?} is");
}

/// The modules `src/lib.rs` declares, whatever their visibility and `cfg`.
fn declared_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
            line.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

#[test]
fn the_architecture_and_lib_rs_list_every_module() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let declared = declared_modules(&lib);
    assert!(declared.contains("engine") && declared.contains("ts_types"), "parsed src/lib.rs: {declared:?}");

    // The code map's headings: `src/x.rs`, `src/x/`.
    let doc = architecture();
    let code_map = section(&doc, "## Code map");
    let mapped: BTreeSet<String> = code_map
        .lines()
        .filter(|line| line.starts_with("### "))
        .flat_map(|line| line.split("`src/").skip(1))
        .map(|path| path.split(['/', '.', '`']).next().unwrap().to_owned())
        .filter(|name| !name.is_empty())
        .collect();
    assert_eq!(mapped, declared, "ARCHITECTURE.md's code map has one section per module of src/lib.rs");

    // src/lib.rs's own list: `//! - [`x`]: …` or `//! - `x` …`.
    let listed: BTreeSet<String> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//! - ")?.trim_start_matches('[').strip_prefix('`')?.split('`').next())
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, declared, "src/lib.rs's doc lists every module it declares");
}

/// The modules of `src/proxy` a module's code (not its tests, not its comments) names.
fn proxy_imports() -> BTreeMap<String, BTreeSet<String>> {
    let dir = root().join("src/proxy");
    let sources = engine_sources(&dir);
    let modules: BTreeSet<String> =
        sources.iter().map(|(path, _)| path.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    let mut imports = BTreeMap::new();
    for (path, code) in &sources {
        let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let named: BTreeSet<String> = code
            .split("super::")
            .skip(1)
            .flat_map(|after| {
                let list = after.strip_prefix('{').map(|l| l.split('}').next().unwrap_or_default());
                let names: Vec<&str> = match list {
                    Some(list) => list.split(',').collect(),
                    None => vec![after],
                };
                names.into_iter().map(|n| {
                    n.trim()
                        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                        .next()
                        .unwrap_or_default()
                        .to_owned()
                })
            })
            .filter(|name| modules.contains(name))
            .collect();
        imports.insert(path.file_stem().unwrap().to_string_lossy().into_owned(), named);
    }
    imports
}

#[test]
fn the_proxys_modules_import_one_another_without_a_circle() {
    let imports = proxy_imports();
    assert!(imports["session"].contains("request") && imports["anthropic"].contains("request"), "parsed: {imports:?}");
    // Take away, again and again, the modules that import none of those left: a circle remains.
    let mut left = imports.clone();
    while let Some(leaf) = left.iter().find(|(_, named)| named.iter().all(|n| !left.contains_key(n) || n == "mod")) {
        let leaf = leaf.0.clone();
        left.remove(&leaf);
    }
    assert!(left.is_empty(), "these modules of src/proxy import one another in a circle: {left:?}");
}

#[test]
fn only_the_seam_chooses_by_an_apis_format() {
    let dir = root().join("src/proxy");
    for (path, code) in engine_sources(&dir) {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if ["route", "providers"].contains(&name.as_str()) {
            continue;
        }
        let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        // An API's module names its own format when it builds a request; nothing compares one.
        let others =
            ["Anthropic", "OpenAi", "Responses", "Gemini"].iter().filter(|v| code.contains(&format!("Format::{v}")));
        assert!(others.count() <= 1, "{name}.rs names several formats: match on them in providers.rs");
        for pattern in ["== Format::", "!= Format::", "match format", "match self.format", "Format::Anthropic =>"] {
            assert!(!code.contains(pattern), "{name}.rs chooses by format (`{pattern}`): that is providers.rs's");
        }
    }
}
