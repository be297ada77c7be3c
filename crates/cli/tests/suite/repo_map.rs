//! The repository map in a task's requests: ranked towards what the prompt names, within its
//! budget, without read-denied files, following the task's edits, counted by the server's
//! tokenizer when it has one, and said in `context_assembled`; a map that is not ready in 1 s
//! joins the next request.

use super::support::*;
use bosun_protocol::{ContextKind, EventMsg};
use bosun_testkit::{MockModelServer, MockOptions};
use pretty_assertions::assert_eq;
use serde_json::json;

fn write(env: &Env, rel: &str, text: &str) {
    let p = env.repo.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn python_repo(env: &Env) {
    write(
        env,
        "shop/pricing.py",
        "TAX = 0.2\n\n\ndef calc_total(lines):\n    return round(sum(lines), 2)\n",
    );
    write(
        env,
        "shop/invoice.py",
        "from shop.pricing import calc_total\n\n\nclass Invoice:\n    def total(self):\n        return calc_total(self.lines)\n",
    );
    write(
        env,
        "shop/report.py",
        "from shop.pricing import calc_total\n\n\ndef report(days):\n    return [calc_total(d) for d in days]\n",
    );
    write(
        env,
        "internal/keys.py",
        "def signing_key():\n    return 'k'\n",
    );
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "shop"]);
}

fn system(req: &bosun_testkit::RecordedRequest) -> String {
    messages(req)
        .into_iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap()
}

fn assembled(run: &Run) -> Vec<&bosun_protocol::ContextAssembled> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ContextAssembled(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn deny_internal(env: &Env) -> String {
    std::fs::create_dir_all(&env.home).unwrap();
    let policy = env.home.join("deny-internal.toml");
    std::fs::write(&policy, "[paths]\nread_deny = [\"internal/**\"]\n").unwrap();
    policy.display().to_string()
}

#[test]
fn the_first_request_carries_the_layered_context_towards_what_the_prompt_names() {
    let env = Env::new();
    python_repo(&env);
    // Another package, so the map has files beyond the task's directory.
    write(
        &env,
        "report/export.py",
        "from shop.pricing import calc_total\n\n\ndef export(rows):\n    return [calc_total(r) for r in rows]\n",
    );
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "export"]);
    let policy = deny_internal(&env);
    let server =
        MockModelServer::start_blocking(vec![text("calc_total rounds to cents.")]).unwrap();
    let run = env.run(
        &server,
        "Why does calc_total round its result?",
        &["--policy", &policy],
    );
    assert!(run.code().is_some(), "{}", run.stderr());
    let sys = system(&server.model_requests()[0]);
    // The file defining the name the prompt gives, whole.
    let pricing = std::fs::read_to_string(env.repo.join("shop/pricing.py")).unwrap();
    assert!(
        sys.contains(&format!(
            "# Task files\n## shop/pricing.py (defines `calc_total`, named in the prompt)\n```\n{pricing}```\n"
        )),
        "{sys}"
    );
    // The files next to it, as definitions within their scopes.
    assert!(
        sys.contains("shop/invoice.py:\n    4│ class Invoice:\n    5│     def total(self):\n"),
        "{sys}"
    );
    // The map, without what is shown already.
    let map = &sys[sys
        .find("# Repository map")
        .expect("no map in the first request")..];
    assert!(
        map.contains("report/export.py:\n    4│ def export(rows):\n"),
        "{map}"
    );
    assert!(!map.contains("shop/pricing.py:"), "{map}");
    // A read-denied file is in none of it.
    assert!(
        !sys.contains("internal/") && !sys.contains("signing_key"),
        "{sys}"
    );
    // The named file is not shown twice (the file list's own copy is for small models).
    assert!(!sys.contains("(named in the task)"), "{sys}");
    // What went in, and why, is an event before the first request's usage.
    let events = assembled(&run);
    assert_eq!(events.len(), 1, "{events:?}");
    let c = events[0];
    let of = |kind: ContextKind| -> Vec<&str> {
        c.items
            .iter()
            .filter(|i| i.kind == kind)
            .filter_map(|i| i.path.as_deref())
            .collect()
    };
    assert_eq!(c.items[0].kind, ContextKind::FileList, "{c:?}");
    assert_eq!(of(ContextKind::File), ["shop/pricing.py"]);
    assert_eq!(
        of(ContextKind::Sibling),
        ["shop/invoice.py", "shop/report.py"]
    );
    assert!(of(ContextKind::Map).contains(&"report/export.py"), "{c:?}");
    let file = c
        .items
        .iter()
        .find(|i| i.kind == ContextKind::File)
        .unwrap();
    assert_eq!(file.reason, "defines `calc_total`, named in the prompt");
    assert!(
        c.total_tokens > 0 && c.total_tokens <= c.budget_tokens,
        "{c:?}"
    );
    // Unknown window: the layered 4,000, plus what the file list takes.
    assert_eq!(c.budget_tokens, 4_000 + c.items[0].tokens, "{c:?}");
    let kinds = run.kinds();
    let at = kinds
        .iter()
        .position(|k| *k == "context_assembled")
        .unwrap();
    let usage = kinds.iter().position(|k| *k == "usage").unwrap();
    assert!(at < usage, "{kinds:?}");
}

