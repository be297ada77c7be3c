//! The docstring-examples check: each changed Python file is imported (a module that fails to
//! import — a `NameError` at its top level, a missing import of one of the repository's own
//! modules — is a failure), then the examples its functions' docstrings give are run:
//! doctest's `>>>` examples, and lines `name(args) == value` in the docstring of `name`. One
//! line per failure, `path:line: error: message` (read by the digest as a compiler's). A
//! module that needs a package this machine lacks is skipped. The script is
//! `assets/checks/examples.py`.

use bosun_protocol::CheckSpec;

/// The script, run as `python3 -c` with the files as arguments: it holds no single quote, so
/// it stays one shell word.
pub const EXAMPLES_SCRIPT: &str = include_str!("../../../assets/checks/examples.py");

/// The check, with `{files}` for the changed Python files: not required (Bosun's own, told to
/// the model, never a gate), 30 s at most.
pub fn examples_check() -> CheckSpec {
    let mut check = CheckSpec::new(
        "examples",
        format!("python3 -c '{EXAMPLES_SCRIPT}' {{files}}"),
    );
    check.required = false;
    check.timeout_secs = 30;
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_one_shell_word() {
        assert!(!EXAMPLES_SCRIPT.contains('\''));
        let check = examples_check();
        assert!(
            check.command.starts_with("python3 -c '# "),
            "{}",
            check.command
        );
        assert!(check.command.ends_with("' {files}"), "{}", check.command);
        assert!(!check.required);
    }

    #[test]
    fn it_imports_each_file_and_runs_its_examples() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            "calc.py",
            "def add(a, b):\n    \"\"\"Sum.\n\n    add(2, 3) == 5\n    >>> add(1, 1)\n    2\n    \"\"\"\n    return a - b\n",
        );
        write("broken.py", "X = re.compile(\"a\")\n");
        write("needs.py", "import numpy_is_not_here\n");
        write(
            "fine.py",
            "def one():\n    \"\"\"one() == 1\"\"\"\n    return 1\n",
        );
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(EXAMPLES_SCRIPT)
            .args(["calc.py", "broken.py", "needs.py", "fine.py", "gone.py"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(
            lines,
            [
                "calc.py:4: error: the docstring example `add(2, 3) == 5` is not true: add(2, 3) returns -1",
                "calc.py:5: error: the docstring example `>>> add(1, 1)` gives '0', not '2'",
                "broken.py:1: error: importing broken fails: NameError: name 're' is not defined",
            ],
            "{stdout}"
        );
    }
}
