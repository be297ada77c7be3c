//! The checks a repository implies, from the files at its root. Nothing is run; a file that
//! is malformed, too large, unreadable or a symlink leading out of the root is skipped.
//!
//! | found | checks (name: command) |
//! |---|---|
//! | `Cargo.toml` | `build`: `cargo build --all-targets`, `test`: `cargo test`, `clippy`: `cargo clippy --all-targets -- -D warnings` (not required) |
//! | `package.json` scripts `test`, `typecheck`, `check`, `lint` | `npm test`, `npm run typecheck`, … (`pnpm`/`yarn` with their lockfile); `lint` not required; npm's placeholder test script is skipped |
//! | pytest configured (`[tool.pytest.ini_options]`, `pytest.ini`, `[tool:pytest]`, `tox.ini [pytest]`, `conftest.py`) | `test`: `python3 -m pytest` |
//! | else `test_*.py` at the root or in `tests/` | `test`: `python3 -m unittest` (`python3 -m unittest discover -s tests` when `tests/` has no `__init__.py`) |
//! | `go.mod` | `build`: `go build ./...`, `test`: `go test ./...`, `vet`: `go vet ./...` (not required) |
//! | `Makefile` targets `test`, `check`, `lint` | `make test`, … (`lint` not required) |
//! | AGENTS.md: commands under a heading about testing, verification, checks or linting | the command, named by itself; one that runs the same tool as a discovered check (`cargo test --workspace` for `cargo test`) replaces that check's command |
//!
//! A name taken by an earlier source gets the source's prefix (`make-test`). The same command
//! from two sources is kept once, the first.

use bosun_protocol::CheckSpec;
use std::path::{Path, PathBuf};

/// Files larger than this are not read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The checks `root`'s files imply, in a stable order: Cargo, package.json, Python, Go,
/// Makefile, then AGENTS.md's own commands.
pub fn discover(root: &Path) -> Vec<CheckSpec> {
    let mut found = Found::default();
    cargo(root, &mut found);
    node(root, &mut found);
    python(root, &mut found);
    go(root, &mut found);
    make(root, &mut found);
    for command in crate::agents::commands(root) {
        found.add_from_agents(command);
    }
    found.specs
}

#[derive(Default)]
struct Found {
    specs: Vec<CheckSpec>,
    /// Indexes of the checks whose command AGENTS.md already gave (the first one wins).
    refined: Vec<usize>,
}

impl Found {
    fn add(&mut self, source: &str, name: &str, command: &str, required: bool) {
        let normal = normalize(command);
        if self.specs.iter().any(|s| normalize(&s.command) == normal) {
            return;
        }
        let name = if self.specs.iter().any(|s| s.name == name) {
            format!("{source}-{name}")
        } else {
            name.to_string()
        };
        let mut spec = CheckSpec::new(name, command);
        spec.required = required;
        self.specs.push(spec);
    }

    /// A command AGENTS.md names: it replaces a discovered check that runs the same tool and
    /// subcommand (the project's own way to run it), else it is a check of its own.
    fn add_from_agents(&mut self, command: String) {
        let normal = normalize(&command);
        if self.specs.iter().any(|s| normalize(&s.command) == normal) {
            return;
        }
        let tool = tool_of(&command);
        let same_tool = self
            .specs
            .iter()
            .position(|s| tool.is_some() && tool_of(&s.command) == tool);
        if let Some(i) = same_tool {
            if !self.refined.contains(&i) {
                self.refined.push(i);
                self.specs[i].command = command;
            }
            return;
        }
        let name = crate::digest::cut_chars(&command, 40);
        self.add("agents", &name, &command, true);
    }
}

/// Whitespace collapsed, `npm run test` as `npm test`.
fn normalize(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let joined = words.join(" ");
    match joined.strip_prefix("npm run test") {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => format!("npm test{rest}"),
        _ => joined,
    }
}

/// The tool and subcommand a simple command runs: `cargo test`, `npm test`, `python3 -m
/// pytest`, `make lint`.
fn tool_of(command: &str) -> Option<String> {
    if crate::runner::is_compound(command) {
        return None;
    }
    let normal = normalize(command);
    let words: Vec<&str> = normal.split_whitespace().collect();
    match words.as_slice() {
        [py, "-m", module, ..] if py.starts_with("python") => Some(format!("python -m {module}")),
        ["npm" | "pnpm" | "yarn", "run", script, ..] => Some(format!("{} {script}", words[0])),
        [tool, sub, ..] if !sub.starts_with('-') => Some(format!("{tool} {sub}")),
        _ => None,
    }
}

