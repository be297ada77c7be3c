//! Pricing rules against hand-computed figures. Rates are US dollars per million tokens.

use bosun_model::{
    ModelPrice, PriceLayer, PriceTable, Priced, ServiceTier, UserPrice, import_snapshot,
    write_user_price,
};
use bosun_protocol::TokenUsage;
use pretty_assertions::assert_eq;
use std::path::Path;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn cost(p: &Priced) -> f64 {
    p.cost_usd.expect("priced")
}

fn usage(
    input: u64,
    cached: u64,
    write_5m: u64,
    write_1h: u64,
    output: u64,
    reasoning: u64,
) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: cached,
        cache_write_tokens: write_5m,
        cache_write_1h_tokens: write_1h,
        output_tokens: output,
        reasoning_tokens: reasoning,
    }
}

const STD: ServiceTier = ServiceTier::Standard;

#[test]
fn each_token_class_is_charged_at_its_own_rate() {
    let t = PriceTable::builtin();
    // claude-sonnet-4-5: 3 in, 15 out, 0.30 read, 3.75 5-minute write, 6 1-hour write
    // (prompts up to 200k tokens). 100k in = 0.30; 50k read = 0.015; 40k 5m write = 0.15;
    // 10k out = 0.15 → 0.615.
    let p = t.price(
        "claude-sonnet-4-5-20250929",
        &usage(100_000, 50_000, 40_000, 0, 10_000, 0),
        STD,
        None,
    );
    assert!(close(cost(&p), 0.615), "{p:?}");
    let rates = p.rates.unwrap();
    assert_eq!(rates.entry, "claude-sonnet-4-5-20250929");
    assert_eq!(rates.source, "override");
    assert_eq!(rates.tier, None);

    // gpt-4o-mini: 0.15 in, 0.60 out, 0.075 read; OpenAI has no cache-write rate, so none.
    let p = t.price(
        "openai/gpt-4o-mini",
        &usage(6_000, 4_000, 0, 0, 2_000, 0),
        STD,
        None,
    );
    assert!(
        close(
            cost(&p),
            (6_000.0 * 0.15 + 4_000.0 * 0.075 + 2_000.0 * 0.6) / 1e6
        ),
        "{p:?}"
    );
    assert_eq!(p.rates.unwrap().source, "litellm 1.110.2");
}

#[test]
fn one_hour_cache_writes_cost_more_than_five_minute_ones() {
    let t = PriceTable::builtin();
    // claude-sonnet-4-5: 100k tokens written for 5 minutes = 0.375 (3.75 / M), for 1 hour
    // = 0.60 (6.00 / M).
    let five = t.price(
        "claude-sonnet-4-5",
        &usage(0, 0, 100_000, 0, 0, 0),
        STD,
        None,
    );
    let hour = t.price(
        "claude-sonnet-4-5",
        &usage(0, 0, 0, 100_000, 0, 0),
        STD,
        None,
    );
    assert!(close(cost(&five), 0.375), "{five:?}");
    assert!(close(cost(&hour), 0.60), "{hour:?}");
    // claude-opus-4-5 has LiteLLM's own 1-hour rate, 10 / M (2 x 5 input): 100k = 1.00.
    let opus = t.price("claude-opus-4-5", &usage(0, 0, 0, 100_000, 0, 0), STD, None);
    assert!(close(cost(&opus), 1.0), "{opus:?}");
    // claude-opus-4-1 (override): 18.75 for 5 minutes, 30 for an hour.
    let r = t
        .price("claude-opus-4-1", &usage(0, 0, 0, 0, 0, 0), STD, None)
        .rates
        .unwrap();
    assert_eq!((r.cache_write, r.cache_write_1h), (18.75, 30.0));
}

