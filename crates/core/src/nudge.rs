//! Keeping the model working: what Bosun answers when a model stops without a call it can run.
//!
//! Small models often end a turn with a plan in prose, a promise ("I will now …") or a
//! question they could answer themselves, and Bosun would otherwise take that for the final
//! answer. [`classify`] tells those apart from real answers; the loop then sends the message
//! from [`message`] and goes on, at most [`max_nudges`] times per task.

use crate::CoreError;
use crate::config::BosunConfig;
use bosun_protocol::{NudgeReason, ToolSpec};
use std::path::Path;

/// Nudges a task may get when nothing says otherwise.
pub const DEFAULT_MAX_NUDGES: u32 = 3;

/// `--max-nudges`, else yours per repository (`[repos."<path>"] max_nudges`), else your global
/// `max_nudges`, else 3. With 0, the first reply that would be nudged fails the task at once.
pub fn max_nudges(config: &BosunConfig, repo_root: &Path, flag: Option<u32>) -> u32 {
    flag.or_else(|| {
        config
            .repos
            .get(&repo_root.display().to_string())
            .and_then(|r| r.max_nudges)
    })
    .or(config.max_nudges)
    .unwrap_or(DEFAULT_MAX_NUDGES)
}

/// Same as [`max_nudges`], reading `$BOSUN_HOME/config.toml`.
pub(crate) fn load_max_nudges(
    home: &Path,
    repo_root: &Path,
    flag: Option<u32>,
) -> Result<u32, CoreError> {
    Ok(max_nudges(&BosunConfig::load(home)?, repo_root, flag))
}

/// Whether a final reply (one with no tool call Bosun could run) should be answered with a
/// nudge instead of ending the task.
///
/// The rule, in order:
/// 1. **The user asked a question** — the prompt ends with `?` or starts with an interrogative
///    or an explain-word (what, why, how, where, which, who, when, explain, describe, does, is,
///    …), except a request phrased as one ("Can you add …?", "Could you fix …?"): never nudged,
///    the reply is the answer.
/// 2. Only when nothing changed:
///    - **Question** — the last sentence asks the user for something the model could find out
///      or decide itself: "Could you provide …", "Can you share …", "Should I …", "Should the
///      …", "Do you know …", "Do you want me to …", "Would you like me to …", "Which file …?",
///      "Where is …?", "Please provide …".
///      A rhetorical question ("Simple, right?") does not match.
///    - **Prose plan** — two or more numbered or bulleted lines that start with an imperative
///      verb or "I'll"/"We need to" (steps still to do; a past-tense list is a summary), or a
///      plan marker ("Step 1", "First, I'll", "Here's my plan", "Here is the plan"), or
///      "Here is the updated code" with a code block that was never written to a file.
/// 3. **Promise** — the reply's last sentence announces work instead of reporting it: it starts
///    with "I will", "I'll", "Let me" (not "let me know", "I will leave", "I will not"),
///    "I'm going to", "Next, I'll",
///    "Now I will", "I need to", …, or the reply ends with a colon (an announcement cut
///    short). This is the only nudge after the task has changed files.
/// 4. Anything else is an answer: explanations, summaries of work done, "no change is needed",
///    and sentences with "I will" in the past or conditional ("If you want, I will …").
pub fn classify(prompt: &str, reply: &str, changed_anything: bool) -> Option<NudgeReason> {
    let reply = reply.trim();
    if reply.is_empty() || prompt_is_question(prompt) {
        return None;
    }
    let prose = strip_code_blocks(reply);
    let last = last_sentence(&prose);
    if !changed_anything {
        if is_question(&last) {
            return Some(NudgeReason::Question);
        }
        if is_plan(reply, &prose) {
            return Some(NudgeReason::ProsePlan);
        }
    }
    if is_promise(&last) || ends_with_announcement(reply) {
        return Some(NudgeReason::Promise);
    }
    None
}

