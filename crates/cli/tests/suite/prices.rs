//! `bosun prices`: the table, one model, importing a LiteLLM snapshot, setting a price.

use super::support::*;
use pretty_assertions::assert_eq;

const SNAPSHOT: &str = r#"{
  "sample_spec": {"input_cost_per_token": 0, "output_cost_per_token": 0, "mode": "chat"},
  "acme/coder-9": {"input_cost_per_token": 1.5e-06, "output_cost_per_token": 6e-06,
    "cache_read_input_token_cost": 1.5e-07, "input_cost_per_token_above_128k_tokens": 3e-06,
    "output_cost_per_token_above_128k_tokens": 1.2e-05, "max_input_tokens": 256000,
    "litellm_provider": "acme", "mode": "chat"},
  "acme/painter": {"output_cost_per_image": 0.04, "mode": "image_generation"}
}"#;

#[test]
fn an_imported_snapshot_prices_a_model_bosun_did_not_know() {
    let env = Env::new();
    let (ok, _, err) = env.text(&["prices", "coder-9"]);
    assert!(!ok);
    assert!(err.contains("no price for `coder-9`"), "{err}");

    let file = env.dir.path().join("model_prices_and_context_window.json");
    std::fs::write(&file, SNAPSHOT).unwrap();
    let out = env
        .bosun()
        .args(["prices", "update"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("imported 1 models"), "{stdout}");
    assert!(stdout.contains("sha256 "), "{stdout}");

    // acme/coder-9: 1.50 in, 6 out, 0.15 read; above 128k prompt tokens 3 / 12.
    let v = env.json(&["prices", "coder-9", "--json"]);
    assert_eq!(v["entry"], "acme/coder-9");
    assert_eq!(v["source"], "snapshot");
    assert_eq!(v["rates"]["input"], 1.5);
    assert_eq!(v["rates"]["cache_read"], 0.15);
    assert_eq!(
        v["rates"]["cache_write"], 1.5,
        "no cache-write rate: the input rate"
    );
    assert_eq!(v["price"]["context_window"], 256000);
    assert_eq!(v["price"]["tiers"]["above_128k_tokens"]["input"], 3.0);

    let (ok, table, _) = env.text(&["prices"]);
    assert!(ok);
    assert!(
        table.lines().next().unwrap().contains("snapshot (1 models"),
        "{}",
        table.lines().next().unwrap()
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("acme/coder-9") && l.ends_with("snapshot"))
    );
}

#[test]
fn a_file_that_is_not_litellms_json_is_a_usage_error() {
    let env = Env::new();
    let out = env
        .bosun()
        .args(["prices", "update", "/nonexistent/prices.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/prices.json"));

    let file = env.dir.path().join("wrong.json");
    std::fs::write(&file, r#"{"models": ["gpt-5"]}"#).unwrap();
    let out = env
        .bosun()
        .args(["prices", "update"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not LiteLLM's price JSON"), "{err}");
}

#[test]
fn an_unknown_model_is_exit_2_with_close_names() {
    let env = Env::new();
    let out = env
        .bosun()
        .args(["prices", "claude-sonet-4-5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no price for `claude-sonet-4-5`"), "{err}");
    assert!(err.contains("claude-sonnet-4-5"), "{err}");
    assert!(err.contains("bosun prices set"), "{err}");
}

#[test]
fn set_writes_prices_toml_which_beats_every_other_layer() {
    let env = Env::new();
    let v = env.json(&["prices", "gpt-4o", "--json"]);
    assert_eq!(v["source"], "litellm 1.110.2");
    assert_eq!(v["rates"]["input"], 2.5);

    let (ok, out, err) = env.text(&[
        "prices",
        "set",
        "gpt-4o",
        "--input",
        "2",
        "--output",
        "8",
        "--cache-read",
        "0.5",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("gpt-4o: input 2, output 8, cache read 0.5"),
        "{out}"
    );
    let v = env.json(&["prices", "openai/gpt-4o", "--json"]);
    assert_eq!(v["source"], "prices.toml");
    assert_eq!(v["rates"]["output"], 8.0);
    let text = std::fs::read_to_string(env.home.join("prices.toml")).unwrap();
    assert!(
        text.contains("[models.gpt-4o]") || text.contains("[models.\"gpt-4o\"]"),
        "{text}"
    );

    let out = env
        .bosun()
        .args(["prices", "set", "gpt-4o", "--input=-1", "--output", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`input`"));
}

#[test]
fn the_table_says_where_it_came_from() {
    let env = Env::new();
    let (ok, out, _) = env.text(&["prices"]);
    assert!(ok);
    let first = out.lines().next().unwrap();
    assert!(first.contains("litellm 1.110.2"), "{first}");
    assert!(first.contains("sha256 "), "{first}");
    assert!(first.contains("no snapshot"), "{first}");
    let sonnet = out
        .lines()
        .find(|l| l.starts_with("claude-sonnet-4-5 "))
        .unwrap();
    let cols: Vec<&str> = sonnet.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "claude-sonnet-4-5",
            "3",
            "15",
            "0.3",
            "3.75",
            "6",
            "200k",
            "override"
        ]
    );
}