#[test]
fn a_long_prompt_charges_the_whole_request_at_the_long_context_rates() {
    let t = PriceTable::builtin();
    // gemini-2.5-pro: 1.25 in / 10 out up to 200k prompt tokens; 2.50 / 15 above.
    // 200,000 in + 1,000 out: 0.25 + 0.01 = 0.26.
    let under = t.price(
        "gemini-2.5-pro",
        &usage(200_000, 0, 0, 0, 1_000, 0),
        STD,
        None,
    );
    assert!(close(cost(&under), 0.26), "{under:?}");
    assert_eq!(under.rates.unwrap().tier, None);
    // 200,001 in + 1,000 out: 0.5000025 + 0.015 = 0.5150025.
    let over = t.price(
        "gemini-2.5-pro",
        &usage(200_001, 0, 0, 0, 1_000, 0),
        STD,
        None,
    );
    assert!(close(cost(&over), 0.5150025), "{over:?}");
    assert_eq!(
        over.rates.unwrap().tier.as_deref(),
        Some("above_200k_tokens")
    );

    // claude-sonnet-4-5 counts every prompt class towards the threshold.
    // 140k in + 60k read = 200k, not over: 0.42 + 0.018 + 2k out 0.03 = 0.468.
    let under = t.price(
        "claude-sonnet-4-5",
        &usage(140_000, 60_000, 0, 0, 2_000, 0),
        STD,
        None,
    );
    assert!(close(cost(&under), 0.468), "{under:?}");
    // 140k in + 60k read + 10k 5m write = 210k: 6 in, 0.60 read, 7.50 write, 22.50 out:
    // 0.84 + 0.036 + 0.075 + 0.045 = 0.996.
    let over = t.price(
        "claude-sonnet-4-5",
        &usage(140_000, 60_000, 10_000, 0, 2_000, 0),
        STD,
        None,
    );
    assert!(close(cost(&over), 0.996), "{over:?}");
}

#[test]
fn reasoning_is_charged_at_the_output_rate_unless_the_table_has_its_own() {
    let t = PriceTable::builtin();
    // gpt-5: 1.25 in, 10 out. 10k in + 1k out + 4k reasoning: 0.0125 + 0.05 = 0.0625.
    let p = t.price("gpt-5", &usage(10_000, 0, 0, 0, 1_000, 4_000), STD, None);
    assert!(close(cost(&p), 0.0625), "{p:?}");
    assert_eq!(p.rates.unwrap().reasoning, 10.0);
    // o3: 8 out, reasoning too. 1M reasoning = 8.00.
    let p = t.price("o3-2025-04-16", &usage(0, 0, 0, 0, 0, 1_000_000), STD, None);
    assert!(close(cost(&p), 8.0), "{p:?}");
    // dashscope/qwen-turbo: 0.20 out, 0.50 per reasoning token (output_cost_per_reasoning_token).
    // 1M out + 1M reasoning = 0.70.
    let p = t.price(
        "dashscope/qwen-turbo",
        &usage(0, 0, 0, 0, 1_000_000, 1_000_000),
        STD,
        None,
    );
    assert!(close(cost(&p), 0.70), "{p:?}");
}

#[test]
fn a_model_without_a_price_is_unpriced_not_free() {
    let t = PriceTable::builtin();
    let p = t.price("my-local-model:7b", &usage(5, 0, 0, 0, 5, 0), STD, None);
    assert_eq!(
        p,
        Priced {
            cost_usd: None,
            rates: None
        }
    );
    assert!(t.lookup("").is_none());
    assert_eq!(t.max_cost("my-local-model:7b", 1000, 1000, STD), None);
}

#[test]
fn a_cost_the_provider_reported_wins() {
    let t = PriceTable::builtin();
    // Known model: the reported cost, the table's rates.
    let p = t.price(
        "openrouter/anthropic/claude-sonnet-4.5",
        &usage(1_000, 0, 0, 0, 0, 0),
        STD,
        Some(0.0123),
    );
    assert_eq!(p.cost_usd, Some(0.0123));
    let r = p.rates.unwrap();
    assert_eq!((r.input, r.entry.as_str()), (3.0, "claude-sonnet-4-5"));
    // Unknown model: the reported cost, rates 0 from `provider`.
    let p = t.price(
        "someone/new-model",
        &usage(10, 0, 0, 0, 10, 0),
        STD,
        Some(0.5),
    );
    assert_eq!(p.cost_usd, Some(0.5));
    let r = p.rates.unwrap();
    assert_eq!(
        (r.source.as_str(), r.input, r.output),
        ("provider", 0.0, 0.0)
    );
    // A nonsense report is ignored.
    let p = t.price(
        "someone/new-model",
        &usage(10, 0, 0, 0, 10, 0),
        STD,
        Some(f64::NAN),
    );
    assert_eq!(p.cost_usd, None);
}

