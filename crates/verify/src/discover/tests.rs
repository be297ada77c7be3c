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

/// `(name, command, required)` of each check.
fn found(dir: &tempfile::TempDir) -> Vec<(String, String, bool)> {
    discover(dir.path())
        .into_iter()
        .map(|s| (s.name, s.command, s.required))
        .collect()
}

fn c(name: &str, command: &str, required: bool) -> (String, String, bool) {
    (name.to_string(), command.to_string(), required)
}

#[test]
fn a_cargo_crate_gets_build_test_and_an_optional_clippy() {
    let dir = repo(&[(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )]);
    assert_eq!(
        found(&dir),
        vec![
            c("build", "cargo build --all-targets", true),
            c("test", "cargo test", true),
            c("clippy", "cargo clippy --all-targets -- -D warnings", false),
        ]
    );
}

#[test]
fn package_json_check_scripts_skipping_npms_placeholder() {
    let dir = repo(&[(
        "package.json",
        r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1", "lint": "eslint .", "typecheck": "tsc --noEmit", "dev": "vite", "build": "vite build"}}"#,
    )]);
    assert_eq!(
        found(&dir),
        vec![
            c("typecheck", "npm run typecheck", true),
            c("lint", "npm run lint", false),
        ]
    );
    let dir = repo(&[
        ("package.json", r#"{"scripts": {"test": "vitest run"}}"#),
        ("pnpm-lock.yaml", ""),
    ]);
    assert_eq!(found(&dir), vec![c("test", "pnpm run test", true)]);
}

#[test]
fn python_with_pytest_configured_runs_pytest() {
    for (file, text) in [
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\naddopts = \"-q\"\n",
        ),
        ("pytest.ini", "[pytest]\n"),
        (
            "setup.cfg",
            "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = tests\n",
        ),
        ("conftest.py", ""),
    ] {
        let dir = repo(&[(file, text), ("tests/test_a.py", "")]);
        assert_eq!(
            found(&dir),
            vec![c("test", "python3 -m pytest", true)],
            "{file}"
        );
    }
}

#[test]
fn python_tests_without_pytest_run_with_unittest() {
    let dir = repo(&[("tests/__init__.py", ""), ("tests/test_calc.py", "")]);
    assert_eq!(found(&dir), vec![c("test", "python3 -m unittest", true)]);
    // Without __init__.py, plain discovery from the root would find nothing in tests/.
    let dir = repo(&[("tests/test_calc.py", "")]);
    assert_eq!(
        found(&dir),
        vec![c("test", "python3 -m unittest discover -s tests", true)]
    );
    let dir = repo(&[("test_calc.py", ""), ("calc.py", "")]);
    assert_eq!(found(&dir), vec![c("test", "python3 -m unittest", true)]);
    let dir = repo(&[
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("x.py", ""),
    ]);
    assert_eq!(found(&dir), vec![]);
}

#[test]
fn a_go_module_gets_build_test_and_an_optional_vet() {
    let dir = repo(&[("go.mod", "module example.com/calc\n\ngo 1.22\n")]);
    assert_eq!(
        found(&dir),
        vec![
            c("build", "go build ./...", true),
            c("test", "go test ./...", true),
            c("vet", "go vet ./...", false),
        ]
    );
}

#[test]
fn makefile_targets_that_are_checks() {
    let dir = repo(&[(
        "Makefile",
        "CHECK := 1\n.PHONY: test lint\nall: build\nbuild:\n\tcc x.c\ntest lint: build\n\t./run\n",
    )]);
    assert_eq!(
        found(&dir),
        vec![c("test", "make test", true), c("lint", "make lint", false)]
    );
}

#[test]
fn two_sources_with_the_same_name_get_distinct_names() {
    let dir = repo(&[
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
        ),
        ("Makefile", "test:\n\tcargo test\n"),
    ]);
    let names: Vec<String> = found(&dir).into_iter().map(|f| f.0).collect();
    assert_eq!(names, vec!["build", "test", "clippy", "make-test"]);
}

#[test]
fn agents_md_refines_a_discovered_command_and_adds_its_own() {
    let dir = repo(&[
        ("Cargo.toml", "[workspace]\nmembers = []\n"),
        (
            "AGENTS.md",
            "# Notes\n\n## Testing\n\n- `cargo test --workspace`\n- `cargo test`\n- `./scripts/e2e.sh --fast`\n",
        ),
    ]);
    assert_eq!(
        found(&dir),
        vec![
            c("build", "cargo build --all-targets", true),
            c("test", "cargo test --workspace", true),
            c("clippy", "cargo clippy --all-targets -- -D warnings", false),
            c("./scripts/e2e.sh --fast", "./scripts/e2e.sh --fast", true),
        ]
    );
}

#[test]
fn malformed_files_are_skipped_without_a_panic() {
    let dir = repo(&[
        ("Cargo.toml", "[package\nname = "),
        ("package.json", "{\"scripts\": [1, 2"),
        ("pyproject.toml", "[tool.pytest.ini_options"),
        ("go.mod", "\u{0}\u{1}"),
        ("AGENTS.md", "## Testing\n```\n"),
    ]);
    assert_eq!(found(&dir), vec![]);
    let dir = repo(&[("package.json", r#"{"scripts": {"test": 3}}"#)]);
    assert_eq!(found(&dir), vec![]);
}

#[test]
fn a_symlink_out_of_the_root_is_not_followed() {
    let outside = repo(&[(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )]);
    let dir = repo(&[]);
    std::os::unix::fs::symlink(
        outside.path().join("Cargo.toml"),
        dir.path().join("Cargo.toml"),
    )
    .unwrap();
    assert_eq!(found(&dir), vec![]);
    // One that stays inside is.
    let dir = repo(&[(
        "real/Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )]);
    std::os::unix::fs::symlink(
        dir.path().join("real/Cargo.toml"),
        dir.path().join("Cargo.toml"),
    )
    .unwrap();
    assert_eq!(found(&dir).len(), 3);
}

#[test]
fn the_order_is_stable_across_sources() {
    let dir = repo(&[
        ("Makefile", "lint:\n\ttrue\n"),
        ("go.mod", "module m\n"),
        ("package.json", r#"{"scripts": {"test": "node --test"}}"#),
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
        ),
        ("tests/test_a.py", ""),
        ("tests/__init__.py", ""),
    ]);
    let commands: Vec<String> = found(&dir).into_iter().map(|f| f.1).collect();
    assert_eq!(
        commands,
        vec![
            "cargo build --all-targets",
            "cargo test",
            "cargo clippy --all-targets -- -D warnings",
            "npm test",
            "python3 -m unittest",
            "go build ./...",
            "go test ./...",
            "go vet ./...",
            "make lint",
        ]
    );
}
