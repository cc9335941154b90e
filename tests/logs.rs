//! The test/build log recognisers (R3.4): real pytest, Django/unittest and SymPy runs pulled from
//! the shared traces at test time, hand-written logs of every other runner's true format
//! (`tests/fixtures/logs/`), exact `render()` snapshots, and robustness on hostile input.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use context_workbench::compress::logs::{Diagnostic, Failure, LogFacts, recognise};
use expect_test::expect;
use serde_json::Value;

const TRACES: &str = "data/traces";

// ---------------------------------------------------------------------------------------------
// Reading the shared traces

/// A vorflux tool result as the agent saw it: the string, or stdout then stderr.
fn vorflux_result(result: &Value) -> Option<String> {
    match result {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => {
            let stdout = o.get("stdout").and_then(Value::as_str).unwrap_or_default();
            let stderr = o.get("stderr").and_then(Value::as_str).unwrap_or_default();
            Some(format!("{stdout}\n{stderr}"))
        }
        _ => None,
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The log of entry `index` of `vorflux/<file>.json`'s trajectory.
fn vorflux_log(file: &str, index: usize) -> String {
    let path = Path::new(TRACES).join("vorflux").join(format!("{file}.json"));
    let json = read_json(&path);
    let entry = &json["trajectory"][index];
    assert_eq!(entry["type"], "tool_call", "{file}[{index}] is not a tool call");
    vorflux_result(&entry["result"]).unwrap_or_else(|| panic!("{file}[{index}] has no result"))
}

fn sorted_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// Text of a Claude Code `tool_result` block.
fn block_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Every tool output of the shared traces, named `file#n`.
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(TRACES);
    let mut out = Vec::new();
    for path in sorted_files(&root.join("vorflux"), ".json") {
        let json = read_json(&path);
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        for (i, e) in json["trajectory"].as_array().into_iter().flatten().enumerate() {
            if e["type"] == "tool_call"
                && let Some(log) = vorflux_result(&e["result"])
            {
                out.push((format!("{name}#{i}"), log));
            }
        }
    }
    for path in sorted_files(&root.join("swe-agent"), ".traj") {
        let json = read_json(&path);
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        for (i, step) in json["trajectory"].as_array().into_iter().flatten().enumerate() {
            if let Some(obs) = step["observation"].as_str() {
                out.push((format!("{name}#{i}"), obs.to_owned()));
            }
        }
    }
    let openhands = root.join("openhands").join("multi_swe_bench_examples_output.jsonl");
    for (l, line) in std::fs::read_to_string(&openhands).expect("openhands").lines().enumerate() {
        let run: Value = serde_json::from_str(line).expect("openhands line");
        for (i, ev) in run["history"].as_array().into_iter().flatten().enumerate() {
            if ev.get("observation").is_some()
                && let Some(content) = ev["content"].as_str()
            {
                out.push((format!("openhands:{l}#{i}"), content.to_owned()));
            }
        }
    }
    for path in sorted_files(&root.join("claude-code"), ".jsonl") {
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("claude code");
        for (l, line) in text.lines().enumerate() {
            let Ok(msg) = serde_json::from_str::<Value>(line) else { continue };
            for (k, block) in msg["message"]["content"].as_array().into_iter().flatten().enumerate() {
                if block["type"] == "tool_result" {
                    out.push((format!("{name}:{l}#{k}"), block_text(&block["content"])));
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Independent scans: what a reader would call the failing tests of a log

/// unittest/Django: the `FAIL: …` / `ERROR: …` header lines.
fn unittest_names(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("FAIL: ").or_else(|| l.strip_prefix("ERROR: ")))
        .map(|n| n.trim().to_owned())
        .collect()
}

/// pytest: the node ids of the `FAILED …` / `ERROR …` short-summary lines.
fn pytest_names(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("FAILED ").or_else(|| l.strip_prefix("ERROR ")))
        .filter(|rest| !rest.starts_with('('))
        .map(|rest| {
            // The message follows ` - `, after any `[parameters]`.
            let end = rest.find(']').map_or(0, |i| i + 1);
            let cut = rest.get(end..).and_then(|tail| tail.find(" - ")).map_or(rest.len(), |i| end + i);
            rest.get(..cut).unwrap_or(rest).trim().to_owned()
        })
        .collect()
}

/// `path:line` or `path:line:col`.
fn is_path_line(location: &str) -> bool {
    let mut parts = location.rsplitn(3, ':');
    let last = parts.next().unwrap_or_default();
    let second = parts.next().unwrap_or_default();
    let rest = parts.next();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match rest {
        Some(path) if digits(last) && digits(second) => !path.is_empty(),
        _ => digits(last) && !second.is_empty(),
    }
}

fn facts(log: &str) -> LogFacts {
    recognise(log).unwrap_or_else(|| panic!("not recognised:\n{log}"))
}

fn fixture(name: &str) -> String {
    let path = Path::new("tests/fixtures/logs").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn failure(location: &str, message: &str) -> Option<Failure> {
    Some(Failure { location: Some(location.to_owned()), message: message.to_owned() })
}

fn diag(severity: &str, location: &str, code: Option<&str>, message: &str) -> Diagnostic {
    Diagnostic {
        severity: severity.to_owned(),
        location: location.to_owned(),
        code: code.map(str::to_owned),
        message: message.to_owned(),
    }
}

fn counts(f: &LogFacts) -> (Option<u64>, Option<u64>, Option<u64>, Option<u64>) {
    (f.passed, f.failed, f.errors, f.skipped)
}

// ---------------------------------------------------------------------------------------------
// Real runs from the traces

#[test]
fn django_runs_from_the_traces() {
    // Ran 74 tests, FAILED (failures=1), verbose output cut by `tail`.
    let log = vorflux_log("django__django-16950", 168);
    let f = facts(&log);
    assert_eq!(f.tool, "unittest");
    assert_eq!(counts(&f), (Some(73), Some(1), Some(0), Some(0)));
    assert_eq!(
        f.failing,
        [
            "test_inlineformset_factory_nulls_default_pks_alternate_key_relation (model_formsets.test_uuid.InlineFormsetTests.test_inlineformset_factory_nulls_default_pks_alternate_key_relation)"
        ]
    );
    assert_eq!(
        f.first_failure,
        failure(
            "/code/django/django/tests/model_formsets/test_uuid.py:93",
            "AssertionError: UUID('02910914-4839-4ed0-8dbf-5143213aa177') is not None"
        )
    );

    // Ran 172 tests, 5 failures of which `tail -30` kept two headers.
    let f = facts(&vorflux_log("django__django-16819", 210));
    assert_eq!(counts(&f), (Some(167), Some(5), Some(0), Some(0)));
    assert_eq!(f.failing.len(), 2);
    assert_eq!(
        f.first_failure,
        failure("/code/django/django/tests/migrations/test_autodetector.py:2589", "AssertionError: 1 != 2")
    );

    // A grep of a verbose run: docstring lines `Doc ... ERROR` under their test names.
    let f = facts(&vorflux_log("django__django-15973", 1144));
    assert_eq!(counts(&f), (Some(1), Some(1), Some(1), Some(0)));
    assert_eq!(
        f.failing,
        [
            "test_reload_model_m2m_through_in_different_app (migrations.test_state.StateTests.test_reload_model_m2m_through_in_different_app)",
            "test_create_model_with_m2m_through_in_different_app (migrations.test_operations.OperationTests.test_create_model_with_m2m_through_in_different_app)",
        ]
    );
    // The traceback was cut by grep: the location is still there.
    let first = f.first_failure.expect("first failure");
    assert_eq!(first.location.as_deref(), Some("/code/django/django/django/utils/functional.py:57"));

    // A test module that fails to import: `ERROR: SchemaTests (unittest.loader._FailedTest…)`.
    let f = facts(&vorflux_log("django__django-15732", 436));
    assert_eq!(counts(&f), (Some(0), Some(0), Some(1), Some(0)));
    assert_eq!(f.failing, ["SchemaTests (unittest.loader._FailedTest.SchemaTests)"]);
    assert_eq!(
        f.first_failure,
        failure(
            "/usr/lib/python3.12/unittest/loader.py:137",
            "ModuleNotFoundError: No module named 'schema.SchemaTests'"
        )
    );

    // Three failures, two passes.
    let f = facts(&vorflux_log("django__django-15732", 700));
    assert_eq!(counts(&f), (Some(2), Some(3), Some(0), Some(0)));
    assert_eq!(f.failing.len(), 3);
    let first = f.first_failure.expect("first failure");
    assert_eq!(first.location.as_deref(), Some("/code/django/django/tests/schema/tests.py:2723"));
    assert!(first.message.starts_with("AssertionError: alter_unique_together raised ValueError"), "{first:?}");

    // Subtest failures found by `grep -A 15 "^FAIL:"`: no rules between the headers.
    let f = facts(&vorflux_log("django__django-16819", 226));
    assert_eq!(f.failing.len(), 2);
    assert!(f.failing[1].ends_with("(operation='AddConstraint')"));
}

#[test]
fn pytest_runs_from_the_traces() {
    // `-v -x`, long tracebacks: the crash line is the deepest `path:line: Type`.
    let f = facts(&vorflux_log("matplotlib__matplotlib-26291", 166));
    assert_eq!(f.tool, "pytest");
    assert_eq!(counts(&f), (Some(1), Some(1), Some(0), Some(0)));
    assert_eq!(
        f.failing,
        ["lib/mpl_toolkits/axes_grid1/tests/test_axes_grid1.py::test_twin_axes_empty_and_removed[png]"]
    );
    // A warning raised as an error deep in an installed package (#19.6): the failure is placed
    // where the project's code called into it, never on the package's warning line.
    let first = f.first_failure.expect("first failure");
    assert_eq!(first.location.as_deref(), Some("lib/matplotlib/__init__.py:223"));
    assert!(first.message.starts_with("DeprecationWarning: Version scheme 'release-branch-semver'"), "{first:?}");
    let f = facts(&vorflux_log("matplotlib__matplotlib-24149", 70));
    assert_eq!(
        f.first_failure,
        failure(
            "lib/matplotlib/axes/_axes.py:3610",
            "DeprecationWarning: `row_stack` alias is deprecated. Use `np.vstack` directly."
        )
    );

    let f = facts(&vorflux_log("psf__requests-6028", 366));
    assert_eq!(counts(&f), (Some(137), Some(1), Some(0), Some(0)));
    assert_eq!(f.failing, ["tests/test_requests.py::TestRequests::test_https_warnings"]);
    assert_eq!(
        f.first_failure,
        failure(
            "/home/ubuntu/.local/lib/python3.12/site-packages/_pytest/recwarn.py:282",
            "TypeError: exceptions must be derived from Warning, not <class 'NoneType'>"
        )
    );

    // A collection error: `ERROR tests/test_self.py`, `--tb=short`-style entries.
    let f = facts(&vorflux_log("pylint-dev__pylint-6386", 59));
    assert_eq!(counts(&f), (Some(0), Some(0), Some(1), Some(0)));
    assert_eq!(f.failing, ["tests/test_self.py"]);
    assert_eq!(
        f.first_failure,
        failure("tests/test_self.py:29", "ModuleNotFoundError: No module named 'py._path'; 'py' is not a package")
    );

    // `-q` output cut by `tail -30`: the bare summary line and 29 of the 47 names.
    let log = vorflux_log("matplotlib__matplotlib-24149", 72);
    let f = facts(&log);
    assert_eq!(counts(&f), (Some(5), Some(47), Some(0), Some(6)));
    assert_eq!(f.failing.len(), 29);
    assert_eq!(f.failing, pytest_names(&log));
    assert!(f.failing.contains(&"lib/matplotlib/tests/test_axes.py::test_bar_label_fmt[%.2f]".to_owned()));

    // `-x` with the crash deep in the library.
    let f = facts(&vorflux_log("pydata__xarray-4966", 73));
    assert_eq!(counts(&f), (Some(0), Some(1), Some(0), Some(0)));
    assert_eq!(
        f.first_failure,
        failure(
            "/code/pydata/xarray/xarray/coding/times.py:347",
            "AttributeError: 'numpy.datetime64' object has no attribute 'year'"
        )
    );
}

#[test]
fn sympy_runner_from_the_traces() {
    let f = facts(&vorflux_log("sympy__sympy-21596", 141));
    assert_eq!(f.tool, "sympy test");
    assert_eq!(counts(&f), (Some(47), Some(1), Some(0), Some(0)));
    assert_eq!(f.failing, ["sympy/sets/tests/test_fancysets.py:test_imageset_intersect_real"]);
    assert_eq!(f.first_failure, failure("/code/sympy/sympy/sympy/sets/tests/test_fancysets.py:660", "AssertionError"));
}

#[test]
fn python_tracebacks_from_the_traces() {
    let f = facts(&vorflux_log("sympy__sympy-17630", 144));
    assert_eq!(f.tool, "python traceback");
    assert_eq!(f.first_failure, failure("<stdin>:11", "AttributeError: 'ZeroMatrix' object has no attribute 'blocks'"));

    let f = facts(&vorflux_log("django__django-15732", 474));
    assert_eq!(f.tool, "python traceback");
    let first = f.first_failure.expect("first failure");
    assert_eq!(first.location.as_deref(), Some("/code/django/django/django/db/models/base.py:132"));
    assert!(first.message.starts_with("RuntimeError: Model class __main__.UniqueFieldWithUniqueTogether"));
}

#[test]
fn tsc_from_the_traces() {
    let path = sorted_files(&Path::new(TRACES).join("claude-code"), ".jsonl")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("fe5e1c67"))
        .expect("the fe5e1c67 session");
    let text = std::fs::read_to_string(path).expect("session");
    let log = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|m| m["message"]["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| block_text(&b["content"]))
        .find(|t| t.contains("error TS2307"))
        .expect("a tsc run");
    let f = facts(&log);
    assert_eq!(f.tool, "tsc");
    assert_eq!((f.error_count, f.warning_count), (Some(1), None));
    assert_eq!(
        f.diagnostics,
        [diag(
            "error",
            "src/hooks/useTodos.test.ts:6:33",
            Some("TS2307"),
            "Cannot find module '@testing-library/react' or its corresponding type declarations."
        )]
    );
}

/// Over every tool output of every shared trace: nothing panics, every failing name a reader
/// finds is in `failing` and in the rendering, and locations are `path:line`.
#[test]
fn every_shared_tool_output() {
    let mut by_tool: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut failing_runs = 0;
    let mut with_location = 0;
    let mut slowest = Duration::ZERO;
    let crash_line = regex::Regex::new(r"(?m)^[^\s:]+\.py:\d+: ").expect("regex");
    for (name, log) in corpus() {
        let start = Instant::now();
        let got = recognise(&log);
        slowest = slowest.max(start.elapsed());
        let Some(f) = got else { continue };
        *by_tool.entry(f.tool).or_default() += 1;
        let rendered = f.render();
        assert!(rendered.starts_with(f.tool), "{name}: {rendered}");
        for n in &f.failing {
            assert!(rendered.contains(n.as_str()), "{name}: {n} not rendered");
        }
        let expected = match f.tool {
            "unittest" => unittest_names(&log),
            "pytest" => pytest_names(&log),
            _ => Vec::new(),
        };
        for n in &expected {
            assert!(f.failing.contains(n), "{name}: failing name {n:?} lost; got {:?}", f.failing);
        }
        if let Some(first) = &f.first_failure
            && let Some(location) = &first.location
        {
            assert!(is_path_line(location), "{name}: location {location:?}");
            with_location += 1;
        }
        if !f.failing.is_empty() {
            failing_runs += 1;
        }
        // A failing run whose log shows a traceback frame carries a location.
        let frame = log.contains("Traceback (most recent call last):\n  File \"")
            || (log.contains(" FAILURES ==") || log.contains(" ERRORS ==")) && crash_line.is_match(&log);
        if !f.failing.is_empty() && frame {
            assert!(f.first_failure.as_ref().and_then(|x| x.location.as_ref()).is_some(), "{name}: no location");
        }
    }
    assert!(by_tool.get("unittest").copied().unwrap_or(0) >= 150, "{by_tool:?}");
    assert!(by_tool.get("pytest").copied().unwrap_or(0) >= 80, "{by_tool:?}");
    assert!(by_tool.get("python traceback").copied().unwrap_or(0) >= 50, "{by_tool:?}");
    assert!(failing_runs >= 60, "{failing_runs} failing runs");
    assert!(with_location >= 100, "{with_location} locations");
    assert!(slowest < Duration::from_secs(2), "slowest log took {slowest:?}");
}

// ---------------------------------------------------------------------------------------------
// Hand-written logs of the other runners

#[test]
fn pytest_summary_and_short_summary() {
    let log = "\
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/dev/app
collected 123 items

tests/test_a.py ..F.......................................................s [ 47%]
tests/test_b.py ..........................F.............................ss [ 95%]
tests/test_c.py .....                                                    [100%]

=================================== FAILURES ===================================
____________________________________ test_x ____________________________________

    def test_x():
>       assert 1 == 2
E       assert 1 == 2

tests/test_a.py:40: AssertionError
__________________________________ test_y[a - b] __________________________________

    def test_y(p):
>       assert p.ok
E       AttributeError: 'str' object has no attribute 'ok'

tests/test_b.py:12: AttributeError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - assert 1 == 2
FAILED tests/test_b.py::test_y[a - b] - AttributeError: 'str' object has no attribute 'ok'
================== 2 failed, 118 passed, 3 skipped in 1.21s ===================
";
    let f = facts(log);
    assert_eq!(f.tool, "pytest");
    assert_eq!(counts(&f), (Some(118), Some(2), Some(0), Some(3)));
    assert_eq!(f.failing, ["tests/test_a.py::test_x", "tests/test_b.py::test_y[a - b]"]);
    assert_eq!(f.first_failure, failure("tests/test_a.py:40", "AssertionError: assert 1 == 2"));
    expect![[r#"
        pytest: 2 failed, 118 passed, 3 skipped
        failing (2): tests/test_a.py::test_x, tests/test_b.py::test_y[a - b]
        first failure: tests/test_a.py:40: AssertionError: assert 1 == 2"#]]
    .assert_eq(&f.render());

    // `-q --tb=line`, xdist.
    let log = "\
[gw0] [ 50%] PASSED tests/test_a.py::test_ok
[gw1] [100%] FAILED tests/test_a.py::test_x
=================================== FAILURES ===================================
/home/dev/app/tests/test_a.py:40: assert 1 == 2
1 failed, 1 passed in 0.31s
";
    let f = facts(log);
    assert_eq!(counts(&f), (Some(1), Some(1), Some(0), Some(0)));
    assert_eq!(f.failing, ["tests/test_a.py::test_x"]);
    assert_eq!(f.first_failure, failure("/home/dev/app/tests/test_a.py:40", "assert 1 == 2"));
}

#[test]
fn cargo_test() {
    let f = facts(&fixture("cargo_test.log"));
    assert_eq!(f.tool, "cargo test");
    assert_eq!(counts(&f), (Some(1), Some(2), None, Some(1)));
    assert_eq!(f.failing, ["tests::divides", "tests::parses_negative"]);
    assert_eq!(f.first_failure, failure("src/lib.rs:41:9", "assertion `left == right` failed left: 2 right: 3"));
    expect![[r#"
        cargo test: 2 failed, 1 passed, 1 skipped
        failing (2): tests::divides, tests::parses_negative
        first failure: src/lib.rs:41:9: assertion `left == right` failed left: 2 right: 3"#]]
    .assert_eq(&f.render());
}

#[test]
fn jest() {
    let f = facts(&fixture("jest.log"));
    assert_eq!(f.tool, "jest");
    assert_eq!(counts(&f), (Some(3), Some(2), None, Some(1)));
    // The verbose `✕` lines are the same tests as the `●` headers.
    assert_eq!(f.failing, ["Cart › applies the discount", "Cart › rejects negative quantities"]);
    assert_eq!(
        f.first_failure,
        failure("src/cart/cart.test.ts:14:26", "expect(received).toBe(expected) // Object.is equality")
    );
    expect![[r#"
        jest: 2 failed, 3 passed, 1 skipped
        failing (2): Cart › applies the discount, Cart › rejects negative quantities
        first failure: src/cart/cart.test.ts:14:26: expect(received).toBe(expected) // Object.is equality"#]]
    .assert_eq(&f.render());

    // A suite that fails to run names its file.
    let log = " FAIL  src/broken.test.ts\n  ● Test suite failed to run\n\n    Cannot find module './missing' from 'src/broken.test.ts'\n\n      at Resolver._throwModNotFoundError (node_modules/jest-resolve/build/resolver.js:427:11)\n\nTest Suites: 1 failed, 1 total\nTests:       0 total\n";
    let f = facts(log);
    assert_eq!(f.failing, ["src/broken.test.ts"]);
    assert_eq!(
        f.first_failure,
        Some(Failure { location: None, message: "Cannot find module './missing' from 'src/broken.test.ts'".into() })
    );
}

#[test]
fn vitest() {
    let f = facts(&fixture("vitest.log"));
    assert_eq!(f.tool, "vitest");
    assert_eq!(counts(&f), (Some(7), Some(2), None, Some(1)));
    assert_eq!(
        f.failing,
        [
            "src/cart/cart.test.ts > Cart > applies the discount",
            "src/cart/cart.test.ts > Cart > rejects negative quantities"
        ]
    );
    assert_eq!(
        f.first_failure,
        failure("src/cart/cart.test.ts:14:26", "AssertionError: expected 100 to be 90 // Object.is equality")
    );
}

#[test]
fn node_test_tap_and_spec() {
    let f = facts(&fixture("node_tap.log"));
    assert_eq!(f.tool, "node:test");
    assert_eq!(counts(&f), (Some(1), Some(1), None, Some(1)));
    assert_eq!(f.failing, ["rejects empty input"]);
    assert_eq!(
        f.first_failure,
        failure("/home/dev/parser/test/parse.test.mjs:14:10", "Expected values to be strictly equal:")
    );

    let f = facts(&fixture("node_spec.log"));
    assert_eq!(f.tool, "node:test");
    assert_eq!(counts(&f), (Some(1), Some(1), None, Some(1)));
    assert_eq!(f.failing, ["rejects empty input"]);
    assert_eq!(
        f.first_failure,
        failure(
            "/home/dev/parser/test/parse.test.mjs:14:10",
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:"
        )
    );
}

#[test]
fn go_test() {
    let f = facts(&fixture("go_verbose.log"));
    assert_eq!(f.tool, "go test");
    assert_eq!(counts(&f), (Some(4), Some(2), None, Some(1)));
    assert_eq!(f.failing, ["TestParse", "TestParse/number"]);
    assert_eq!(f.first_failure, failure("parse_test.go:27", "Parse(\"42\") = 0, want 42"));

    let f = facts(&fixture("go_plain.log"));
    assert_eq!(counts(&f), (None, Some(3), None, None));
    assert_eq!(f.failing, ["TestTotal", "TestParse", "TestParse/negative", "example.com/shop/pay [build failed]"]);
    assert_eq!(f.first_failure, failure("cart_test.go:19", "Total() = 100, want 90"));
    assert_eq!(f.error_count, Some(2));
    assert_eq!(
        f.diagnostics,
        [
            diag("error", "pay/pay_test.go:9:2", None, "undefined: Refund"),
            diag("error", "pay/pay_test.go:15:7", None, "too many arguments in call to Charge"),
        ]
    );
    expect![[r#"
        go test: 3 failed, 2 errors
        failing (4): TestTotal, TestParse, TestParse/negative, example.com/shop/pay [build failed]
        first failure: cart_test.go:19: Total() = 100, want 90
        error pay/pay_test.go:9:2: undefined: Refund
        error pay/pay_test.go:15:7: too many arguments in call to Charge"#]]
    .assert_eq(&f.render());
}

#[test]
fn maven_surefire() {
    let f = facts(&fixture("surefire.log"));
    assert_eq!(f.tool, "surefire");
    assert_eq!(counts(&f), (Some(7), Some(1), Some(1), Some(1)));
    // The `Results:` lines name the same two tests.
    assert_eq!(f.failing, ["com.example.calc.CalculatorTest.divides", "com.example.calc.CalculatorTest.parsesInput"]);
    assert_eq!(
        f.first_failure,
        failure("CalculatorTest.java:27", "org.opentest4j.AssertionFailedError: expected: <2.5> but was: <2.0>")
    );

    // Surefire 2's `testFoo(com.x.FooTest)` form.
    let log = "\
Running com.example.FooTest
Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec <<< FAILURE! - in com.example.FooTest
testFoo(com.example.FooTest)  Time elapsed: 0.01 sec  <<< FAILURE!
java.lang.AssertionError: expected:<1> but was:<2>
	at org.junit.Assert.fail(Assert.java:88)
	at com.example.FooTest.testFoo(FooTest.java:12)

Results :

Failed tests: 
  FooTest.testFoo:12 expected:<1> but was:<2>

Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
";
    let f = facts(log);
    assert_eq!(counts(&f), (Some(1), Some(1), Some(0), Some(0)));
    assert_eq!(f.failing, ["testFoo(com.example.FooTest)"]);
    assert_eq!(f.first_failure, failure("FooTest.java:12", "java.lang.AssertionError: expected:<1> but was:<2>"));
}

#[test]
fn gradle() {
    let f = facts(&fixture("gradle.log"));
    assert_eq!(f.tool, "gradle");
    assert_eq!(counts(&f), (Some(7), Some(2), None, Some(1)));
    assert_eq!(f.failing, ["CalculatorTest > divides()", "CalculatorTest > parsesInput()"]);
    assert_eq!(f.first_failure, failure("CalculatorTest.java:27", "org.opentest4j.AssertionFailedError"));
}

#[test]
fn tsc() {
    let f = facts(&fixture("tsc_plain.log"));
    assert_eq!(f.tool, "tsc");
    assert_eq!((f.error_count, f.warning_count), (Some(3), None));
    assert_eq!(f.diagnostics.len(), 3);
    assert_eq!(
        f.diagnostics[0],
        diag(
            "error",
            "src/api/client.ts:42:17",
            Some("TS2345"),
            "Argument of type 'string' is not assignable to parameter of type 'number'."
        )
    );

    let f = facts(&fixture("tsc_pretty.log"));
    assert_eq!((f.error_count, f.warning_count), (Some(2), None));
    assert_eq!(
        f.diagnostics.iter().map(|d| d.location.as_str()).collect::<Vec<_>>(),
        ["src/api/client.ts:42:17", "src/models/user.ts:8:3"]
    );
    expect![[r#"
        tsc: 2 errors
        error[TS2345] src/api/client.ts:42:17: Argument of type 'string' is not assignable to parameter of type 'number'.
        error[TS2741] src/models/user.ts:8:3: Property 'email' is missing in type '{ name: string; }' but required in type 'User'."#]]
    .assert_eq(&f.render());
}

#[test]
fn eslint() {
    let f = facts(&fixture("eslint.log"));
    assert_eq!(f.tool, "eslint");
    assert_eq!((f.error_count, f.warning_count), (Some(2), Some(1)));
    assert_eq!(
        f.diagnostics,
        [
            diag(
                "error",
                "/home/dev/shop/src/cart/cart.ts:3:10",
                Some("@typescript-eslint/no-unused-vars"),
                "'lodash' is defined but never used"
            ),
            diag("error", "/home/dev/shop/src/index.ts:1:1", None, "Parsing error: Unexpected token"),
            diag("warning", "/home/dev/shop/src/cart/cart.ts:27:5", Some("no-console"), "Unexpected console statement"),
        ]
    );
}

#[test]
fn rustc() {
    let f = facts(&fixture("rustc.log"));
    assert_eq!(f.tool, "rustc");
    assert_eq!((f.error_count, f.warning_count), (Some(2), Some(1)));
    assert_eq!(
        f.diagnostics,
        [
            diag("error", "src/lib.rs:20:5", Some("E0308"), "mismatched types"),
            diag("error", "src/lib.rs:31:17", Some("E0425"), "cannot find value `taxes` in this scope"),
            diag("warning", "src/lib.rs:12:9", Some("unused_variables"), "unused variable: `scale`"),
        ]
    );
    expect![[r#"
        rustc: 2 errors, 1 warning
        error[E0308] src/lib.rs:20:5: mismatched types
        error[E0425] src/lib.rs:31:17: cannot find value `taxes` in this scope
        warning[unused_variables] src/lib.rs:12:9: unused variable: `scale`"#]]
    .assert_eq(&f.render());

    // Many errors: ten rendered, then how many more.
    let mut log = String::new();
    for i in 1..=60 {
        log.push_str(&format!("error[E0425]: cannot find value `v{i}` in this scope\n --> src/main.rs:{i}:5\n\n"));
    }
    log.push_str("error: could not compile `big` (bin \"big\") due to 60 previous errors\n");
    let f = facts(&log);
    assert_eq!((f.error_count, f.diagnostics.len()), (Some(60), 50));
    let rendered = f.render();
    assert_eq!(rendered.lines().count(), 12, "{rendered}");
    assert!(rendered.ends_with("\n(+50 more)"), "{rendered}");
}

#[test]
fn gcc_and_mypy() {
    let f = facts(&fixture("gcc.log"));
    assert_eq!(f.tool, "gcc");
    assert_eq!((f.error_count, f.warning_count), (Some(2), Some(1)));
    assert_eq!(
        f.diagnostics,
        [
            diag("error", "parser.c:22:12", None, "‘buf’ undeclared (first use in this function)"),
            diag("error", "parser.c:30:1", None, "expected ‘;’ before ‘}’ token"),
            diag("warning", "parser.c:14:9", Some("-Wunused-variable"), "unused variable ‘sign’"),
        ]
    );

    let f = facts(&fixture("mypy.log"));
    assert_eq!(f.tool, "mypy");
    assert_eq!((f.error_count, f.warning_count), (Some(2), Some(0)));
    assert_eq!(
        f.diagnostics[0],
        diag(
            "error",
            "src/shop/cart.py:14",
            Some("arg-type"),
            "Argument 1 to \"apply\" has incompatible type \"str\"; expected \"float\""
        )
    );
}

#[test]
fn the_runner_wins_over_its_tracebacks() {
    // Django output with tracebacks is unittest; the same traceback alone is a traceback.
    let traceback = "Traceback (most recent call last):\n  File \"/app/tests.py\", line 5, in test_b\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n";
    let django = format!(
        "======================================================================\nFAIL: test_b (app.tests.T.test_b)\n----------------------------------------------------------------------\n{traceback}\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
    );
    assert_eq!(facts(&django).tool, "unittest");
    let f = facts(traceback);
    assert_eq!(f.tool, "python traceback");
    assert_eq!(f.first_failure, failure("/app/tests.py:5", "AssertionError: 1 != 2"));
    expect![[r#"python traceback: /app/tests.py:5: AssertionError: 1 != 2"#]].assert_eq(&f.render());
}

#[test]
fn unittest_render_snapshot() {
    let f = facts(&vorflux_log("django__django-16950", 168));
    expect![[r#"
        unittest: 1 failed, 73 passed
        failing (1): test_inlineformset_factory_nulls_default_pks_alternate_key_relation (model_formsets.test_uuid.InlineFormsetTests.test_inlineformset_factory_nulls_default_pks_alternate_key_relation)
        first failure: /code/django/django/tests/model_formsets/test_uuid.py:93: AssertionError: UUID('02910914-4839-4ed0-8dbf-5143213aa177') is not None"#]]
    .assert_eq(&f.render());
}

// ---------------------------------------------------------------------------------------------
// Robustness

#[test]
fn empty_unknown_and_junk_input() {
    assert_eq!(recognise(""), None);
    assert_eq!(recognise("\n\n   \n"), None);
    assert_eq!(recognise("total 12\ndrwxr-xr-x 2 dev dev 4096 src\n-rw-r--r-- 1 dev dev 120 Cargo.toml\n"), None);
    assert_eq!(recognise("hello world"), None);

    let bytes: Vec<u8> = (0..=255u8).cycle().take(1 << 16).collect();
    let junk = String::from_utf8_lossy(&bytes);
    assert_eq!(recognise(&junk), None);

    // Pseudo-random mixes of every runner's markers, cut anywhere: never a panic.
    let pieces = [
        "FAILED ",
        "ERROR ",
        "::",
        "[",
        "]",
        " - ",
        "=== ",
        " ===",
        "1 failed",
        ", ",
        " in 0.1s",
        "\n",
        "\r\n",
        "____ ",
        "E   ",
        ":12: ",
        "Traceback (most recent call last):",
        "  File \"",
        "\", line ",
        ", in f",
        "FAIL: ",
        "-----",
        "=====",
        "Ran 3 tests in 0.1s",
        "FAILED (failures=",
        "test result: FAILED. ",
        "thread 'x' panicked at ",
        "src/lib.rs:1:2:",
        "---- ",
        " stdout ----",
        "failures:",
        "    ",
        "● ",
        " › ",
        "✕ ",
        "×",
        "❯ ",
        "Tests: ",
        "not ok 1 - ",
        "# fail 1",
        "ℹ pass 2",
        "--- FAIL: ",
        " (0.00s)",
        "x_test.go:3: ",
        "panic: ",
        "Tests run: 1, ",
        "<<< FAILURE!",
        " > ",
        " FAILED",
        "\tat a.B.c(B.java:3)",
        "(3,4): error TS1: ",
        "error[E1]: ",
        " --> ",
        "a.c:1:2: error: ",
        "✖ 1 problem (1 error, 0 warnings)",
        "  1:2  error  msg  rule",
        "é",
        "😀",
        "\u{0}",
        "…",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2_000 {
        let mut log = String::new();
        for _ in 0..(seed % 60) {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            log.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        if let Some(f) = recognise(&log) {
            let _ = f.render();
        }
    }
}

#[test]
fn real_logs_cut_anywhere() {
    let logs = [
        vorflux_log("django__django-15973", 1144),
        vorflux_log("matplotlib__matplotlib-26291", 166),
        fixture("cargo_test.log"),
        fixture("jest.log"),
        fixture("vitest.log"),
        fixture("node_tap.log"),
        fixture("surefire.log"),
        fixture("rustc.log"),
    ];
    for log in &logs {
        let cuts: Vec<usize> = log.char_indices().map(|(i, _)| i).step_by(7).collect();
        for &i in &cuts {
            for part in [log.get(..i).unwrap_or_default(), log.get(i..).unwrap_or_default()] {
                if let Some(f) = recognise(part) {
                    let _ = f.render();
                }
            }
        }
    }
}

#[test]
fn a_one_megabyte_line() {
    let long = "x".repeat(1 << 20);
    let wide = "é".repeat(1 << 19);
    let lines = [
        format!("FAILED tests/a.py::{long} - {wide}"),
        format!("tests/a.py::{long} FAILED"),
        format!("=== 1 failed in 0.1s ===\nFAILED a.py::t - {wide}"),
        format!("Ran 1 test in 0.1s\nFAILED (failures=1)\nFAIL: {long} (a.B)"),
        format!("test result: FAILED. 0 passed; 1 failed; 0 ignored\ntest {long} ... FAILED"),
        format!("thread 'x' panicked at src/lib.rs:1:1:\n{wide}\ntest result: FAILED. 0 passed; 1 failed; 0 ignored"),
        format!("--- FAIL: Test{long} (0.00s)\n    a_test.go:1: {wide}"),
        format!("Tests: 1 failed, 1 total\n  ● {long} › {wide}"),
        format!("Traceback (most recent call last):\n  File \"{long}\", line 1, in f\nValueError: {wide}"),
        format!("error[E0308]: {wide}\n --> src/{long}.rs:1:1"),
        format!("src/{long}.ts(1,1): error TS2345: {wide}"),
        format!("a.c:1:1: error: {wide}"),
        format!("not ok 1 - {long}\n# fail 1"),
        long.clone(),
        wide.clone(),
    ];
    for log in &lines {
        let start = Instant::now();
        if let Some(f) = recognise(log) {
            let rendered = f.render();
            // Names and locations are cut to 1,000 characters, messages to 300.
            assert!(rendered.chars().count() < 5_000, "{} chars", rendered.chars().count());
            for d in &f.diagnostics {
                assert!(d.message.chars().count() <= 301);
            }
            if let Some(first) = &f.first_failure {
                assert!(first.message.chars().count() <= 301);
            }
        }
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    }
}

#[test]
fn twenty_megabytes_of_passing_tests_is_fast() {
    let mut log = String::with_capacity(21 << 20);
    log.push_str("============================= test session starts ==============================\n");
    let mut n = 0u64;
    while log.len() < 20 << 20 {
        log.push_str(&format!("tests/test_big.py::test_case_{n} PASSED                                  [ 50%]\n"));
        n += 1;
    }
    log.push_str(&format!("============================= {n} passed in 12.34s =============================\n"));
    let start = Instant::now();
    let f = facts(&log);
    let elapsed = start.elapsed();
    assert_eq!(counts(&f), (Some(n), Some(0), Some(0), Some(0)));
    assert!(f.failing.is_empty());
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    // Twenty megabytes that no recogniser wants: every cheap test scans it all.
    let quiet = "lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n".repeat(20 << 20 >> 6);
    let start = Instant::now();
    assert_eq!(recognise(&quiet), None);
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn failing_names_are_capped_but_all_rendered_up_to_the_cap() {
    let mut log = String::new();
    for i in 0..12_000 {
        log.push_str(&format!("FAILED tests/test_a.py::test_{i} - AssertionError\n"));
    }
    log.push_str("===== 12000 failed in 3.00s =====\n");
    let f = facts(&log);
    assert_eq!(f.failed, Some(12_000));
    assert_eq!(f.failing.len(), 10_000);
    let rendered = f.render();
    assert!(rendered.contains("tests/test_a.py::test_9999"));
    assert!(rendered.contains("failing (10000): "));
}

#[test]
fn deeply_nested_names_stay_linear() {
    let levels = "Level::".repeat(120);
    let arrows = "Suite › ".repeat(120);
    let mut pytest = String::from("=========================== short test summary info ============================\n");
    let mut jest = String::new();
    for i in 0..10_000 {
        pytest.push_str(&format!("FAILED tests/a.py::{levels}test_{i} - boom\n"));
        jest.push_str(&format!("  ● {arrows}test {i}\n    ✕ test {i} (1 ms)\n"));
    }
    pytest.push_str("===== 10000 failed in 1.00s =====\n");
    jest.push_str("Tests:       10000 failed, 10000 total\n");
    for log in [pytest, jest] {
        let start = Instant::now();
        let f = facts(&log);
        assert_eq!(f.failing.len(), 10_000, "{}", f.tool);
        assert!(start.elapsed() < Duration::from_secs(10), "{}: {:?}", f.tool, start.elapsed());
    }
}