/// `root/name`'s text, if it is a regular file inside `root` (a symlink is followed only
/// when it stays inside), not larger than 1 MB and UTF-8.
pub(crate) fn read_root_file(root: &Path, name: &str) -> Option<String> {
    let path = inside(root, name)?;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// `root/rel` resolved, when it exists and resolves inside `root`.
pub(crate) fn inside(root: &Path, rel: &str) -> Option<PathBuf> {
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        let real = path.canonicalize().ok()?;
        let real_root = root.canonicalize().ok()?;
        if !real.starts_with(&real_root) {
            return None;
        }
        return Some(real);
    }
    Some(path)
}

fn cargo(root: &Path, found: &mut Found) {
    let Some(text) = read_root_file(root, "Cargo.toml") else {
        return;
    };
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return;
    };
    if !manifest.contains_key("package") && !manifest.contains_key("workspace") {
        return;
    }
    found.add("cargo", "build", "cargo build --all-targets", true);
    found.add("cargo", "test", "cargo test", true);
    found.add(
        "cargo",
        "clippy",
        "cargo clippy --all-targets -- -D warnings",
        false,
    );
}

/// package.json scripts that are checks, in this order, and whether each is required.
const NODE_SCRIPTS: &[(&str, bool)] = &[
    ("test", true),
    ("typecheck", true),
    ("check", true),
    ("lint", false),
];

fn node(root: &Path, found: &mut Found) {
    let Some(text) = read_root_file(root, "package.json") else {
        return;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    let Some(scripts) = json.get("scripts").and_then(|s| s.as_object()) else {
        return;
    };
    let manager = if inside(root, "pnpm-lock.yaml").is_some() {
        "pnpm"
    } else if inside(root, "yarn.lock").is_some() {
        "yarn"
    } else {
        "npm"
    };
    for (name, required) in NODE_SCRIPTS {
        let Some(script) = scripts.get(*name).and_then(|s| s.as_str()) else {
            continue;
        };
        if script.trim().is_empty() || script.contains("no test specified") {
            continue;
        }
        let command = match (manager, *name) {
            ("npm", "test") => "npm test".to_string(),
            (m, n) => format!("{m} run {n}"),
        };
        found.add(manager, name, &command, *required);
    }
}

fn python(root: &Path, found: &mut Found) {
    let pyproject = read_root_file(root, "pyproject.toml")
        .and_then(|t| t.parse::<toml::Table>().ok())
        .is_some_and(|t| {
            t.get("tool")
                .and_then(|tool| tool.get("pytest"))
                .is_some_and(|p| p.get("ini_options").is_some())
        });
    let ini = |file: &str, section: &str| {
        read_root_file(root, file).is_some_and(|t| t.lines().any(|l| l.trim() == section))
    };
    let pytest = pyproject
        || inside(root, "pytest.ini").is_some()
        || ini("setup.cfg", "[tool:pytest]")
        || ini("tox.ini", "[pytest]")
        || inside(root, "conftest.py").is_some();
    if pytest {
        found.add("python", "test", "python3 -m pytest", true);
        return;
    }
    let tests_dir = inside(root, "tests").filter(|p| p.is_dir());
    let in_tests = tests_dir.as_deref().is_some_and(has_python_tests);
    if in_tests && inside(root, "tests/__init__.py").is_none() {
        found.add(
            "python",
            "test",
            "python3 -m unittest discover -s tests",
            true,
        );
    } else if in_tests || has_python_tests(root) {
        found.add("python", "test", "python3 -m unittest", true);
    }
}

fn has_python_tests(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().take(10_000).any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.starts_with("test_") && name.ends_with(".py")
    })
}

fn go(root: &Path, found: &mut Found) {
    let Some(text) = read_root_file(root, "go.mod") else {
        return;
    };
    if !text.lines().any(|l| l.trim_start().starts_with("module ")) {
        return;
    }
    found.add("go", "build", "go build ./...", true);
    found.add("go", "test", "go test ./...", true);
    found.add("go", "vet", "go vet ./...", false);
}

/// Makefile targets that are checks, and whether each is required.
const MAKE_TARGETS: &[(&str, bool)] = &[("test", true), ("check", true), ("lint", false)];

fn make(root: &Path, found: &mut Found) {
    let Some(text) = ["GNUmakefile", "Makefile", "makefile"]
        .iter()
        .find_map(|f| read_root_file(root, f))
    else {
        return;
    };
    let targets: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(['\t', ' ', '#', '.']))
        .filter_map(|l| {
            let (names, rest) = l.split_once(':')?;
            // `x := value` and `x ::= value` are variables, not rules.
            (!rest.starts_with('=') && !rest.starts_with(":=")).then_some(names)
        })
        .flat_map(str::split_whitespace)
        .collect();
    for (target, required) in MAKE_TARGETS {
        if targets.contains(target) {
            found.add("make", target, &format!("make {target}"), *required);
        }
    }
}

#[cfg(test)]
mod tests;