/// Whether a reply says the work is done ("I fixed the median", "the function has been
/// updated") when nothing in the repository changed and the user asked for a change: a small
/// model's false claim of completion, answered as a promise not kept (see [`CLAIM_MESSAGE`]).
pub fn claims_unmade_change(prompt: &str, reply: &str, changed_anything: bool) -> bool {
    if changed_anything || prompt_is_question(prompt) {
        return false;
    }
    const VERBS: &[&str] = &[
        "fixed",
        "updated",
        "changed",
        "modified",
        "implemented",
        "added",
        "renamed",
        "refactored",
        "corrected",
        "rewrote",
        "rewritten",
        "replaced",
        "created",
        "moved",
        "wrote",
        "written",
        "removed",
        "edited",
        "adjusted",
        "made",
    ];
    let prose = strip_code_blocks(reply).to_lowercase();

    let words: Vec<&str> = prose
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(3).any(|w| {
        let subject = matches!(w[0], "i" | "i've" | "we" | "we've");
        let verb = |x: &str| VERBS.contains(&x);
        (subject && (verb(w[1]) || (matches!(w[1], "have" | "just") && verb(w[2]))))
            || (matches!(w[0], "has" | "have") && w[1] == "been" && verb(w[2]))
    })
}

/// What a reply that claims an unmade change is told.
pub const CLAIM_MESSAGE: &str = "You said the change is made, but nothing in the repository has \
     changed: no file was edited. Make the change now; reply that it is done only after the edit \
     succeeded.";

/// Whether the user's prompt asks something (see rule 1 of [`classify`]).
pub fn prompt_is_question(prompt: &str) -> bool {
    let p = prompt.trim().to_lowercase();
    // Words as code has them too: `is_leap()` is one word, not "is".
    let split = |c: char| !c.is_alphanumeric() && c != '\'' && c != '_';
    let first_word = |s: &str| -> String {
        s.split(split)
            .find(|w| !w.is_empty())
            .unwrap_or("")
            .to_string()
    };
    let first = first_word(&p);
    let first = first.as_str();
    // A sentence that starts with a change asks for one ("… test_dates.py fails. Fix it."),
    // unless the whole prompt ends as a question.
    const CHANGE: &[&str] = &[
        "fix",
        "implement",
        "add",
        "rename",
        "move",
        "change",
        "update",
        "make",
        "write",
        "create",
        "remove",
        "delete",
        "refactor",
        "replace",
        "convert",
    ];
    if !p.ends_with('?')
        && p.split(['.', '!', ';', '\n'])
            .any(|sentence| CHANGE.contains(&first_word(sentence).as_str()))
    {
        return false;
    }
    const REQUESTS: &[&str] = &[
        "can you",
        "could you",
        "would you",
        "will you",
        "please",
        "can we",
        "could we",
    ];
    if let Some(r) = REQUESTS.iter().find(|r| p.starts_with(**r)) {
        // "Can you explain …", "please tell me …": asked as a request, still a question.
        let next = p[r.len()..]
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .find(|w| !w.is_empty())
            .unwrap_or("");
        return matches!(
            next,
            "explain" | "describe" | "summarize" | "summarise" | "tell" | "show" | "list"
        );
    }
    const ASKING: &[&str] = &[
        "what",
        "what's",
        "why",
        "how",
        "where",
        "which",
        "who",
        "whose",
        "when",
        "explain",
        "describe",
        "summarize",
        "summarise",
        "tell",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "did",
        "should",
    ];
    p.ends_with('?') || ASKING.contains(&first)
}

/// The reply with fenced code blocks taken out (code is not prose).
fn strip_code_blocks(reply: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in reply.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The last sentence of the prose, lowercased, with list markers and emphasis removed.
fn last_sentence(prose: &str) -> String {
    let line = prose
        .lines()
        .map(str::trim)
        .rev()
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = line.to_lowercase().replace(['*', '`'], "");
    let body = line.trim_end_matches(['.', '!', '?', ':', ' ']);
    // A sentence ends at punctuation followed by a space (not the dot of `utils.py`).
    let start = [". ", "! ", "? "]
        .iter()
        .filter_map(|p| body.rfind(p))
        .max()
        .map(|i| i + 1)
        .unwrap_or(0);
    strip_marker(line[start..].trim()).to_string()
}

/// A list marker ("1.", "2)", "-", "*") at the start of a line, taken off.
fn strip_marker(line: &str) -> &str {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return rest.trim_start();
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let rest = &t[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r.trim_start();
        }
    }
    t
}

fn list_item(line: &str) -> Option<&str> {
    let stripped = strip_marker(line);
    (stripped.len() < line.trim_start().len()).then_some(stripped)
}

fn normalise(s: &str) -> String {
    s.replace(['\u{2019}', '\u{2018}'], "'")
}

