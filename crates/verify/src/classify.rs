//! Why a check did not pass: it ran and failed, it could not run (a tool is missing: a broken
//! check, not the agent's failure), or it failed because it tried to reach the network.

use crate::re;
use regex::Regex;
use std::sync::LazyLock;

/// What kind of run a check's exit and output say it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// The check ran; its exit code is the verdict.
    Ran,
    /// The check could not run: the named tool (`cargo`, `pytest`, `npm script "lint"`) is
    /// missing. The check's status is `Error`, not the agent's failure.
    MissingTool(String),
    /// The check failed trying to reach the network, which checks do not get by default. Its
    /// summary should say "the network is not allowed for checks by default; allow it with a
    /// [network] rule for this command".
    NetworkBlocked,
}

static NOT_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?m)^(?:\S*sh: (?:line )?\d+: |\S*sh: )?([^\s:]+): (?:command )?not found\s*$",
        r"|^env: '?([^\s':]+)'?: No such file or directory\s*$",
        r"|^\S*sh: (?:line \d+: )?([^\s:]+): No such file or directory\s*$",
    ))
});
static NO_MODULE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^\S*python[\d.]*: No module named ([\w.]+)\s*$"));
static NPM_MISSING_SCRIPT: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?mi)^npm (?:ERR!|error) missing script:? "?([^"\s]+)"?"#));
static CARGO_NO_COMMAND: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^error: no such command: `([^`]+)`"));
static MAKE_NO_RULE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^make: \*\*\* No rule to make target '([^']+)'"));

/// Output that says the network was out of reach.
const NETWORK_SIGNS: &[&str] = &[
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "getaddrinfo ENOTFOUND",
    "getaddrinfo EAI_AGAIN",
    "Network is unreachable",
    "network is unreachable",
    "failed to download from",
    "Failed to establish a new connection",
    "Could not connect to server",
    "dial tcp: lookup",
    "npm error network",
    "npm ERR! network",
];

/// Classifies a finished check. A check that exited 0 always [`Class::Ran`]. A missing tool is
/// recognised by bash's `X: command not found` with exit code 127 (so a test that shells out
/// to a missing program is still the test's failure), `python3: No module named pytest` (the
/// runner module itself, not a `ModuleNotFoundError` inside a test), `npm error Missing
/// script`, cargo's `no such command` and make's `No rule to make target`.
pub fn classify(exit_code: Option<i32>, output: &str, command: &str) -> Class {
    if exit_code == Some(0) {
        return Class::Ran;
    }
    if let Some(tool) = missing_tool(exit_code, output, command) {
        return Class::MissingTool(tool);
    }
    if exit_code.is_some() && NETWORK_SIGNS.iter().any(|s| output.contains(s)) {
        return Class::NetworkBlocked;
    }
    if exit_code.is_some()
        && (output.contains("Connection refused") || output.contains("ECONNREFUSED"))
        && mentions_registry(output)
    {
        return Class::NetworkBlocked;
    }
    Class::Ran
}

fn missing_tool(exit_code: Option<i32>, output: &str, command: &str) -> Option<String> {
    if exit_code == Some(127) {
        if let Some(c) = NOT_FOUND.captures(output) {
            let tool = c.iter().skip(1).flatten().next().map(|m| m.as_str());
            if let Some(tool) = tool {
                return Some(tool.to_string());
            }
        }
        let first = command
            .split_whitespace()
            .find(|w| !w.contains('='))
            .unwrap_or(command);
        return Some(first.to_string());
    }
    if let Some(c) = NO_MODULE.captures(output) {
        return Some(c[1].to_string());
    }
    if let Some(c) = NPM_MISSING_SCRIPT.captures(output) {
        return Some(format!("npm script \"{}\"", &c[1]));
    }
    if let Some(c) = CARGO_NO_COMMAND.captures(output) {
        return Some(format!("cargo {}", &c[1]));
    }
    if let Some(c) = MAKE_NO_RULE.captures(output) {
        return Some(format!("make target {}", &c[1]));
    }
    None
}

