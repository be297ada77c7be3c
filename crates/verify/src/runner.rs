//! Which test runner a check's command is: the runners whose tests Bosun can narrow to the ones
//! related to a task's changes.

use std::path::Path;

/// A test runner Bosun knows how to narrow (see [`crate::related_command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runner {
    Pytest,
    Unittest,
    NodeTest,
    CargoTest,
    GoTest,
}

/// The runner a command is, from its text alone: `python3 -m pytest …`, `pytest …`,
/// `python -m unittest …`, `node --test …`, `cargo test …`, `go test …` (after any leading
/// `VAR=value` assignments). A compound command (`&&`, `;`, `|`, …) is none of them.
pub fn runner(command: &str) -> Option<Runner> {
    parse(command).map(|p| p.runner)
}

/// Like [`runner`], but `npm test` / `npm run <script>` is resolved through the root's
/// `package.json`: the runner of the script's own text, when that is a plain runner command.
pub fn runner_for(command: &str, root: &Path) -> Option<Runner> {
    runner(command).or_else(|| npm_script(command, root).and_then(|s| runner(&s)))
}

/// A runner command split into the part that names the runner and what follows.
pub(crate) struct Parsed {
    pub runner: Runner,
    /// `VAR=value` words and the runner's own words (`python3 -m pytest`).
    pub prefix: Vec<String>,
    pub args: Vec<String>,
}

pub(crate) fn is_compound(command: &str) -> bool {
    command.contains(['&', ';', '|', '\n', '`', '$', '(', ')', '<', '>'])
}

pub(crate) fn parse(command: &str) -> Option<Parsed> {
    if is_compound(command) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let env = words.iter().take_while(|w| is_assignment(w)).count();
    let rest = &words[env..];
    let (runner, len) = match rest {
        [py, "-m", "pytest", ..] if is_python(py) => (Runner::Pytest, 3),
        [py, "-m", "unittest", ..] if is_python(py) => (Runner::Unittest, 3),
        ["pytest" | "py.test", ..] => (Runner::Pytest, 1),
        ["node", "--test", ..] => (Runner::NodeTest, 2),
        ["cargo", "test", ..] => (Runner::CargoTest, 2),
        ["go", "test", ..] => (Runner::GoTest, 2),
        _ => return None,
    };
    Some(Parsed {
        runner,
        prefix: words[..env + len].iter().map(|w| w.to_string()).collect(),
        args: rest[len..].iter().map(|w| w.to_string()).collect(),
    })
}

fn is_python(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    name == "python"
        || name
            .strip_prefix("python3")
            .is_some_and(|v| v.is_empty() || v.starts_with('.'))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The text of the package.json script `npm test` / `npm run <name>` runs.
pub(crate) fn npm_script(command: &str, root: &Path) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let name = match words.as_slice() {
        ["npm", "test"] | ["npm", "t"] => "test",
        ["npm", "run" | "run-script", name] => name,
        _ => return None,
    };
    let text = crate::discover::read_root_file(root, "package.json")?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("scripts")?.get(name)?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_are_recognised_from_the_command_text() {
        let cases = [
            ("python3 -m pytest", Some(Runner::Pytest)),
            ("python -m pytest -q tests", Some(Runner::Pytest)),
            ("pytest -x", Some(Runner::Pytest)),
            (
                "/usr/bin/python3.11 -m unittest discover -s tests",
                Some(Runner::Unittest),
            ),
            ("python3 -m unittest", Some(Runner::Unittest)),
            ("node --test", Some(Runner::NodeTest)),
            ("cargo test --workspace", Some(Runner::CargoTest)),
            ("RUST_BACKTRACE=1 cargo test", Some(Runner::CargoTest)),
            ("go test ./...", Some(Runner::GoTest)),
            ("cargo build", None),
            ("npm test", None),
            ("cargo test && echo done", None),
            ("python3 -m pytestx", None),
            ("pythonista -m pytest", None),
        ];
        for (command, expected) in cases {
            assert_eq!(runner(command), expected, "{command}");
        }
    }

    #[test]
    fn npm_test_is_resolved_through_the_script_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"scripts": {"test": "node --test", "lint": "eslint ."}}"#,
        )
        .unwrap();
        assert_eq!(runner_for("npm test", dir.path()), Some(Runner::NodeTest));
        assert_eq!(runner_for("npm run lint", dir.path()), None);
        assert_eq!(runner_for("npm run missing", dir.path()), None);
    }
}