const PROMISES: &[&str] = &[
    "i will ",
    "i'll ",
    "let me ",
    "let's ",
    "i'm going to ",
    "i am going to ",
    "next, i'll ",
    "next i'll ",
    "next, i will ",
    "next i will ",
    "now i'll ",
    "now, i'll ",
    "now i will ",
    "now, i will ",
    "now let me ",
    "now, let me ",
    "first, i'll ",
    "first i'll ",
    "first, i will ",
    "first, let me ",
    "i'll now ",
    "i will now ",
    "i'm now going to ",
    "i need to ",
    "i should now ",
    "we'll now ",
    "next, let me ",
    "then i'll ",
];

/// Openings of a "promise" that are not one.
const NOT_PROMISES: &[&str] = &[
    "let me know",
    "let me explain",
    "let's break",
    "i will leave",
    "i'll leave",
    "i will not",
    "i won't",
];

fn is_promise(last: &str) -> bool {
    let last = normalise(last);
    if NOT_PROMISES.iter().any(|p| last.starts_with(p)) {
        return false;
    }
    PROMISES.iter().any(|p| last.starts_with(p))
}

/// A reply whose prose ends with a colon: it announced something ("Let me look at the file:")
/// and stopped.
fn ends_with_announcement(reply: &str) -> bool {
    reply.trim_end().ends_with(':')
}

const ASKS: &[&str] = &[
    "could you ",
    "can you ",
    "would you ",
    "should i ",
    "should the ",
    "should it ",
    "do you know",
    "shall i ",
    "do you want",
    "would you like",
    "which file",
    "which files",
    "which function",
    "which module",
    "which version",
    "where is ",
    "where are ",
    "where can i ",
    "what is the name",
    "what is the path",
    "what file",
    "do you have ",
    "please provide",
    "please share",
    "please paste",
    "please tell me",
    "please let me know",
    "please clarify",
    "can i ",
    "may i ",
    "is it ok",
    "is that ok",
];

fn is_question(last: &str) -> bool {
    let last = normalise(last);
    let asks = ASKS.iter().any(|a| last.starts_with(a));
    // A request for material ("Please provide the file.") counts without a question mark.
    asks && (last.ends_with('?') || last.starts_with("please") || last.contains(" provide "))
}

const IMPERATIVES: &[&str] = &[
    "open",
    "add",
    "update",
    "create",
    "modify",
    "replace",
    "write",
    "run",
    "install",
    "read",
    "locate",
    "find",
    "check",
    "implement",
    "define",
    "import",
    "refactor",
    "rename",
    "change",
    "fix",
    "test",
    "remove",
    "delete",
    "move",
    "edit",
    "insert",
    "extract",
    "navigate",
    "identify",
    "ensure",
    "verify",
    "use",
    "handle",
    "search",
    "look",
    "go",
    "save",
    "call",
    "make",
    "set",
    "examine",
    "inspect",
    "review",
    "adjust",
    "wrap",
    "convert",
    "split",
    "i'll",
    "i",
    "we'll",
    "we",
    "then",
    "next",
    "finally",
    "first",
];

fn is_plan(reply: &str, prose: &str) -> bool {
    let lower = normalise(&prose.to_lowercase());
    const MARKERS: &[&str] = &[
        "step 1",
        "first, i'll",
        "first i'll",
        "first, i will",
        "first, we'll",
        "first, we need to",
        "here's my plan",
        "here is my plan",
        "here's the plan",
        "here is the plan",
        "my plan is",
        "here's how i'll",
        "here is how i will",
        "i would do the following",
        "we need to do the following",
    ];
    if MARKERS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    let steps = lower
        .lines()
        .filter_map(list_item)
        .filter(|item| {
            let word = item
                .split(|c: char| !c.is_alphanumeric() && c != '\'')
                .find(|w| !w.is_empty())
                .unwrap_or("");
            IMPERATIVES.contains(&word)
        })
        .count();
    if steps >= 2 {
        return true;
    }
    // Code shown as "the updated code" but never written to a file.
    let has_code = reply.contains("```");
    const SHOWN: &[&str] = &[
        "here is the updated",
        "here's the updated",
        "here is the modified",
        "here's the modified",
        "here is the corrected",
        "here's the corrected",
        "here is the fixed",
        "here's the fixed",
        "you can replace",
        "replace the function with",
        "update the function to",
        "change it to",
    ];
    has_code && SHOWN.iter().any(|s| lower.contains(s))
}