fn mentions_registry(output: &str) -> bool {
    [
        "crates.io",
        "registry",
        "pypi",
        "npmjs",
        "proxy.golang.org",
        "index.",
    ]
    .iter()
    .any(|r| output.contains(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        let path = format!("{}/tests/samples/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn bash_command_not_found_names_the_missing_tool() {
        assert_eq!(
            classify(
                Some(127),
                &sample("command_not_found.txt"),
                "nosuchtool --version"
            ),
            Class::MissingTool("nosuchtool".into())
        );
        assert_eq!(
            classify(
                Some(127),
                "bash: line 1: cargo: command not found\n",
                "cargo test"
            ),
            Class::MissingTool("cargo".into())
        );
        assert_eq!(
            classify(Some(127), "sh: 1: eslint: not found\n", "npm run lint"),
            Class::MissingTool("eslint".into())
        );
    }

    #[test]
    fn exit_127_without_a_message_blames_the_first_word() {
        assert_eq!(
            classify(Some(127), "", "CI=1 gotestsum ./..."),
            Class::MissingTool("gotestsum".into())
        );
    }

    #[test]
    fn a_test_that_runs_a_missing_program_is_still_the_tests_failure() {
        let out = "sh: 1: jq: command not found\nFAIL: test_pipeline\n";
        assert_eq!(classify(Some(1), out, "python3 -m unittest"), Class::Ran);
    }

    #[test]
    fn python_without_pytest_is_a_missing_tool() {
        let out = "/usr/bin/python3: No module named pytest\n";
        assert_eq!(
            classify(Some(1), out, "python3 -m pytest"),
            Class::MissingTool("pytest".into())
        );
    }

    #[test]
    fn a_missing_module_inside_a_test_is_not_a_missing_tool() {
        let out = "ModuleNotFoundError: No module named 'requests'\n";
        assert_eq!(classify(Some(1), out, "python3 -m unittest"), Class::Ran);
    }

    #[test]
    fn a_missing_npm_script_is_a_broken_check() {
        assert_eq!(
            classify(Some(1), &sample("npm_missing_script.txt"), "npm run lint"),
            Class::MissingTool("npm script \"lint\"".into())
        );
        assert_eq!(
            classify(Some(1), "npm ERR! missing script: lint\n", "npm run lint"),
            Class::MissingTool("npm script \"lint\"".into())
        );
    }

    #[test]
    fn cargo_without_clippy_is_a_broken_check() {
        assert_eq!(
            classify(
                Some(101),
                "error: no such command: `clippy`\n",
                "cargo clippy"
            ),
            Class::MissingTool("cargo clippy".into())
        );
    }

    #[test]
    fn cargo_failing_to_reach_the_registry_is_network_blocked() {
        assert_eq!(
            classify(
                Some(101),
                &sample("cargo_network_blocked.txt"),
                "cargo build"
            ),
            Class::NetworkBlocked
        );
    }

    #[test]
    fn name_resolution_failures_are_network_blocked() {
        for out in [
            "curl: (6) Could not resolve host: example.com",
            "pip: Temporary failure in name resolution",
            "Error: getaddrinfo ENOTFOUND registry.npmjs.org",
            "connect: Network is unreachable",
            "dial tcp: lookup proxy.golang.org: no such host",
        ] {
            assert_eq!(classify(Some(1), out, "x"), Class::NetworkBlocked, "{out}");
        }
    }

    #[test]
    fn a_refused_local_connection_is_the_tests_own_failure() {
        let out = "ConnectionRefusedError: [Errno 111] Connection refused (localhost:5432)";
        assert_eq!(classify(Some(1), out, "python3 -m pytest"), Class::Ran);
    }

    #[test]
    fn a_passing_check_ran() {
        assert_eq!(
            classify(Some(0), "warning: Could not resolve host (cached)", "x"),
            Class::Ran
        );
    }
}
