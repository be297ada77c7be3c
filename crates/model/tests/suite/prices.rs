use bosun_model::{Cost, ModelPrice, PriceTable};
use bosun_protocol::TokenUsage;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn cost_charges_cache_reads_and_writes_at_their_own_prices() {
    let t = PriceTable::builtin();
    // claude-sonnet-4-5: 3 in, 15 out, 0.30 cache read, 3.75 cache write (USD / M tokens)
    let usage = TokenUsage {
        input_tokens: 1_000_000,
        output_tokens: 100_000,
        cached_input_tokens: 2_000_000,
        cache_write_tokens: 400_000,
        ..TokenUsage::default()
    };
    let c = t.cost("claude-sonnet-4-5-20250929", &usage);
    assert!(c.priced);
    assert!(close(c.usd, 3.0 + 0.6 + 1.5 + 1.5), "{}", c.usd);

    // gpt-4o-mini: 0.15 in, 0.60 out, 0.075 cached
    let c = t.cost(
        "openai/gpt-4o-mini",
        &TokenUsage {
            input_tokens: 6_000,
            output_tokens: 2_000,
            cached_input_tokens: 4_000,
            cache_write_tokens: 0,
            ..TokenUsage::default()
        },
    );
    assert!(
        close(
            c.usd,
            (6_000.0 * 0.15 + 4_000.0 * 0.075 + 2_000.0 * 0.6) / 1e6
        ),
        "{}",
        c.usd
    );
}

#[test]
fn unknown_models_cost_nothing_and_say_so() {
    let c = PriceTable::builtin().cost(
        "qwen2.5-coder:7b",
        &TokenUsage {
            input_tokens: 5,
            ..TokenUsage::default()
        },
    );
    assert_eq!(
        c,
        Cost {
            usd: 0.0,
            priced: false
        }
    );
}

#[test]
fn user_tables_merge_over_the_builtin_one() {
    let mut t = PriceTable::builtin();
    let mine = PriceTable::from_toml(
        "[models.\"qwen2.5-coder:7b\"]\ninput = 0.0\noutput = 0.0\n\n[models.\"gpt-4o\"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.5\ncache_write = 1.0\n",
    )
    .unwrap();
    t.merge(mine);
    assert!(t.cost("qwen2.5-coder:7b", &TokenUsage::default()).priced);
    assert_eq!(
        t.lookup("gpt-4o"),
        Some(&ModelPrice {
            input: 1.0,
            output: 2.0,
            cache_read: 0.5,
            cache_write: 1.0
        })
    );

    let err = PriceTable::from_toml("[models.x]\ninput = \"cheap\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("USD per million tokens"), "{err}");
    let err = PriceTable::from_toml("[models.x]\ninput = -1.0\noutput = 1.0")
        .unwrap_err()
        .to_string();
    assert!(err.contains("negative"), "{err}");
}