/// What Bosun tells the model for a nudge: why it was stopped, what to do, and how.
pub fn message(reason: NudgeReason, tools: &[ToolSpec]) -> String {
    let what = match reason {
        NudgeReason::ProsePlan => {
            "You described steps but did not do them: nothing in the repository has changed. \
             Do the first step now by calling a tool; do not describe it."
        }
        NudgeReason::Promise => {
            "You said what you will do, but you did not do it: there was no tool call in your \
             reply. Do it now by calling a tool."
        }
        NudgeReason::Question => {
            "Do not ask the user: find out with the tools (read_file, search, list_dir) instead \
             of asking, choose the most reasonable option, and carry on with the task by \
             calling a tool."
        }
        NudgeReason::UnknownTool | NudgeReason::SchemaError => {
            "Your tool call could not be run. Call the tool again with valid arguments."
        }
        NudgeReason::NoOpEdit => {
            "old_string and new_string are the same: this edit changes nothing; give the text \
             to replace and what to replace it with."
        }
        NudgeReason::RepeatedCall => {
            "You sent the same call again and it failed the same way. Do something different."
        }
    };
    format!("{what}\n\n{}", how_to_call(tools))
}

/// The tools there are and the exact format to call one.
pub fn how_to_call(tools: &[ToolSpec]) -> String {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let example = if names.contains(&"read_file") {
        r#"{"name": "read_file", "arguments": {"path": "PATH/OF/THE/FILE"}}"#.to_string()
    } else if let Some(t) = tools.first() {
        format!(r#"{{"name": "{}", "arguments": {{...}}}}"#, t.name)
    } else {
        r#"{"name": "TOOL", "arguments": {...}}"#.to_string()
    };
    format!(
        "The tools you have: {}.\nTo call one, use the native tool-call field, or write exactly \
         one call in a ```json block, with the tool's name and its arguments:\n```json\n{example}\n```",
        names.join(", ")
    )
}

/// The answer to the invalid calls of a reply: what was wrong with each, then the tools.
pub fn invalid_calls_message(invalid: &[String], tools: &[ToolSpec]) -> String {
    format!(
        "Your tool call could not be run:\n{}\nCall the tool again with valid arguments.\n\n{}",
        invalid.join("\n"),
        how_to_call(tools)
    )
}

/// Why the invalid calls of a reply were rejected: no such tool, or bad arguments.
pub fn invalid_reason(invalid: &[String]) -> NudgeReason {
    if invalid.iter().any(|m| m.contains("no tool of that name")) {
        NudgeReason::UnknownTool
    } else {
        NudgeReason::SchemaError
    }
}

/// The answer to a call that failed the same way as the previous time.
pub fn repeated_call_message(error: &str) -> String {
    format!(
        "You sent the same call again and it failed the same way: {}\nDo something different: \
         read the file first with read_file to see its exact text, check the path with \
         list_dir, search for the text with search, or use another tool. Do not send this \
         call again.",
        error.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_comes_from_the_flag_then_the_repository_then_the_global_value() {
        let root = Path::new("/r");
        let mut config = BosunConfig::default();
        assert_eq!(max_nudges(&config, root, None), 3);
        config.max_nudges = Some(5);
        assert_eq!(max_nudges(&config, root, None), 5);
        config.repos.insert(
            "/r".into(),
            crate::repo_settings::RepoSettings {
                max_nudges: Some(2),
                ..Default::default()
            },
        );
        assert_eq!(max_nudges(&config, root, None), 2);
        assert_eq!(max_nudges(&config, root, Some(1)), 1);
    }

    #[test]
    fn a_nudge_message_names_the_tools_and_the_format() {
        let tools = vec![ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        }];
        let m = message(NudgeReason::Question, &tools);
        assert!(m.contains("read_file, search, list_dir"), "{m}");
        assert!(m.contains("The tools you have: read_file."), "{m}");
        assert!(m.contains("```json\n{\"name\": \"read_file\""), "{m}");
    }

    #[test]
    fn the_last_sentence_is_found() {
        assert_eq!(
            last_sentence("Done. I will now run the tests."),
            "i will now run the tests."
        );
        assert_eq!(last_sentence("1. Open the file\n2. Fix it"), "fix it");
        assert_eq!(
            last_sentence("Sure! Please read utils.py."),
            "please read utils.py."
        );
    }
}
