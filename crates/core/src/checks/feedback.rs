//! What the model is told when checks fail: one message — which check, the command, the exit
//! code, and a trimmed digest (failing tests, errors at file:line, the tail of the output),
//! with the failures the base commit has too marked as such.

use super::run::failure_lines;
use bosun_protocol::{CheckFinished, CheckScope, CheckStatus};

/// Failures listed per check in the message.
const FAILURES_SHOWN: usize = 20;
/// Output tail per failing check, in bytes.
const TAIL_BYTES: usize = 3000;

/// The message after a failed round `round` of `max_rounds`; `tails` holds each failing
/// check's output tail by check id.
pub(crate) fn round_failed(
    results: &[CheckFinished],
    tails: &dyn Fn(&str) -> Option<String>,
    round: u32,
    max_rounds: u32,
) -> String {
    let left = max_rounds.saturating_sub(round);
    let mut out = format!(
        "Bosun ran the project's checks on your changes and they fail (round {round} of {max_rounds}; {left} more {} before the task ends as checks_failed). Fix what fails below, then answer again when you are done; Bosun runs the checks again.\n",
        if left == 1 { "try" } else { "tries" }
    );
    for c in results {
        match c.status {
            CheckStatus::Passed => {
                out.push_str(&format!("\n✓ check `{}` passed.\n", c.name));
            }
            CheckStatus::Denied | CheckStatus::Error => {
                out.push_str(&format!(
                    "\n· check `{}` did not run ({}): {} — this does not count against you.\n",
                    c.name,
                    c.status.as_str(),
                    c.summary
                ));
            }
            CheckStatus::Failed | CheckStatus::TimedOut => {
                let code = c
                    .exit_code
                    .map(|e| format!("exit code {e}"))
                    .unwrap_or_else(|| c.status.as_str().to_string());
                let what = match (c.required, c.only_before_task) {
                    (_, true) => {
                        " (every failure below was there before this task: the base commit fails the same way; it does not block)"
                    }
                    (false, _) => " (optional: it does not block)",
                    _ => "",
                };
                let scope = if c.scope == CheckScope::Related {
                    " (the tests related to the files you changed)"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "\n✗ check `{}`{scope} failed — {code}{what}\n  summary: {}\n",
                    c.name, c.summary
                ));
                if !c.failures.is_empty() {
                    out.push_str("  failures:\n");
                    for f in c.failures.iter().take(FAILURES_SHOWN) {
                        out.push_str(&format!("  - {}\n", failure_lines(f)));
                    }
                    if c.failures.len() > FAILURES_SHOWN {
                        out.push_str(&format!(
                            "  - … and {} more\n",
                            c.failures.len() - FAILURES_SHOWN
                        ));
                    }
                }
                if let Some(tail) = tails(&c.check_id).filter(|t| !t.trim().is_empty()) {
                    out.push_str("  output (the end):\n");
                    for line in tail_of(&tail, TAIL_BYTES).lines() {
                        out.push_str("    ");
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
        }
    }
    if results
        .iter()
        .any(|c| c.failures.iter().any(|f| f.before_task))
    {
        out.push_str("\nFailures marked \"failing before this task\" happen on the base commit too. If your task is to fix them, fix them; if not, you may leave them and say so.\n");
    }
    out
}

/// The last `max` bytes of `text`, cut at a line start (and a char boundary).
pub(crate) fn tail_of(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let tail = &text[start..];
    match tail.find('\n') {
        Some(i) if i + 1 < tail.len() => &tail[i + 1..],
        _ => tail,
    }
}

/// One line for the task's summary: "checks pass: test, lint" / "checks fail: test (2 failures)".
pub(crate) fn summary_line(results: &[CheckFinished]) -> String {
    let names = |pred: &dyn Fn(&CheckFinished) -> bool| {
        results
            .iter()
            .filter(|c| pred(c))
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let failing: Vec<String> = results
        .iter()
        .filter(|c| c.blocks())
        .map(|c| match c.failures.len() {
            0 => c.name.clone(),
            1 => format!("{} (1 failure)", c.name),
            n => format!("{} ({n} failures)", c.name),
        })
        .collect();
    // Failing the way the base does: not blocking, never called passing.
    let as_before: Vec<String> = results
        .iter()
        .filter(|c| c.required && c.status.is_failure() && !c.blocks())
        .map(|c| c.name.clone())
        .collect();
    if failing.is_empty() {
        let passed = names(&|c| c.status == CheckStatus::Passed);
        match (passed.is_empty(), as_before.is_empty()) {
            (_, true) => format!("checks pass: {passed}"),
            (true, false) => format!(
                "checks still fail as before this task: {}",
                as_before.join(", ")
            ),
            (false, false) => format!(
                "checks pass: {passed}; still failing as before this task: {}",
                as_before.join(", ")
            ),
        }
    } else {
        format!("checks fail: {}", failing.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bosun_protocol::CheckFailure;

    fn failed(name: &str, failures: Vec<CheckFailure>) -> CheckFinished {
        CheckFinished {
            check_id: format!("id-{name}"),
            name: name.into(),
            status: CheckStatus::Failed,
            exit_code: Some(1),
            duration_ms: 10,
            summary: "1 test failed".into(),
            failures,
            required: true,
            scope: CheckScope::Full,
            only_before_task: false,
        }
    }

    #[test]
    fn the_message_names_the_check_the_command_result_the_failures_and_marks_old_ones() {
        let results = vec![failed(
            "test",
            vec![
                CheckFailure {
                    path: Some("tests/test_calc.py".into()),
                    line: Some(9),
                    message: "test_add: AssertionError: 3 != 4".into(),
                    before_task: false,
                },
                CheckFailure {
                    path: None,
                    line: None,
                    message: "test_sub: AssertionError: 1 != 0".into(),
                    before_task: true,
                },
            ],
        )];
        let msg = round_failed(
            &results,
            &|_| Some("a\nb\nFAILED (failures=2)\n".into()),
            1,
            3,
        );
        assert!(msg.contains("round 1 of 3; 2 more tries"), "{msg}");
        assert!(msg.contains("check `test` failed — exit code 1"), "{msg}");
        assert!(msg.contains("tests/test_calc.py:9: test_add: AssertionError: 3 != 4"));
        assert!(msg.contains("test_sub: AssertionError: 1 != 0 [failing before this task"));
        assert!(msg.contains("FAILED (failures=2)"));
        assert_eq!(summary_line(&results), "checks fail: test (2 failures)");
    }

    #[test]
    fn tails_are_cut_at_a_line_and_a_char_boundary() {
        let text = "é".repeat(10) + "\nlast line\n";
        assert_eq!(tail_of(&text, 12), "last line\n");
        assert_eq!(tail_of("short", 100), "short");
    }
}
