use super::*;
use pretty_assertions::assert_eq;

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn related(
    dir: &tempfile::TempDir,
    command: &str,
    runner: Runner,
    changed: &[&str],
) -> Option<String> {
    let changed: Vec<String> = changed.iter().map(|c| c.to_string()).collect();
    related_command(
        &CheckSpec::new("test", command),
        runner,
        &changed,
        dir.path(),
    )
}

#[test]
fn pytest_runs_the_tests_named_after_or_importing_the_changed_module() {
    let dir = repo(&[
        ("calc.py", ""),
        ("other.py", ""),
        ("tests/test_calc.py", "from calc import add\n"),
        ("tests/test_uses.py", "import os, calc as c\n"),
        ("tests/test_from_pkg.py", "from . import calc\n"),
        ("tests/test_other.py", "import other\n"),
        ("calc_test.py", ""),
    ]);
    assert_eq!(
        related(&dir, "python3 -m pytest -q", Runner::Pytest, &["calc.py"]).as_deref(),
        Some(
            "python3 -m pytest -q 'calc_test.py' 'tests/test_calc.py' 'tests/test_from_pkg.py' 'tests/test_uses.py'"
        )
    );
}

#[test]
fn a_changed_test_file_is_itself_related() {
    let dir = repo(&[("tests/test_calc.py", ""), ("README.md", "")]);
    assert_eq!(
        related(
            &dir,
            "pytest",
            Runner::Pytest,
            &["tests/test_calc.py", "README.md"]
        )
        .as_deref(),
        Some("pytest 'tests/test_calc.py'")
    );
}

#[test]
fn nothing_related_means_no_narrowed_command() {
    let dir = repo(&[("calc.py", ""), ("tests/test_other.py", "import other\n")]);
    assert_eq!(
        related(&dir, "python3 -m pytest", Runner::Pytest, &["calc.py"]),
        None
    );
    assert_eq!(
        related(&dir, "python3 -m pytest", Runner::Pytest, &[]),
        None
    );
}

#[test]
fn a_command_with_its_own_selection_is_not_narrowed() {
    let dir = repo(&[("calc.py", ""), ("tests/test_calc.py", "")]);
    assert_eq!(
        related(
            &dir,
            "python3 -m pytest tests/unit",
            Runner::Pytest,
            &["calc.py"]
        ),
        None
    );
    assert_eq!(
        related(
            &dir,
            "cd x && python3 -m pytest",
            Runner::Pytest,
            &["calc.py"]
        ),
        None
    );
}

#[test]
fn unittest_uses_dotted_modules_in_packages_and_discover_elsewhere() {
    let dir = repo(&[
        ("calc.py", ""),
        ("tests/__init__.py", ""),
        ("tests/test_calc.py", ""),
    ]);
    assert_eq!(
        related(&dir, "python3 -m unittest", Runner::Unittest, &["calc.py"]).as_deref(),
        Some("python3 -m unittest tests.test_calc")
    );
    let dir = repo(&[("calc.py", ""), ("tests/test_calc.py", "")]);
    assert_eq!(
        related(
            &dir,
            "python3 -m unittest discover -s tests",
            Runner::Unittest,
            &["calc.py"]
        )
        .as_deref(),
        Some("python3 -m unittest discover -s 'tests' -p 'test_calc.py'")
    );
}

#[test]
fn node_tests_named_after_or_requiring_the_changed_file() {
    let dir = repo(&[
        ("src/calc.js", ""),
        ("test/calc.test.js", ""),
        (
            "test/uses.test.mjs",
            "import { add } from '../src/calc.js';\n",
        ),
        ("test/other.test.js", "const o = require('../src/other');\n"),
        ("src/calc-test.js", "const c = require('./calc');\n"),
    ]);
    assert_eq!(
        related(&dir, "node --test", Runner::NodeTest, &["src/calc.js"]).as_deref(),
        Some("node --test 'src/calc-test.js' 'test/calc.test.js' 'test/uses.test.mjs'")
    );
}

#[test]
fn npm_test_running_node_test_is_narrowed_as_node_test() {
    let dir = repo(&[
        ("package.json", r#"{"scripts": {"test": "node --test"}}"#),
        ("calc.js", ""),
        ("test/calc.test.js", "require('../calc')"),
    ]);
    assert_eq!(
        related(&dir, "npm test", Runner::NodeTest, &["calc.js"]).as_deref(),
        Some("node --test 'test/calc.test.js'")
    );
}

#[test]
fn cargo_narrows_to_the_changed_module_and_its_integration_test() {
    let dir = repo(&[
        ("Cargo.toml", "[package]\nname = \"calc\"\n"),
        ("src/lib.rs", ""),
        ("src/calc.rs", ""),
        ("src/ops/mod.rs", ""),
        ("tests/calc.rs", ""),
        ("tests/api.rs", ""),
    ]);
    assert_eq!(
        related(&dir, "cargo test", Runner::CargoTest, &["src/calc.rs"]).as_deref(),
        Some("cargo test 'calc::' && cargo test --test 'calc'")
    );
    assert_eq!(
        related(
            &dir,
            "cargo test",
            Runner::CargoTest,
            &["src/ops/mod.rs", "tests/api.rs", "src/lib.rs"]
        )
        .as_deref(),
        Some("cargo test 'ops::' && cargo test --test 'api'")
    );
    assert_eq!(
        related(&dir, "cargo test", Runner::CargoTest, &["src/lib.rs"]),
        None
    );
}

#[test]
fn cargo_in_a_workspace_member_names_the_package() {
    let dir = repo(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"crates/calc\"]\n"),
        (
            "crates/calc/Cargo.toml",
            "[package]\nname = \"bosun-calc\"\n",
        ),
        ("crates/calc/src/add.rs", ""),
    ]);
    assert_eq!(
        related(
            &dir,
            "cargo test",
            Runner::CargoTest,
            &["crates/calc/src/add.rs"]
        )
        .as_deref(),
        Some("cargo test -p 'bosun-calc' 'add::'")
    );
}

#[test]
fn go_tests_the_packages_of_the_changed_files() {
    let dir = repo(&[("go.mod", "module m\n")]);
    assert_eq!(
        related(
            &dir,
            "go test ./...",
            Runner::GoTest,
            &[
                "pkg/calc/calc.go",
                "pkg/calc/more.go",
                "main.go",
                "README.md"
            ]
        )
        .as_deref(),
        Some("go test '.' './pkg/calc'")
    );
    assert_eq!(
        related(&dir, "go test ./...", Runner::GoTest, &["README.md"]),
        None
    );
}

#[test]
fn paths_that_escape_the_root_are_ignored() {
    let dir = repo(&[("tests/test_calc.py", "")]);
    assert_eq!(
        related(
            &dir,
            "pytest",
            Runner::Pytest,
            &["../tests/test_calc.py", "/etc/passwd"]
        ),
        None
    );
}
