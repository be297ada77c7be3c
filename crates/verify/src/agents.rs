//! The commands AGENTS.md names under a heading about testing, verification, checks or
//! linting: fenced code blocks (shell or untyped), bullet items that are a code span, and
//! code spans in the section's text that look like commands. A section runs up to the next
//! heading of the same or a higher level.

use crate::re;
use regex::Regex;
use std::path::Path;
use std::sync::LazyLock;

/// Words a command found in a code span may start with.
const TOOLS: &[&str] = &[
    "bash",
    "bun",
    "bundle",
    "cargo",
    "cmake",
    "ctest",
    "deno",
    "go",
    "gradle",
    "just",
    "make",
    "mvn",
    "mypy",
    "node",
    "nox",
    "npm",
    "npx",
    "pnpm",
    "poetry",
    "pre-commit",
    "pytest",
    "python",
    "python3",
    "rake",
    "ruff",
    "sh",
    "tox",
    "tsc",
    "uv",
    "yarn",
    "eslint",
    "prettier",
    "black",
    "flake8",
    "pyright",
    "swift",
    "dotnet",
    "mix",
    "zig",
];

/// At most this many commands are taken from AGENTS.md.
const MAX_COMMANDS: usize = 10;

pub(crate) fn commands(root: &Path) -> Vec<String> {
    match crate::discover::read_root_file(root, "AGENTS.md") {
        Some(text) => parse(&text),
        None => Vec::new(),
    }
}

fn is_check_heading(title: &str) -> bool {
    static WORDS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b(test|tests|testing|verify|verification|checks?|lint|linting|ci)\b")
    });
    WORDS.is_match(title)
}

fn parse(text: &str) -> Vec<String> {
    static HEADING: LazyLock<Regex> = LazyLock::new(|| re(r"^(#{1,6})\s+(.+?)\s*#*\s*$"));
    static FENCE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(```+|~~~+)\s*([\w+-]*)"));
    static SPAN: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\n]+)`"));
    static BULLET: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*(?:[-*+]|\d+[.)])\s+`([^`]+)`\s*(?:[-–—:].*)?$"));
    let mut out: Vec<String> = Vec::new();
    let mut section: Option<usize> = None;
    let mut fence: Option<(String, bool)> = None;
    let push = |command: &str, out: &mut Vec<String>| {
        let command = command.trim().trim_start_matches("$ ").trim();
        if !command.is_empty() && !command.starts_with('#') && !out.iter().any(|c| c == command) {
            out.push(command.to_string());
        }
    };
    for line in text.lines() {
        if let Some((marker, shell)) = &fence {
            if line.trim_start().starts_with(marker.as_str()) {
                fence = None;
            } else if *shell && section.is_some() {
                push(line, &mut out);
            }
            continue;
        }
        if let Some(f) = FENCE.captures(line) {
            let lang = f[2].to_ascii_lowercase();
            let shell = matches!(
                lang.as_str(),
                "" | "sh" | "bash" | "shell" | "console" | "zsh"
            );
            fence = Some((f[1].to_string(), shell));
            continue;
        }
        if let Some(h) = HEADING.captures(line) {
            let level = h[1].len();
            if section.is_some_and(|s| level <= s) {
                section = None;
            }
            if section.is_none() && is_check_heading(&h[2]) {
                section = Some(level);
            }
            continue;
        }
        if section.is_none() {
            continue;
        }
        if let Some(b) = BULLET.captures(line) {
            push(&b[1], &mut out);
            continue;
        }
        for span in SPAN.captures_iter(line) {
            if looks_like_command(&span[1]) {
                push(&span[1], &mut out);
            }
        }
    }
    out.truncate(MAX_COMMANDS);
    out
}

fn looks_like_command(text: &str) -> bool {
    let first = text
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or("");
    text.contains(' ') && (TOOLS.contains(&first) || first.starts_with("./"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn commands_under_a_testing_heading_are_taken_and_others_are_not() {
        let text = "# Project\n\nRun `cargo run --release` to start.\n\n## Testing\n\nRun `cargo test --workspace` before committing.\n\n```bash\n$ npm run e2e\n# a comment\n```\n\n- `make integration` — the slow ones\n\n### Details\n\nAlso `pytest -q tests/unit`.\n\n## Deploying\n\n```sh\ncargo publish\n```\n";
        assert_eq!(
            parse(text),
            vec![
                "cargo test --workspace",
                "npm run e2e",
                "make integration",
                "pytest -q tests/unit"
            ]
        );
    }

    #[test]
    fn non_shell_fences_and_prose_spans_are_not_commands() {
        let text = "## Verification\n\n```toml\n[checks]\n```\n\nThe `Result` type and `foo bar` are not commands.\n\n```\ngo vet ./...\n```\n";
        assert_eq!(parse(text), vec!["go vet ./..."]);
    }

    #[test]
    fn a_heading_with_a_code_fence_looking_line_inside_a_fence_does_not_end_the_section() {
        let text = "## Checks\n\n```sh\n# not a heading\nmake lint\n```\n";
        assert_eq!(parse(text), vec!["make lint"]);
    }
}