#[test]
fn the_map_follows_the_tasks_edits_and_leans_towards_the_files_changed() {
    let env = Env::new();
    python_repo(&env);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "call_1",
            "write_file",
            json!({"path": "shop/tax.py", "content": "def apply_tax(amount, rate):\n    return amount * (1 + rate)\n"}),
        )]),
        // A read changes nothing: the map (and the system prompt) stay as they were.
        tools(vec![call(
            "call_2",
            "read_file",
            json!({"path": "shop/tax.py"}),
        )]),
        text("Added shop/tax.py with apply_tax."),
    ])
    .unwrap();
    let run = env.run(&server, "Add a tax helper module", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = server.model_requests();
    assert_eq!(sent.len(), 3);
    let first = system(&sent[0]);
    assert!(!first.contains("apply_tax"), "{first}");
    let second = system(&sent[1]);
    assert!(
        second
            .contains("## shop/tax.py (changed by the task)\n```\ndef apply_tax(amount, rate):\n"),
        "{second}"
    );
    assert_eq!(system(&sent[2]), second, "nothing changed: the same prompt");
    let events = assembled(&run);
    assert_eq!(events.len(), 2, "{events:?}");
    let files: Vec<_> = events[1]
        .items
        .iter()
        .filter(|i| i.kind == ContextKind::File)
        .collect();
    assert_eq!(files[0].path.as_deref(), Some("shop/tax.py"));
    assert_eq!(files[0].reason, "changed by the task");
}

#[test]
fn a_server_with_a_tokenizer_counts_the_maps_tokens() {
    let env = Env::new();
    python_repo(&env);
    let server = MockModelServer::start_blocking_with(
        vec![text("ok")],
        MockOptions {
            tokenize: true,
            ..MockOptions::default()
        },
    )
    .unwrap();
    let run = env.run(&server, "Explain calc_total", &[]);
    assert!(run.code().is_some(), "{}", run.stderr());
    let sys = system(&server.model_requests()[0]);
    let layered = &sys[sys.find("# Task files").unwrap()..];
    let c = assembled(&run)[0];
    // The mock counts a token per 4 bytes; the estimate would be bytes / 3.5.
    let rest: u64 = c
        .items
        .iter()
        .filter(|i| i.kind == ContextKind::FileList)
        .map(|i| i.tokens)
        .sum();
    assert_eq!(
        (c.total_tokens - rest) as usize,
        layered.len().div_ceil(4),
        "{c:?}"
    );
    // The tokenizer is not recorded as a model request.
    assert_eq!(server.model_requests().len(), server.requests().len());
}

#[test]
fn a_map_not_ready_in_a_second_joins_the_next_request() {
    let env = Env::new();
    // Big enough that parsing it takes seconds in a debug build (2.3 s here): the first
    // request does not wait for it.
    for i in 0..20 {
        let mut text = String::new();
        for j in 0..4000 {
            text.push_str(&format!(
                "def f{i}_{j}(x):\n    return g{i}_{j}(x) + {j}\n\n\n"
            ));
        }
        write(&env, &format!("gen/m{i}.py"), &text);
    }
    write(&env, "app.py", "def late_marker():\n    return 1\n");
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-q", "-m", "big"]);
    // The task lasts long enough for the build to end (four 2 s commands).
    let sleep = |id: &str| tools(vec![call(id, "run_command", json!({"command": "sleep 2"}))]);
    let server = MockModelServer::start_blocking(vec![
        sleep("call_1"),
        sleep("call_2"),
        sleep("call_3"),
        sleep("call_4"),
        text("Looked."),
    ])
    .unwrap();
    let started = std::time::Instant::now();
    let run = env.run(&server, "Look at late_marker", &[]);
    assert!(run.code().is_some(), "{}", run.stderr());
    let sent = server.model_requests();
    let with_map: Vec<bool> = sent
        .iter()
        .map(|r| system(r).contains("# Repository map"))
        .collect();
    // The first request went without the map; a later one has it, and once in, it stays.
    assert!(
        !with_map[0],
        "the first request waited for the whole map: {with_map:?}"
    );
    let joined = with_map
        .iter()
        .position(|m| *m)
        .expect("the map never joined");
    assert!(with_map[joined..].iter().all(|m| *m), "{with_map:?}");
    // What went in is said at the first request (the file list) and again when the map joins.
    let events = assembled(&run);
    assert!(events.len() >= 2, "{events:?}");
    assert!(
        events[0].items.iter().all(|i| i.kind != ContextKind::Map),
        "{events:?}"
    );
    assert!(
        events[0]
            .items
            .iter()
            .any(|i| i.kind == ContextKind::FileList)
    );
    assert!(
        events
            .last()
            .unwrap()
            .items
            .iter()
            .any(|i| i.kind == ContextKind::Map)
    );
    let sys = system(&sent[joined]);
    assert!(
        sys.contains("## app.py (defines `late_marker`, named in the prompt)"),
        "{sys}"
    );
    println!(
        "requests with the map: {with_map:?} ({} ms)",
        started.elapsed().as_millis()
    );
}

