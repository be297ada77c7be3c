#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Redaction as a user sees it: every secret in realistic text (.env files, shell output, JSON,
//! stack traces) becomes `[REDACTED:<kind>]`, and ordinary code, lock files and logs come out
//! unchanged. All secrets below are fabricated and have the right shape only.

#[path = "redaction/corpus.rs"]
mod corpus;

use bosun_policy::redact::Redactor;
use corpus::{CLEAN_CORPUS, recall_corpus};
use serde_json::json;

#[test]
fn every_secret_in_the_recall_corpus_is_redacted() {
    let redactor = Redactor::new(&[]);
    let corpus = recall_corpus();
    let (mut secrets, mut caught) = (0, 0);
    let mut misses = Vec::new();
    for leak in &corpus {
        let out = redactor.redact(leak.text);
        for secret in leak.secrets {
            secrets += 1;
            if out.text.contains(secret) {
                misses.push(format!("{}: {secret}\n{}", leak.what, out.text));
            } else {
                caught += 1;
            }
        }
        for kind in leak.kinds {
            assert!(
                out.kinds.iter().any(|k| k == kind),
                "{}: expected kind {kind}, got {:?}\n{}",
                leak.what,
                out.kinds,
                out.text
            );
            assert!(
                out.text.contains(&format!("[REDACTED:{kind}]")),
                "{}",
                out.text
            );
        }
    }
    println!(
        "recall: {caught}/{secrets} secrets in {} texts",
        corpus.len()
    );
    assert!(misses.is_empty(), "missed:\n{}", misses.join("\n---\n"));
}

#[test]
fn the_clean_corpus_comes_out_unchanged() {
    let redactor = Redactor::new(&[]);
    let mut lines = 0;
    for (what, text) in CLEAN_CORPUS {
        let out = redactor.redact(text);
        assert_eq!(out.count, 0, "{what}: {:?}\n{}", out.kinds, out.text);
        assert_eq!(out.text, *text, "{what}");
        lines += text.lines().count();
    }
    println!(
        "false positives: 0 in {} texts, {lines} lines",
        CLEAN_CORPUS.len()
    );
}

#[test]
fn environment_values_are_redacted_wherever_they_appear() {
    let env = vec![
        (
            "OPENAI_API_KEY".to_string(),
            "not-a-known-format-9c1e".to_string(),
        ),
        ("DB_PASSWORD".to_string(), "hunter2hunter2".to_string()),
        ("HOME".to_string(), "/home/dev".to_string()),
        ("SHORT_TOKEN".to_string(), "abc123".to_string()),
        ("SECRET_KEY".to_string(), "development".to_string()),
    ];
    let redactor = Redactor::new(&env);
    let out = redactor.redact(
        "connecting with pw=hunter2hunter2; key not-a-known-format-9c1e… cwd /home/dev abc123 development",
    );
    assert_eq!(
        out.text,
        "connecting with pw=[REDACTED:env:DB_PASSWORD]; key [REDACTED:env:OPENAI_API_KEY]… cwd /home/dev abc123 development"
    );
    assert_eq!(out.count, 2);
    assert_eq!(out.kinds, vec!["env:DB_PASSWORD", "env:OPENAI_API_KEY"]);

    // Inside a longer token too: the value is the secret, whatever surrounds it.
    let out = redactor.redact("url=https://x/?k=xxhunter2hunter2yy");
    assert_eq!(out.text, "url=https://x/?k=xx[REDACTED:env:DB_PASSWORD]yy");
}

#[test]
fn an_environment_value_in_a_known_format_is_named_after_its_variable() {
    let key = "sk-2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7";
    let redactor = Redactor::new(&[("OPENAI_API_KEY".to_string(), key.to_string())]);
    let line = format!("OPENAI_API_KEY={key}");
    let out = redactor.redact(&line);
    assert_eq!(out.text, "OPENAI_API_KEY=[REDACTED:env:OPENAI_API_KEY]");
    assert_eq!(out.count, 1);
}

