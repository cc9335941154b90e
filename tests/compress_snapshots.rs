//! Snapshots of the history form of real outputs, read and checked by hand.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::traces::{Recorded, claude_code, vorflux};
use context_workbench::compress::{CompressConfig, compress_tool_output};
use context_workbench::tokens::{Encoding, TokenCounter};
use expect_test::{Expect, expect};

fn check(r: &Recorded, expect: Expect) {
    let c =
        compress_tool_output(&r.as_input(&r.tool), &CompressConfig::default(), &TokenCounter::new(Encoding::O200kBase));
    expect.assert_eq(&c.text);
}

fn nth(records: &[Recorded], tool: &str, min_lines: usize, n: usize) -> Recorded {
    records.iter().filter(|r| r.tool == tool && r.output.lines().count() >= min_lines).nth(n).cloned().expect(tool)
}

#[test]
fn long_grep() {
    check(
        &nth(&vorflux(), "grep_search", 40, 0),
        expect![[r#"
        61 matches in 1 files: /code/django/django/django/db/migrations/operations/models.py (61)
        /code/django/django/django/db/migrations/operations/models.py:533:class AlterTogetherOptionOperation(ModelOptionOperation):
        /code/django/django/django/db/migrations/operations/models.py-534-    option_name = None
        /code/django/django/django/db/migrations/operations/models.py-535-
        /code/django/django/django/db/migrations/operations/models.py-536-    def __init__(self, name, option_value):
        /code/django/django/django/db/migrations/operations/models.py-537-        if option_value:
        … 56 lines omitted …
        [history form: kept 5 of 61 lines; 1399 of 1550 tokens dropped; full output: raw#m000007]"#]],
    );
}

#[test]
fn glob() {
    check(
        &nth(&vorflux(), "search_files", 12, 0),
        expect![[r#"
        tests/**/*.py: 20 hits
        /code/django/django/tests/urls.py
        /code/django/django/tests/test_sqlite.py
        /code/django/django/tests/runtests.py
        /code/django/django/tests/admin_changelist/models.py
        /code/django/django/tests/admin_custom_urls/models.py
        /code/django/django/tests/admin_checks/tests.py
        /code/django/django/tests/admin_changelist/tests.py
        /code/django/django/tests/admin_changelist/test_date_hierarchy.py
        /code/django/django/tests/admin_changelist/admin.py
        /code/django/django/tests/admin_custom_urls/__init__.py
        … 10 hits omitted …
        [history form: kept 10 of 20 hits; 122 of 260 tokens dropped; full output: raw#m000007]"#]],
    );
}

#[test]
fn todo_write() {
    check(
        &nth(&claude_code(), "TodoWrite", 1, 0),
        expect![[r#"
        todos: 0/5 done; now: Analyze codebase structure and files
        [history form: list in the call; 12 of 28 tokens dropped; full output: raw#m000007]"#]],
    );
}

#[test]
fn edit() {
    check(
        &nth(&claude_code(), "Edit", 3, 0),
        expect![[r#"
        The file /path/to/Demo/todo-app/src/app/page.tsx has been updated. Here's the result of running `cat -n` on a snippet of the edited file:
             1→export default function Home() {
             2→  return (
             3→    <div className="min-h-screen bg-background text-foreground">
             4→      <div className="container mx-auto p-8">
             5→        <h1 className="text-4xl font-bold text-center mb-8">TODO App</h1>
             6→        <div className="max-w-md mx-auto">
             7→          <p className="text-center text-gray-600">
             8→            Your TODO app will be built here!
             9→          </p>
            10→        </div>
            11→      </div>
            12→    </div>
            13→  );
            14→}
            15→"#]],
    );
}

#[test]
fn failing_django_run() {
    let records = vorflux();
    let run = records.iter().find(|r| r.output.contains("FAILED (failures=") && r.output.lines().count() > 40).unwrap();
    check(
        run,
        expect![[r#"
            exit code: 1
            unittest: 3 failed, 2 passed
            failing (3): test_remove_unique_together_with_field_level_unique (schema.tests.SchemaTests.test_remove_unique_together_with_field_level_unique), test_remove_unique_together_correct_constraint_deleted (schema.tests.SchemaTests.test_remove_unique_together_correct_constraint_deleted), test_remove_index_together_with_db_index_correct_constraint_deleted (schema.tests.SchemaTests.test_remove_index_together_with_db_index_correct_constraint_deleted)
            first failure: /code/django/django/tests/schema/tests.py:2723: AssertionError: alter_unique_together raised ValueError: Found wrong number (2) of constraints for schema_unique_field_ut(slug)
            … 43 lines omitted …
            ValueError: Found wrong number (2) of constraints for schema_unique_field_ut(slug)
            … 9 lines omitted …
            AssertionError: alter_unique_together raised ValueError: Found wrong number (2) of constraints for schema_unique_field_ut(slug)
            … 11 lines omitted …
            ValueError: Found wrong number (2) of constraints for schema_ut_correct_deleted(slug)
            … 9 lines omitted …
            AssertionError: _delete_composed_index raised ValueError: Found wrong number (2) of constraints for schema_ut_correct_deleted(slug)
            … 10 lines omitted …
            ValueError: Found wrong number (2) of constraints for schema_it_db_index(slug)
            … 9 lines omitted …
            AssertionError: _delete_composed_index raised ValueError: Found wrong number (2) of constraints for schema_it_db_index(slug)
            … 4 lines omitted …
            FAILED (failures=3)
            Destroying test database for alias 'default' ('file:memorydb_default?mode=memory&cache=shared')...
            [history form: kept 9 of 104 lines; 952 of 1306 tokens dropped; full output: raw#m000007]"#]],
    );
}

#[test]
fn structured_error_envelope() {
    let output = r#"{"status": "error", "data": null, "error": {"code": "ENOENT", "message": "no such file: src/missing.rs (looked in /work/app)"}, "text": "Error: no such file", "stats": {"ms": 3}, "context": {"path": "src/missing.rs"}}"#;
    let r = Recorded { is_error: true, ..Recorded::plain("read_file", "{}", output.into()) };
    check(
        &r,
        expect![[r#"
        {"data":null,"error":{"code":"ENOENT","message":"no such file: src/missing.rs (looked in /work/app)"},"status":"error"}
        [history form: dropped fields: text, stats, context; 37 of 73 tokens dropped; full output: raw#m000007]"#]],
    );
}

#[test]
fn structured_list_envelope() {
    let items: Vec<String> = (0..40).map(|i| format!(r#""src/module_{i}.rs""#)).collect();
    let output = format!(
        r#"{{"status": "ok", "data": {{"files": [{}], "truncated": false}}, "stats": {{"ms": 12}}}}"#,
        items.join(", ")
    );
    let r = Recorded::plain("glob", r#"{"pattern":"src/**/*.rs"}"#, output);
    check(
        &r,
        expect![[r#"
        {"data":{"files":["src/module_0.rs","src/module_1.rs","src/module_2.rs","src/module_3.rs","src/module_4.rs","src/module_5.rs","src/module_6.rs","src/module_7.rs","src/module_8.rs","src/module_9.rs"],"truncated":false},"status":"ok"}
        [history form: data: truncated to 10 of 40 items; dropped fields: stats; 232 of 307 tokens dropped; full output: raw#m000007]"#]],
    );
}