#[test]
fn service_tiers_have_their_own_rates() {
    let t = PriceTable::builtin();
    // gpt-5 priority: 2.50 in, 0.25 read, 20 out. 100k in + 50k read + 10k out:
    // 0.25 + 0.0125 + 0.20 = 0.4625.
    let u = usage(100_000, 50_000, 0, 0, 10_000, 0);
    let p = t.price("gpt-5", &u, ServiceTier::Priority, None);
    assert!(close(cost(&p), 0.4625), "{p:?}");
    assert_eq!(p.rates.unwrap().tier.as_deref(), Some("priority"));
    // flex: 0.625 in, 0.0625 read, 5 out: 0.0625 + 0.003125 + 0.05 = 0.115625.
    let p = t.price("gpt-5", &u, ServiceTier::Flex, None);
    assert!(close(cost(&p), 0.115625), "{p:?}");
    // batch on claude-sonnet-4-5: half of everything, 1.5 in, 7.5 out: 100k in + 100k out
    // = 0.15 + 0.75.
    let p = t.price(
        "claude-sonnet-4-5",
        &usage(100_000, 0, 0, 0, 100_000, 0),
        ServiceTier::Batch,
        None,
    );
    assert!(close(cost(&p), 0.90), "{p:?}");
    // No priority rates for claude-sonnet-4-5: standard ones, and the tier says so.
    let p = t.price(
        "claude-sonnet-4-5",
        &usage(100_000, 0, 0, 0, 0, 0),
        ServiceTier::Priority,
        None,
    );
    assert!(close(cost(&p), 0.30), "{p:?}");
    assert_eq!(p.rates.unwrap().tier, None);
    // gpt-5.4, priority with a prompt over 272k: no combined rates in the table, so the higher
    // of priority (5 in, 30 out) and long context (5 in, 22.50 out): 300k in = 1.50, 10k out
    // = 0.30.
    let p = t.price(
        "gpt-5.4",
        &usage(300_000, 0, 0, 0, 10_000, 0),
        ServiceTier::Priority,
        None,
    );
    assert!(close(cost(&p), 1.80), "{p:?}");
    assert_eq!(
        p.rates.unwrap().tier.as_deref(),
        Some("priority+above_272k_tokens")
    );
}

#[test]
fn max_cost_reserves_the_prompt_at_the_input_rate_and_the_output_at_its_limit() {
    let t = PriceTable::builtin();
    // gpt-5: 100k prompt x 1.25 + 8192 out x 10 = 0.125 + 0.08192.
    let c = t.max_cost("gpt-5", 100_000, 8192, STD).unwrap();
    assert!(close(c, 0.20692), "{c}");
    // gemini-2.5-pro above 200k: 300k x 2.50 + 1000 x 15 = 0.75 + 0.015.
    let c = t.max_cost("gemini-2.5-pro", 300_000, 1_000, STD).unwrap();
    assert!(close(c, 0.765), "{c}");
    // dashscope/qwen-turbo: reasoning (0.50) costs more than output (0.20).
    let c = t
        .max_cost("dashscope/qwen-turbo", 0, 1_000_000, STD)
        .unwrap();
    assert!(close(c, 0.5), "{c}");
}

