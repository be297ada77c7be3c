use super::*;
use pretty_assertions::assert_eq;

fn sample(name: &str) -> String {
    let path = format!("{}/tests/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap()
}

fn failure(path: &str, line: u32, message: &str) -> CheckFailure {
    CheckFailure {
        path: Some(path.to_string()),
        line: Some(line),
        message: message.to_string(),
        before_task: false,
    }
}

fn root(project: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/tmp/hv-samples/{project}"))
}

#[test]
fn unittest_failures_and_errors_name_the_test_its_line_and_the_assertion() {
    let d = digest(
        &sample("unittest_fail.txt"),
        Some(1),
        Some(Runner::Unittest),
        Some(&root("py")),
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "tests/test_calc.py",
                14,
                "tests.test_calc.CalcTest.test_boom — ValueError: boom"
            ),
            failure(
                "tests/test_calc.py",
                8,
                "tests.test_calc.CalcTest.test_add — AssertionError: 4 != 3"
            ),
        ]
    );
    assert_eq!(
        d.summary,
        "2 tests failed: tests.test_calc.CalcTest.test_boom, tests.test_calc.CalcTest.test_add"
    );
    assert!(
        d.tail.ends_with("FAILED (failures=1, errors=1)"),
        "{}",
        d.tail
    );
}

#[test]
fn an_older_python_unittest_header_still_gives_the_full_name() {
    let out = "FAIL: test_add (tests.test_calc.CalcTest)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"tests/test_calc.py\", line 8, in test_add\nAssertionError: 4 != 3\n\n----------------------------------------------------------------------\nRan 1 test\n";
    let d = digest(out, Some(1), None, None);
    assert_eq!(
        d.failures,
        vec![failure(
            "tests/test_calc.py",
            8,
            "tests.test_calc.CalcTest.test_add — AssertionError: 4 != 3"
        )]
    );
}

#[test]
fn a_syntax_error_in_the_module_under_test_points_at_the_module() {
    let d = digest(
        &sample("unittest_syntax_error.txt"),
        Some(1),
        Some(Runner::Unittest),
        Some(&root("pysyn")),
    );
    assert_eq!(
        d.failures,
        vec![failure(
            "calc.py",
            1,
            "tests.test_calc — SyntaxError: expected ':'"
        )]
    );
}

#[test]
fn pytest_short_summary_with_lines_from_the_long_report() {
    let d = digest(
        &sample("pytest_fail.txt"),
        Some(1),
        Some(Runner::Pytest),
        Some(&root("py")),
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "tests/test_calc.py",
                8,
                "tests/test_calc.py::CalcTest::test_add — AssertionError: 4 != 3"
            ),
            failure(
                "tests/test_calc.py",
                14,
                "tests/test_calc.py::CalcTest::test_boom — ValueError: boom"
            ),
        ]
    );
    let d = digest(&sample("pytest_function_fail.txt"), Some(1), None, None);
    assert_eq!(
        d.failures,
        vec![failure(
            "test_funcs.py",
            5,
            "test_funcs.py::test_add — assert 4 == 3"
        )]
    );
}

#[test]
fn a_pytest_collection_error_names_the_file_and_the_syntax_error() {
    let d = digest(
        &sample("pytest_collection_error.txt"),
        Some(2),
        Some(Runner::Pytest),
        Some(&root("pysyn")),
    );
    assert_eq!(
        d.failures,
        vec![failure(
            "tests/test_calc.py",
            2,
            "tests/test_calc.py — SyntaxError: expected ':'"
        )]
    );
}

#[test]
fn node_tap_reports_the_test_the_assertion_and_its_line() {
    let d = digest(
        &sample("node_test_fail.txt"),
        Some(1),
        Some(Runner::NodeTest),
        Some(&root("node")),
    );
    assert_eq!(
        d.failures,
        vec![failure(
            "test/calc.test.js",
            6,
            "test/calc.test.js > adds — Expected values to be strictly equal: 4 !== 3"
        )]
    );
    assert_eq!(d.summary, "1 test failed: test/calc.test.js > adds");
    // Through npm, unknown runner: the same.
    let d = digest(
        &sample("npm_test_fail.txt"),
        Some(1),
        None,
        Some(&root("node")),
    );
    assert_eq!(d.failures.len(), 1);
    assert_eq!(d.failures[0].path.as_deref(), Some("test/calc.test.js"));
}

