//! Model profiles: a local llama.cpp-like server is probed the first time its model is used (its
//! chat template from `/props`, two native tool-call requests), and a model whose native calls
//! are not reliable gets the tools as text in its template's format.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockOptions, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

/// What llama.cpp serving Qwen2.5 answers on `/props` (the template cut to what matters).
fn qwen_props() -> serde_json::Value {
    json!({
        "chat_template": "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{{ tool | tojson }}</tools>\nFor each function call, return a json object within <tool_call></tool_call> XML tags{%- endif %}",
        "default_generation_settings": {"n_ctx": 4096},
        "total_slots": 1
    })
}

fn server_with_props(replies: Vec<MockReply>) -> MockModelServer {
    MockModelServer::start_blocking_with(
        replies,
        MockOptions {
            props: Some(qwen_props()),
            ..MockOptions::default()
        },
    )
    .unwrap()
}

/// The probe's two requests, answered as a small model does: the call written as text.
fn probe_answers() -> Vec<MockReply> {
    vec![
        text(
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n</tool_call>",
        ),
        text(
            "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}\n</tool_call>",
        ),
    ]
}

fn hermes_edit() -> MockReply {
    text(
        "<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"README.md\", \"old_string\": \"# demo\", \"new_string\": \"# demo app\"}}\n</tool_call>",
    )
}

fn system_of(req: &bosun_testkit::RecordedRequest) -> String {
    messages(req)[0]["content"].as_str().unwrap().to_string()
}

#[test]
fn a_local_server_is_probed_on_first_use_and_its_model_gets_the_tools_as_hermes_text() {
    let env = Env::new();
    let mut replies = probe_answers();
    replies.push(hermes_edit());
    replies.push(text("I renamed the project in README.md."));
    let server = server_with_props(replies);
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks", "--edit-format", "tools"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let reqs = server.model_requests();
    assert_eq!(reqs.len(), 4, "two probe requests, then the task's two");
    // The probe offered native tools; the task's requests offer none natively …
    assert!(reqs[0].body.get("tools").is_some());
    for r in &reqs[2..] {
        assert!(r.body.get("tools").is_none(), "{}", r.body);
        assert_eq!(messages(r)[0]["role"], "system");
    }
    // … but in the system prompt, in Qwen's own format, with the format to answer in.
    let system = system_of(&reqs[2]);
    assert!(
        system.contains("<tools>\n{\"function\":{\"description\""),
        "{system}"
    );
    assert!(
        system.contains("<tool_call></tool_call> XML tags"),
        "{system}"
    );
    assert!(system.contains("\"name\":\"read_file\""), "{system}");
    // A small model: the short prompt, no plan or patch tool, a short response limit.
    assert!(system.contains("make it now"), "{system}");
    assert!(!system.contains("\"name\":\"update_plan\""), "{system}");
    assert!(!system.contains("\"name\":\"apply_patch\""), "{system}");
    assert_eq!(reqs[2].body["max_tokens"], 2048);
    assert_eq!(
        reqs[0].body["max_tokens"], 256,
        "the probe's own requests are short"
    );
    // The call the model wrote ran, and went back to it as text: no `tool` role, results in
    // <tool_response> tags in the user's turn.
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("README.md"))
            .unwrap()
            .lines()
            .next(),
        Some("# demo app")
    );
    let last = messages(&reqs[3]);
    assert!(
        last.iter()
            .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none()),
        "{last:?}"
    );
    let turn = last.last().unwrap();
    assert_eq!(turn["role"], "user");
    assert!(
        turn["content"]
            .as_str()
            .unwrap()
            .contains("<tool_response>"),
        "{turn}"
    );
    assert!(
        last[last.len() - 2]["content"]
            .as_str()
            .unwrap()
            .contains("<tool_call>")
    );
    // The task records the profile, and the transcript says it.
    let started = run.events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskStarted(t) => t.profile.clone(),
        _ => None,
    });
    let p = started.expect("the profile in task_started");
    assert_eq!(
        (
            p.native_tools,
            p.tool_format.as_str(),
            p.edit_format.as_str(),
            p.context_window,
            p.source.as_str()
        ),
        (false, "hermes", "tools", Some(4096), "config"),
        "the --edit-format key over the probe"
    );
    let (ok, shown, err) = env.text(&["show", &run.task_id()]);
    assert!(ok, "{err}");
    assert!(
        shown.contains("profile tools as hermes text, edits through the tools, 4096-token context"),
        "{shown}"
    );

    // The second task uses the cached probe: no probe requests.
    server.push(hermes_edit());
    server.push(text("Done."));
    let again = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks", "--edit-format", "tools"],
    );
    assert_eq!(again.code(), Some(0), "{}", again.stderr());
    assert_eq!(server.model_requests().len(), 6);
    assert!(server.model_requests()[4].body.get("tools").is_none());
}