#[test]
fn count_and_kinds_describe_what_was_replaced() {
    let redactor = Redactor::new(&[]);
    let out = redactor.redact(
        "a=AKIAIOSFODNN7EXAMPLE b=ghp_jIhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7Dxtp c=AKIAPF91DHODZDOC9IS0",
    );
    assert_eq!(out.count, 3);
    assert_eq!(out.kinds, vec!["aws_access_key", "github_token"]);
    assert_eq!(
        out.text,
        "a=[REDACTED:aws_access_key] b=[REDACTED:github_token] c=[REDACTED:aws_access_key]"
    );

    let clean = redactor.redact("nothing to see");
    assert!(matches!(clean.text, std::borrow::Cow::Borrowed(_)));
    assert_eq!((clean.count, clean.kinds.len()), (0, 0));
}

#[test]
fn only_the_password_of_a_connection_string_is_replaced() {
    let out = Redactor::new(&[])
        .redact("DATABASE_URL=postgres://app:S3cretPass2024@db:5432/app?sslmode=require");
    assert_eq!(
        out.text,
        "DATABASE_URL=postgres://app:[REDACTED:connection_string_password]@db:5432/app?sslmode=require"
    );
}

#[test]
fn redacting_redacted_text_changes_nothing() {
    let env = vec![("GITHUB_TOKEN".to_string(), "hunter2hunter2".to_string())];
    let redactor = Redactor::new(&env);
    for leak in recall_corpus() {
        let once = redactor.redact(leak.text).text.into_owned();
        let twice = redactor.redact(&once);
        assert_eq!(twice.count, 0, "{}: {:?}\n{once}", leak.what, twice.kinds);
        assert_eq!(twice.text, once);
    }
}

#[test]
fn redact_json_rewrites_every_string_in_place() {
    let redactor = Redactor::new(&[("API_TOKEN".to_string(), "tok-9f8e7d6c5b".to_string())]);
    let mut value = json!({
        "command": "curl -H 'Authorization: Bearer tok-9f8e7d6c5b' https://api.example.com",
        "env": ["PATH=/usr/bin", "GH=ghp_jIhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7Dxtp"],
        "client_secret": "guD5EhjGdO5YQ7nJE1shqWmxBqp7pgys",
        "client_id": "guD5EhjGdO5YQ7nJE1shqWmxBqp7pgyz",
        "nested": {"exit_code": 0, "ok": true, "password": null, "note": "no secrets here"},
    });
    let count = redactor.redact_json(&mut value);
    assert_eq!(count, 3);
    assert_eq!(
        value,
        json!({
            "command": "curl -H 'Authorization: Bearer [REDACTED:env:API_TOKEN]' https://api.example.com",
            "env": ["PATH=/usr/bin", "GH=[REDACTED:github_token]"],
            "client_secret": "[REDACTED:high_entropy_secret]",
            "client_id": "guD5EhjGdO5YQ7nJE1shqWmxBqp7pgyz",
            "nested": {"exit_code": 0, "ok": true, "password": null, "note": "no secrets here"},
        })
    );
    assert_eq!(redactor.redact_json(&mut value), 0, "idempotent");
}

#[test]
fn the_redactor_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Redactor>();
}

#[test]
fn a_megabyte_of_text_is_redacted_quickly() {
    let redactor = Redactor::new(&[("DB_PASSWORD".to_string(), "hunter2hunter2".to_string())]);
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 1 << 20 {
        let (_, chunk) = CLEAN_CORPUS[i % CLEAN_CORPUS.len()];
        text.push_str(chunk);
        if i % 50 == 0 {
            text.push_str(
                "\nOPENAI_API_KEY=sk-2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7 ünïcødé ✓\n",
            );
        }
        i += 1;
    }
    let started = std::time::Instant::now();
    let out = redactor.redact(&text);
    let elapsed = started.elapsed();
    let clean = "x".repeat(1 << 20);
    let started_clean = std::time::Instant::now();
    let none = redactor.redact(&clean);
    let elapsed_clean = started_clean.elapsed();
    println!(
        "1 MiB of mixed text: {:?} ({} redactions); 1 MiB without secrets: {:?}",
        elapsed, out.count, elapsed_clean
    );
    assert!(out.count > 0 && !out.text.contains("sk-2qHx6kwX"));
    assert_eq!(none.count, 0);
}