#[test]
fn node_spec_reporter_lists_each_failing_test_once() {
    let d = digest(
        &sample("node_test_spec_fail.txt"),
        Some(1),
        None,
        Some(&root("node")),
    );
    assert_eq!(
        d.failures,
        vec![failure(
            "test/calc.test.js",
            5,
            "adds — AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 4 !== 3"
        )]
    );
}

#[test]
fn cargo_test_failures_carry_the_panic_location_and_the_assertion() {
    let d = digest(
        &sample("cargo_test_fail.txt"),
        Some(101),
        Some(Runner::CargoTest),
        Some(&root("rs")),
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "src/lib.rs",
                11,
                "tests::adds — assertion `left == right` failed (left: 4, right: 3)"
            ),
            failure(
                "src/lib.rs",
                16,
                "tests::adds_zero — assertion `left == right` failed (left: 1, right: 0)"
            ),
        ]
    );
    assert_eq!(d.summary, "2 tests failed: tests::adds, tests::adds_zero");
}

#[test]
fn rustc_errors_carry_file_line_and_the_primary_label() {
    let d = digest(
        &sample("cargo_build_error.txt"),
        Some(101),
        None,
        Some(&root("rs")),
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "src/lib.rs",
                2,
                "error[E0308]: mismatched types (expected `String`, found `i32`)"
            ),
            failure(
                "src/lib.rs",
                3,
                "error[E0308]: mismatched types (expected `i32`, found `String`)"
            ),
        ]
    );
    assert!(
        d.summary.starts_with("2 errors: src/lib.rs:2 error[E0308]"),
        "{}",
        d.summary
    );
}

#[test]
fn a_clippy_error_reported_for_lib_and_lib_test_is_listed_once() {
    let d = digest(&sample("cargo_clippy_warning.txt"), Some(101), None, None);
    assert_eq!(
        d.failures,
        vec![failure(
            "src/lib.rs",
            1,
            "error: writing `&Vec` instead of `&[_]` involves a new object where a slice will do"
        )]
    );
}

#[test]
fn tsc_errors_in_both_formats_and_through_ansi_colours() {
    let expected = vec![
        failure(
            "src/a.ts",
            1,
            "TS2322: Type 'number' is not assignable to type 'string'.",
        ),
        failure(
            "src/a.ts",
            3,
            "TS2339: Property 'foo' does not exist on type 'number'.",
        ),
    ];
    assert_eq!(
        digest(&sample("tsc_error.txt"), Some(2), None, None).failures,
        expected
    );
    assert_eq!(
        digest(&sample("tsc_error_pretty.txt"), Some(2), None, None).failures,
        expected
    );
}

#[test]
fn eslint_errors_are_relative_to_the_root_with_their_rule() {
    let d = digest(
        &sample("eslint_error.txt"),
        Some(1),
        None,
        Some(Path::new("/tmp/hv-ts")),
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "src/b.js",
                1,
                "'x' is assigned a value but never used (no-unused-vars)"
            ),
            failure("src/b.js", 2, "'foo' is not defined (no-undef)"),
        ]
    );
}

#[test]
fn go_test_failures_name_the_test_and_package() {
    let d = digest(
        &sample("go_test_fail.txt"),
        Some(1),
        Some(Runner::GoTest),
        None,
    );
    assert_eq!(
        d.failures,
        vec![
            failure(
                "calc_test.go",
                12,
                "TestAdd (example.com/calc) — add(1, 2) = 4, want 3"
            ),
            failure(
                "calc_test.go",
                25,
                "TestTable/zero (example.com/calc) — add(0, 0) = 1, want 0"
            ),
        ]
    );
    let d = digest(&sample("go_build_error.txt"), Some(1), None, None);
    assert_eq!(d.failures, vec![failure("calc.go", 4, "undefined: foo")]);
}