#[test]
fn models_probe_prints_what_it_found_and_models_lists_it() {
    let env = Env::new();
    let server = server_with_props(probe_answers());
    let base = format!("{}/v1", server.url());
    let (ok, out, err) = env.text(&[
        "models",
        "probe",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "qwen2.5-coder-1.5b",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("chat template (llama.cpp /props) writes tool calls in the hermes format"),
        "{out}"
    );
    assert!(
        out.contains("0 of 2 native tool calls came back valid; 2 written as text instead"),
        "{out}"
    );
    assert!(out.contains("context window 4096 tokens"), "{out}");
    assert!(
        out.contains(
            "profile: tools as hermes text, edits as whole files, 4096-token context (probe)"
        ),
        "{out}"
    );
    let cache: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.join("model-profiles.json")).unwrap(),
    )
    .unwrap();
    let entry = &cache["profiles"][format!("{base} qwen2.5-coder-1.5b")];
    assert_eq!(entry["profile"]["tool_format"], "hermes", "{cache}");

    // A provider in config.toml pointing at it lists the probed profile.
    std::fs::write(
        env.home.join("config.toml"),
        format!("[providers.local]\napi = \"openai-chat\"\nbase_url = \"{base}\"\nmodel = \"qwen2.5-coder-1.5b\"\n"),
    )
    .unwrap();
    let listed = env.json(&["models", "--json"]);
    assert_eq!(listed[0]["provider"], "local");
    assert_eq!(listed[0]["profile"]["native_tools"], false);
    assert_eq!(listed[0]["profile"]["source"], "probe");
    assert_eq!(listed[0]["would_probe"], false);
    let (ok, out, _) = env.text(&["models"]);
    assert!(ok);
    assert!(out.contains("local  qwen2.5-coder-1.5b at"), "{out}");
    assert!(out.contains("probed 20"), "{out}");
}

#[test]
fn a_profile_set_in_full_is_never_probed_and_native_models_keep_native_tools() {
    let env = Env::new();
    let server = server_with_props(vec![
        tools(vec![call(
            "c1",
            "edit_file",
            json!({"path": "README.md", "old_string": "# demo", "new_string": "# demo app"}),
        )]),
        text("Renamed."),
    ]);
    let base = format!("{}/v1", server.url());
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!("[providers.local]\napi = \"openai-chat\"\nbase_url = \"{base}\"\nmodel = \"m\"\nprofile = {{ native_tools = true, edit_format = \"tools\", context_window = 32768 }}\n"),
    )
    .unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "Rename the project to demo app in the README",
        "--provider",
        "local",
        "--no-checks",
    ]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let reqs = server.model_requests();
    assert_eq!(reqs.len(), 2, "no probe requests");
    assert!(reqs[0].body.get("tools").is_some(), "native tools are sent");
    assert!(!env.home.join("model-profiles.json").exists());
}

#[test]
fn a_server_that_says_nothing_about_its_model_is_not_probed_unasked() {
    // Like vLLM or LM Studio (and every other test's mock): no /props, no /api/show.
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("Nothing to change.")]).unwrap();
    let run = env.run(&server, "What does this project do?", &[]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(server.model_requests().len(), 1);
    assert!(server.model_requests()[0].body.get("tools").is_some());
}

#[test]
fn bad_format_names_are_refused_with_the_choices() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![]).unwrap();
    for (flag, value, says) in [
        (
            "--tool-format",
            "xml",
            "native, hermes, llama3, mistral, json",
        ),
        ("--edit-format", "udiff", "tools, whole, search-replace"),
    ] {
        let run = env.run(&server, "x", &[flag, value]);
        assert_eq!(run.code(), Some(2), "{flag} {value}: {}", run.stderr());
        assert!(run.stderr().contains(says), "{}", run.stderr());
        assert!(run.stderr().contains(flag), "{}", run.stderr());
    }
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        "[providers.local]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nprofile = { context_window = 100 }\n",
    )
    .unwrap();
    let (ok, _, err) = env.text(&["models"]);
    assert!(!ok);
    assert!(
        err.contains("profile.context_window = 100 is too small"),
        "{err}"
    );
    assert!(server.model_requests().is_empty());
}