/// What the policy keeps from the model stays out of `search`, out of reads through a symlink,
/// out of the map and out of the journal's tag cache; a secret in a signature is redacted
/// before the cache keeps it.
#[test]
fn read_denied_files_stay_out_of_search_symlinks_the_map_and_the_tag_cache() {
    let env = Env::new();
    write(&env, ".env", "SECRET_ENV=supersecretenv\n");
    write(
        &env,
        "secret/keys.py",
        "def leaked_name():\n    return 'TOPSECRET_VALUE_XYZ'\n",
    );
    write(
        &env,
        "config.py",
        "API_KEY = \"sk-live-abcdef0123456789abcdef0123456789\"\n\n\ndef load():\n    return API_KEY\n",
    );
    std::os::unix::fs::symlink(".env", env.repo.join("env.txt")).unwrap();
    std::os::unix::fs::symlink("../secret/keys.py", env.repo.join("src/alias.py")).unwrap();
    git(&env.repo, &["add", "-A", "-f"]);
    git(&env.repo, &["commit", "-q", "-m", "secrets"]);
    let policy = deny_secret(&env);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call("c1", "search", json!({"pattern": "SECRET"})),
            call("c2", "search", json!({"pattern": "", "glob": "**/*.py"})),
            call("c3", "read_file", json!({"path": "env.txt"})),
            call("c4", "read_file", json!({"path": "src/alias.py"})),
            call("c5", "search", json!({"pattern": ".", "path": "env.txt"})),
            call("c6", "symbols", json!({"name": "leaked_name"})),
        ]),
        text("Looked."),
    ])
    .unwrap();
    let run = env.run(&server, "Where is load defined?", &["--policy", &policy]);
    assert!(run.code().is_some(), "{}", run.stderr());
    for id in ["c1", "c2", "c3", "c4", "c5", "c6"] {
        let result = tool_result(&server, id);
        for secret in ["supersecretenv", "TOPSECRET_VALUE_XYZ", "leaked_name()"] {
            assert!(!result.contains(secret), "{id} showed {secret}: {result}");
        }
    }
    assert!(
        tool_result(&server, "c1").contains("the policy does not let you read"),
        "{}",
        tool_result(&server, "c1")
    );
    let ends = run.tool_ends();
    for id in ["c3", "c4", "c5"] {
        let end = ends.iter().find(|e| e.call_id.0 == id).unwrap();
        assert_eq!(
            end.status,
            bosun_protocol::ToolCallStatus::Denied,
            "{id}: {end:?}"
        );
    }
    let sys = system(&server.model_requests()[0]);
    assert!(sys.contains("config.py:"), "{sys}");
    assert!(
        !sys.contains("sk-live-abcdef") && !sys.contains("leaked_name"),
        "{sys}"
    );
    // The journal holds none of the secrets, and its tag cache not the denied file's names
    // (the model's own call names `leaked_name`, so the journal has that word).
    let raw = std::fs::read(env.home.join("bosun.db")).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    for secret in ["supersecretenv", "TOPSECRET_VALUE_XYZ", "sk-live-abcdef"] {
        assert!(!raw.contains(secret), "the journal holds {secret}");
    }
    let db = rusqlite::Connection::open(env.home.join("bosun.db")).unwrap();
    let cached: Vec<String> = db
        .prepare("SELECT tags FROM tag_cache")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!cached.is_empty());
    assert!(cached.iter().any(|t| t.contains("API_KEY")), "{cached:?}");
    for t in &cached {
        assert!(!t.contains("leaked_name") && !t.contains("sk-live"), "{t}");
    }
}

fn deny_secret(env: &Env) -> String {
    std::fs::create_dir_all(&env.home).unwrap();
    let policy = env.home.join("deny-secret.toml");
    std::fs::write(&policy, "[paths]\nread_deny = [\"secret/**\"]\n").unwrap();
    policy.display().to_string()
}