#[test]
fn lookup_forgives_the_usual_ways_of_naming_a_model() {
    let t = PriceTable::builtin();
    let name = |m: &str| t.lookup(m).map(|e| e.name.to_string());
    for (asked, entry) in [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("Claude-Sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        (
            "openrouter/anthropic/claude-sonnet-4.5",
            "claude-sonnet-4-5",
        ),
        (
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
        ),
        ("claude-opus-4-1", "claude-opus-4-1"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1-20250805"),
        ("claude-haiku-4-5-latest", "claude-haiku-4-5"),
        ("openai/gpt-4o-2024-08-06", "gpt-4o-2024-08-06"),
        ("gpt-4o-2099-01-01", "gpt-4o"),
        ("openai/gpt-5", "gpt-5"),
        ("gemini/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        // A bare name several sellers share goes to the maker's own entry.
        ("grok-code-fast-1", "xai/grok-code-fast-1"),
        (
            "claude-3-7-sonnet",
            "anthropic.claude-3-7-sonnet-20240620-v1:0",
        ),
    ] {
        assert_eq!(name(asked).as_deref(), Some(entry), "{asked}");
    }
    assert_eq!(t.context_window("gpt-5"), Some(272_000));
    assert_eq!(t.context_window("claude-sonnet-4-5"), Some(200_000));
    assert_eq!(t.context_window("nothing-like-it"), None);
    let close_names = t.close_names("claude-sonet-4-5", 5);
    assert!(
        close_names.contains(&"claude-sonnet-4-5"),
        "{close_names:?}"
    );
    assert!(close_names.len() <= 5);
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const SNAPSHOT: &str = r#"{
  "sample_spec": {"input_cost_per_token": 0, "output_cost_per_token": 0, "mode": "chat"},
  "gpt-4o": {"input_cost_per_token": 2e-06, "output_cost_per_token": 8e-06, "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000},
  "claude-sonnet-4-5": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1.2e-05, "cache_creation_input_token_cost": 3e-06, "litellm_provider": "anthropic", "mode": "chat"},
  "brand-new-model": {"input_cost_per_token": 1e-06, "output_cost_per_token": 4e-06, "input_cost_per_token_priority": 2e-06, "mode": "chat"},
  "dall-e-9": {"output_cost_per_image": 0.04, "mode": "image_generation"}
}"#;

#[test]
fn prices_toml_beats_the_snapshot_beats_the_overrides_beats_the_generated_table() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let t = PriceTable::load(home).unwrap();
    let src = |t: &PriceTable, m: &str| t.lookup(m).map(|e| (e.layer, e.price.input));
    assert_eq!(
        src(&t, "claude-sonnet-4-5"),
        Some((PriceLayer::Override, 3.0))
    );
    assert_eq!(src(&t, "gpt-4o"), Some((PriceLayer::Generated, 2.5)));
    assert!(t.lookup("brand-new-model").is_none());

    let json = home.join("litellm.json");
    write(&json, SNAPSHOT);
    let info = import_snapshot(home, &json).unwrap();
    assert_eq!(info.models, 3);
    assert_eq!(info.sha256.len(), 64);
    let t = PriceTable::load(home).unwrap();
    assert_eq!(
        src(&t, "claude-sonnet-4-5"),
        Some((PriceLayer::Snapshot, 2.5))
    );
    assert_eq!(src(&t, "gpt-4o"), Some((PriceLayer::Snapshot, 2.0)));
    assert_eq!(src(&t, "gpt-5"), Some((PriceLayer::Generated, 1.25)));
    let p = t.price(
        "brand-new-model",
        &usage(1_000_000, 0, 0, 0, 0, 0),
        ServiceTier::Priority,
        None,
    );
    assert!(close(cost(&p), 2.0), "{p:?}");
    assert_eq!(p.rates.unwrap().source, "snapshot");

    write(
        &home.join("prices.toml"),
        "# mine\n[models.\"gpt-4o\"]\ninput = 1.0\noutput = 2.0\n",
    );
    let t = PriceTable::load(home).unwrap();
    assert_eq!(src(&t, "gpt-4o"), Some((PriceLayer::User, 1.0)));
    // The user's entry replaces the whole model: no cache-read rate, so reads at input.
    let p = t.price("gpt-4o", &usage(0, 1_000_000, 0, 0, 0, 0), STD, None);
    assert!(close(cost(&p), 1.0), "{p:?}");
    assert_eq!(p.rates.unwrap().source, "prices.toml");
    let layers: Vec<PriceLayer> = t.layers().iter().map(|l| l.layer).collect();
    assert_eq!(
        layers,
        [
            PriceLayer::Generated,
            PriceLayer::Override,
            PriceLayer::Snapshot,
            PriceLayer::User
        ]
    );
}

#[test]
fn a_file_that_is_not_litellms_json_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let missing = import_snapshot(home, &home.join("nope.json"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("cannot read"), "{missing}");
    let file = home.join("x.json");
    write(&file, "[1, 2]");
    let err = import_snapshot(home, &file).unwrap_err().to_string();
    assert!(err.contains("not LiteLLM's price JSON"), "{err}");
    write(
        &file,
        r#"{"a": {"mode": "embedding", "input_cost_per_token": 1e-06}}"#,
    );
    let err = import_snapshot(home, &file).unwrap_err().to_string();
    assert!(err.contains("no chat model"), "{err}");
    assert!(!home.join("prices-snapshot.json").exists());
}

#[test]
fn bad_user_prices_are_errors_naming_the_model_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = home.join("prices.toml");
    for (text, wants) in [
        (
            "[models.\"m\"]\ninput = 1.0\noutput = 1.0\ninptu = 2.0\n",
            ["`m`", "inptu"],
        ),
        (
            "[models.\"m\"]\ninput = -1.0\noutput = 1.0\n",
            ["`m`", "`input`"],
        ),
        (
            "[models.\"m\"]\ninput = 1.0\noutput = nan\n",
            ["`m`", "`output`"],
        ),
        (
            "[models.\"m\"]\ninput = \"cheap\"\noutput = 1.0\n",
            ["`m`", "USD per million"],
        ),
        (
            "[models.\"m\"]\ninput = 1.0\noutput = 1.0\n[models.\"m\".tiers.turbo]\ninput = 2.0\n",
            ["`m`", "turbo"],
        ),
        ("[model.\"m\"]\ninput = 1.0\n", ["`model`", "[models."]),
    ] {
        write(&file, text);
        let err = PriceTable::load(home).unwrap_err().to_string();
        for want in wants {
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(err.contains("prices.toml"), "{err}");
    }
}

#[test]
fn writing_a_user_price_keeps_the_rest_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = home.join("prices.toml");
    write(
        &file,
        "# my prices, checked 2026-11\n[models.\"a\"] # the old one\ninput = 1.0\noutput = 2.0\n",
    );
    let price = UserPrice {
        input: 0.5,
        output: 1.5,
        cache_read: Some(0.05),
        ..UserPrice::default()
    };
    write_user_price(home, "qwen3:30b", &price).unwrap();
    write_user_price(
        home,
        "a",
        &UserPrice {
            input: 3.0,
            output: 4.0,
            ..UserPrice::default()
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("# my prices, checked 2026-11\n[models.\"a\"] # the old one\ninput = 3.0"),
        "{text}"
    );
    let t = PriceTable::load(home).unwrap();
    let e = t.lookup("qwen3:30b").unwrap();
    assert_eq!(e.source, "prices.toml");
    assert_eq!(
        *e.price,
        ModelPrice {
            cache_read: Some(0.05),
            ..ModelPrice::new(0.5, 1.5)
        }
    );
    assert_eq!(t.lookup("a").unwrap().price.input, 3.0);

    let err = write_user_price(
        home,
        "b",
        &UserPrice {
            input: -1.0,
            output: 1.0,
            ..UserPrice::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("`b`") && err.contains("input"), "{err}");
    assert!(write_user_price(home, " ", &price).is_err());
}

/// The wheel `scripts/check-prices` pins, where this machine has it.
fn pinned_wheel() -> Option<std::path::PathBuf> {
    let name = "litellm-1.110.2-cp310-abi3-manylinux_2_28_x86_64.whl";
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .map(|c| c.join("bosun/litellm"));
    let mut candidates = vec![Path::new("/var/tmp/litellm").join(name)];
    if let Some(c) = cache {
        candidates.push(c.join(name));
    }
    candidates.into_iter().find(|p| p.is_file())
}

#[test]
fn the_generated_table_is_what_gen_prices_makes_of_the_pinned_snapshot() {
    let Some(wheel) = pinned_wheel() else {
        eprintln!(
            "skipped: litellm 1.110.2's wheel is not in /var/tmp/litellm or the check-prices \
             cache; scripts/check-prices downloads it and is the CI check"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("litellm.json");
    let status = std::process::Command::new(root.join("scripts/gen-prices"))
        .arg(&wheel)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let committed = std::fs::read_to_string(root.join("assets/prices/litellm.json")).unwrap();
    let generated = std::fs::read_to_string(&out).unwrap();
    assert!(
        committed == generated,
        "assets/prices/litellm.json is not what scripts/gen-prices makes of {}",
        wheel.display()
    );

    // `bosun prices update` converts the same JSON to the same models.
    let json = dir.path().join("raw.json");
    let extracted = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('litellm/model_prices_and_context_window_backup.json'))",
        ])
        .arg(&wheel)
        .arg(&json)
        .status()
        .unwrap();
    assert!(extracted.success());
    let info = import_snapshot(dir.path(), &json).unwrap();
    let header: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(header["generated"]["sha256"], info.sha256.as_str());
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&info.stored).unwrap()).unwrap();
    assert!(
        stored["models"] == header["models"],
        "the Rust conversion differs from gen-prices'"
    );
}