#[test]
fn a_python_traceback_outside_a_test_runner_points_at_the_repo_frame() {
    let out = "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/runpy.py\", line 198, in _run_module_as_main\n  File \"/work/repo/app/main.py\", line 3, in <module>\n    import missing\nModuleNotFoundError: No module named 'missing'\n";
    let d = digest(out, Some(1), None, Some(Path::new("/work/repo")));
    assert_eq!(
        d.failures,
        vec![failure(
            "app/main.py",
            3,
            "ModuleNotFoundError: No module named 'missing'"
        )]
    );
}

#[test]
fn generic_compiler_errors_are_found() {
    let out = "src/main.c:12:5: error: expected ';' before '}' token\napp/models.py:40: error: Incompatible return value type  [return-value]\nsrc/main.c:3:1: warning: unused\n";
    let d = digest(out, Some(1), None, None);
    assert_eq!(
        d.failures,
        vec![
            failure("src/main.c", 12, "expected ';' before '}' token"),
            failure(
                "app/models.py",
                40,
                "Incompatible return value type  [return-value]"
            ),
        ]
    );
}

#[test]
fn unparsed_output_is_summarised_by_its_exit_code() {
    let d = digest("something went wrong\n", Some(3), None, None);
    assert_eq!(d.failures, vec![]);
    assert_eq!(d.summary, "exit code 3");
    assert_eq!(d.tail, "something went wrong");
    assert_eq!(digest("ok\n", Some(0), None, None).summary, "passed");
}

#[test]
fn failures_and_messages_are_capped() {
    let long = "x".repeat(1000);
    let out: String = (0..200)
        .map(|i| format!("src/f{i}.c:1:1: error: {long}\n"))
        .collect();
    let d = digest(&out, Some(1), None, None);
    assert_eq!(d.failures.len(), MAX_FAILURES);
    assert!(
        d.failures
            .iter()
            .all(|f| f.message.chars().count() <= MAX_MESSAGE_CHARS + 1)
    );
    assert!(
        d.summary.starts_with("200 errors: "),
        "{}",
        &d.summary[..40]
    );
    assert!(d.summary.contains("… and 197 more"));
}

#[test]
fn the_tail_is_the_last_forty_lines_within_four_kilobytes() {
    let out: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let tail = digest(&out, Some(1), None, None).tail;
    assert_eq!(tail.lines().count(), 40);
    assert!(tail.starts_with("line 60\n") && tail.ends_with("line 99"));
    let wide: String = (0..50).map(|_| format!("{}\n", "é".repeat(200))).collect();
    let tail = digest(&wide, Some(1), None, None).tail;
    assert!(tail.len() <= 4096 && tail.chars().all(|c| c == 'é' || c == '\n'));
}

#[test]
fn a_test_keeps_its_key_when_its_assertion_changes() {
    let before = failure(
        "tests/test_calc.py",
        8,
        "tests.t.CalcTest.test_add — AssertionError: 4 != 3",
    );
    let after = failure(
        "tests/test_calc.py",
        9,
        "tests.t.CalcTest.test_add — AssertionError: 5 != 3",
    );
    assert_eq!(failure_key(&before), failure_key(&after));
    assert_eq!(failure_key(&before), "test: tests.t.CalcTest.test_add");
}

#[test]
fn an_error_keeps_its_key_when_its_line_shifts_but_not_when_it_changes() {
    let before = failure(
        "src/lib.rs",
        2,
        "error[E0308]: mismatched types (expected `String`, found `i32`)",
    );
    let shifted = failure(
        "src/lib.rs",
        7,
        "error[E0308]: mismatched types (expected `String`, found `i32`)",
    );
    let other = failure(
        "src/lib.rs",
        2,
        "error[E0308]: mismatched types (expected `u8`, found `i32`)",
    );
    let elsewhere = failure(
        "src/main.rs",
        2,
        "error[E0308]: mismatched types (expected `String`, found `i32`)",
    );
    assert_eq!(failure_key(&before), failure_key(&shifted));
    assert_ne!(failure_key(&before), failure_key(&other));
    assert_ne!(failure_key(&before), failure_key(&elsewhere));
    let col = failure("a.c", 3, "expected 2 arguments, got 3");
    assert_eq!(failure_key(&col), "a.c: expected # arguments, got #");
}
