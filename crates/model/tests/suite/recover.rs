use super::common::tools;
use bosun_model::{ToolCall, recover_tool_calls};
use pretty_assertions::assert_eq;

fn call(n: usize, name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: format!("recovered_{n}"),
        name: name.into(),
        arguments: args.into(),
    }
}

#[test]
fn bare_json_object_on_its_own_line() {
    let r = recover_tool_calls(
        "I'll read it.\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}\n",
        &tools(),
    );
    assert_eq!(
        r.calls,
        vec![call(1, "read_file", r#"{"path":"src/lib.rs"}"#)]
    );
    assert!(r.invalid.is_empty());
    assert_eq!(r.remaining_text, "I'll read it.");
}

#[test]
fn fenced_json_with_parameters_key_and_string_arguments() {
    let text = "Running:\n```json\n{\"name\": \"run_command\", \"parameters\": {\"command\": \"ls\"}}\n```\nthen\n```\n{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a.txt\\\"}\"}\n```";
    let r = recover_tool_calls(text, &tools());
    assert_eq!(
        r.calls,
        vec![
            call(1, "run_command", r#"{"command":"ls"}"#),
            call(2, "read_file", r#"{"path":"a.txt"}"#)
        ]
    );
    assert_eq!(r.remaining_text, "Running:\n\nthen");
}

#[test]
fn qwen_hermes_tool_call_tags_including_an_unclosed_last_one() {
    let text = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"run_command\", \"input\": {\"command\": \"pwd\"}}";
    let r = recover_tool_calls(text, &tools());
    assert_eq!(
        r.calls,
        vec![
            call(1, "read_file", r#"{"path":"a"}"#),
            call(2, "run_command", r#"{"command":"pwd"}"#)
        ]
    );
    assert_eq!(r.remaining_text, "");
}

#[test]
fn invalid_arguments_produce_a_message_with_the_schema() {
    let r = recover_tool_calls(
        "{\"name\": \"read_file\", \"arguments\": {\"path\": 7, \"mode\": \"x\"}}",
        &tools(),
    );
    assert!(r.calls.is_empty());
    assert_eq!(r.invalid.len(), 1);
    let msg = &r.invalid[0];
    assert!(msg.contains("`read_file` was not run"), "{msg}");
    assert!(
        msg.contains("`path` must be string but is integer"),
        "{msg}"
    );
    assert!(msg.contains("unknown property `mode`"), "{msg}");
    assert!(
        msg.contains("\"required\":[\"path\"]"),
        "the schema is included: {msg}"
    );
    assert_eq!(r.remaining_text, "");
}

#[test]
fn an_unknown_tool_gets_the_list_of_tools_wherever_the_call_is_written() {
    // A name alone is just JSON; a name with arguments is a call, fenced, bare or tagged.
    let named = "{\"name\": \"delete_everything\"}";
    let r = recover_tool_calls(named, &tools());
    assert!(r.calls.is_empty() && r.invalid.is_empty());
    assert_eq!(r.remaining_text, named);
    for text in [
        "{\"name\": \"rename_function\", \"arguments\": {\"old\": \"a\"}}",
        "I will rename it.\n```json\n{\"name\": \"update_module\", \"arguments\": {}}\n```",
    ] {
        let r = recover_tool_calls(text, &tools());
        assert!(r.calls.is_empty(), "{text}");
        assert_eq!(r.invalid.len(), 1, "{text}");
        assert!(
            r.invalid[0].contains("no tool of that name"),
            "{}",
            r.invalid[0]
        );
        assert!(
            r.invalid[0].contains("read_file, run_command"),
            "{}",
            r.invalid[0]
        );
    }

    let tagged = recover_tool_calls(
        "<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>",
        &tools(),
    );
    assert!(tagged.calls.is_empty());
    assert_eq!(tagged.invalid.len(), 1);
    assert!(
        tagged.invalid[0].contains("no tool of that name"),
        "{}",
        tagged.invalid[0]
    );
    assert!(
        tagged.invalid[0].contains("read_file, run_command"),
        "{}",
        tagged.invalid[0]
    );
}

#[test]
fn prose_with_braces_and_json_examples_is_not_a_call() {
    let tools = tools();
    for text in [
        "Use a struct like `Point { x: 1, y: 2 }` and a map {\"a\": 1}.",
        "The config is {\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}} inline in this sentence.",
        "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```",
        "```rust\nfn main() { println!(\"{}\", 1); }\n```",
        "```text\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n```",
        "{\"name\": \"read_file\"}",
        "function f() {\n  return 1;\n}",
        "{ not json at all",
        "",
    ] {
        let r = recover_tool_calls(text, &tools);
        assert!(
            r.calls.is_empty() && r.invalid.is_empty(),
            "{text:?} → {r:?}"
        );
        assert_eq!(r.remaining_text, text.trim(), "{text:?}");
    }
}

#[test]
fn broken_json_in_tags_is_reported() {
    let r = recover_tool_calls(
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {</tool_call>",
        &tools(),
    );
    assert!(r.calls.is_empty());
    assert_eq!(r.invalid.len(), 1);
    assert!(r.invalid[0].contains("not JSON"), "{}", r.invalid[0]);
}

#[test]
fn openai_style_function_wrapper_and_arrays_of_calls() {
    let text = "```json\n[{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}},\n {\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}]\n```";
    let r = recover_tool_calls(text, &tools());
    assert_eq!(
        r.calls,
        vec![
            call(1, "read_file", r#"{"path":"a"}"#),
            call(2, "read_file", r#"{"path":"b"}"#)
        ]
    );
}

#[test]
fn a_fence_with_one_valid_call_and_two_malformed_objects_runs_the_valid_one_and_reports_the_rest() {
    let text = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n{\"name\": \"read_file\", \"arguments\": {path: b.py}}\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"pytest\"\n```";
    let r = recover_tool_calls(text, &tools());
    assert_eq!(r.calls, vec![call(1, "read_file", r#"{"path":"a.py"}"#)]);
    assert_eq!(r.invalid.len(), 2, "{:?}", r.invalid);
    assert!(
        r.invalid.iter().all(|m| m.contains("not JSON")),
        "{:?}",
        r.invalid
    );
    assert!(r.invalid[0].contains("b.py"), "{}", r.invalid[0]);
    assert!(r.invalid[1].contains("pytest"), "{}", r.invalid[1]);
}

#[test]
fn a_python_triple_quoted_string_is_read_as_the_string_it_means() {
    let text = "```json\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"\"\"cat > t.py <<'EOF'\nprint(\"hi\")\nEOF\n\"\"\"}}\n```";
    let r = recover_tool_calls(text, &tools());
    assert_eq!(
        r.calls,
        vec![call(
            1,
            "run_command",
            r#"{"command":"cat > t.py <<'EOF'\nprint(\"hi\")\nEOF\n"}"#
        )],
        "{:?}",
        r.invalid
    );
    // The first closing triple quote ends the string, as in Python: a docstring inside one
    // ends it early, and the call is reported rather than run with half its text.
    let broken = "```json\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"\"\"x = 1\n\"\"\"doc\"\"\"\n\"\"\"}}\n```";
    let r = recover_tool_calls(broken, &tools());
    assert!(r.calls.is_empty() && !r.invalid.is_empty(), "{r:?}");
}

#[test]
fn llama3_python_tag_and_mistral_tool_calls_markers_are_calls() {
    let llama =
        "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.py\"}}<|eom_id|>";
    let r = recover_tool_calls(llama, &tools());
    assert_eq!(r.calls, vec![call(1, "read_file", r#"{"path":"a.py"}"#)]);
    assert_eq!(r.remaining_text, "");
    let mistral = "Let me look.\n[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}, {\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}]";
    let r = recover_tool_calls(mistral, &tools());
    assert_eq!(
        r.calls,
        vec![
            call(1, "read_file", r#"{"path":"a.py"}"#),
            call(2, "run_command", r#"{"command":"ls"}"#)
        ]
    );
    assert_eq!(r.remaining_text, "Let me look.");
    // A marker with something unreadable after it is reported, not taken for prose.
    let r = recover_tool_calls("[TOOL_CALLS] [{\"name\": \"read_file\", ", &tools());
    assert!(r.calls.is_empty());
    assert_eq!(r.invalid.len(), 1, "{:?}", r.invalid);
}

#[test]
fn near_miss_argument_names_are_read_as_the_schema_names_them() {
    let r = recover_tool_calls(
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.py\"}}\n```\n```json\n{\"name\": \"run_command\", \"arguments\": {\"cmd\": \"ls\"}}\n```",
        &tools(),
    );
    assert_eq!(
        r.calls,
        vec![
            call(1, "read_file", r#"{"path":"a.py"}"#),
            call(2, "run_command", r#"{"command":"ls"}"#)
        ]
    );
    // Not when the meant name is given too, nor for a name that is no near miss: the schema
    // check says what is wrong.
    let r = recover_tool_calls(
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\", \"file\": \"b.py\"}}\n```\n```json\n{\"name\": \"read_file\", \"arguments\": {\"content\": \"x\"}}\n```",
        &tools(),
    );
    assert!(r.calls.is_empty(), "{:?}", r.calls);
    assert_eq!(r.invalid.len(), 2, "{:?}", r.invalid);
    assert!(
        r.invalid.iter().all(|m| m.contains("JSON schema")),
        "{:?}",
        r.invalid
    );
}

#[test]
fn an_unknown_tool_is_answered_with_the_schema_of_the_tool_it_seems_to_mean() {
    let r = recover_tool_calls(
        "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"a.py\"}}\n```",
        &tools(),
    );
    assert!(r.calls.is_empty());
    assert_eq!(r.invalid.len(), 1);
    let said = &r.invalid[0];
    assert!(said.contains("no tool of that name"), "{said}");
    assert!(
        said.contains("It looks like you meant `read_file`"),
        "{said}"
    );
    assert!(said.contains("\"offset\""), "the schema: {said}");
    // Nothing to go by: only the list.
    let r = recover_tool_calls(
        "```json\n{\"name\": \"rename_function\", \"arguments\": {\"old\": \"f\", \"new\": \"g\"}}\n```",
        &tools(),
    );
    assert!(!r.invalid[0].contains("looks like"), "{}", r.invalid[0]);
    assert!(
        r.invalid[0].contains("Available tools: read_file, run_command"),
        "{}",
        r.invalid[0]
    );
}
