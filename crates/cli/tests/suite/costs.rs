//! `bosun costs`: groups, totals, CSV and JSON, unpriced responses, the repository filter as
//! typed, and what is refused (exit 2).

use super::support::*;
use bosun_protocol::{Event, EventMsg, Rates, TaskId, UsageEvent};
use bosun_store::{NewTask, Store};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;

pub fn seed_task(store: &Store, id: &str, repo: &str, model: &str) {
    store
        .create_task(&NewTask {
            id: TaskId::from(id),
            repo: repo.into(),
            prompt: format!("task {id}"),
            base_commit: "0".repeat(40),
            branch: format!("bosun/{id}"),
            worktree: format!("/w/{id}"),
            provider: "openai".into(),
            model: model.into(),
            created_at: bosun_store::now_rfc3339(),
            owner_pid: 1,
            owner_started: None,
            max_steps: 50,
            max_cost_usd: None,
            parent_task_id: None,
            role: None,
            depth: 0,
        })
        .unwrap();
}

/// One response: 1M uncached input at $2, 100k output at $10 (cost $3), or unpriced.
pub fn response(store: &Store, id: &str, seq: u64, model: &str, priced: bool) {
    let rates = Rates {
        input: 2.0,
        output: 10.0,
        cache_read: 0.2,
        cache_write: 2.5,
        cache_write_1h: 4.0,
        reasoning: 10.0,
        tier: None,
        source: "litellm test".into(),
        entry: model.into(),
    };
    store
        .append_event(&Event {
            seq,
            task_id: TaskId::from(id),
            ts: bosun_store::now_rfc3339(),
            msg: EventMsg::Usage(UsageEvent {
                model: model.into(),
                input_tokens: 1_000_000,
                output_tokens: 100_000,
                cached_input_tokens: 0,
                cache_write_tokens: 0,
                cache_write_1h_tokens: 0,
                reasoning_tokens: 0,
                cost_usd: priced.then_some(3.0),
                total_cost_usd: 0.0,
                priced,
                rates: priced.then_some(rates),
                latency_ms: Some(900),
                reasoning: Vec::new(),
            }),
        })
        .unwrap();
}

fn seeded(env: &Env) {
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    seed_task(&store, "01a", "/src/api", "gpt-a");
    seed_task(&store, "01b", "/src/web", "local");
    response(&store, "01a", 1, "gpt-a", true);
    response(&store, "01a", 2, "gpt-a", true);
    response(&store, "01b", 1, "local", false);
}

#[test]
fn costs_by_model_add_up_every_token_class_and_leave_unpriced_models_unpriced() {
    let env = Env::new();
    seeded(&env);
    let rows = env.json(&["costs", "--by", "model", "--json"]);
    assert_eq!(rows[0]["key"], "gpt-a");
    assert_eq!(rows[0]["figure"]["cost_usd"], 6.0);
    assert_eq!(rows[0]["figure"]["cost_by_class"]["input"], 4.0);
    assert_eq!(rows[0]["figure"]["cost_by_class"]["output"], 2.0);
    assert_eq!(rows[0]["figure"]["tokens"]["input"], 2_000_000);
    assert_eq!(rows[1]["key"], "local");
    assert_eq!(rows[1]["figure"]["unpriced_responses"], 1);

    let (ok, table, _) = env.text(&["costs", "--by", "model"]);
    assert!(ok);
    let local = table.lines().find(|l| l.starts_with("local")).unwrap();
    let cells: Vec<&str> = local.split_whitespace().collect();
    assert_eq!(
        cells[8], "unpriced",
        "an unpriced model is never $0: {table}"
    );
    let total = table.lines().last().unwrap();
    assert!(
        total.starts_with("total") && total.contains("$6.0000"),
        "{table}"
    );

    let (ok, csv, _) = env.text(&["costs", "--by", "repo", "--csv"]);
    assert!(ok);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "key,responses,input,cache_read,cache_write_5m,cache_write_1h,output,reasoning,cost_usd,cache_savings_usd,unpriced"
    );
    assert_eq!(
        lines[1],
        "/src/api,2,2000000,0,0,0,200000,0,6.000000,0.000000,0"
    );
    assert_eq!(lines[2], "/src/web,1,1000000,0,0,0,100000,0,,0.000000,1");
}

#[test]
fn without_by_costs_shows_today_this_week_this_month_and_all_time() {
    let env = Env::new();
    seeded(&env);
    let totals = env.json(&["costs", "--json"]);
    for period in ["today", "week", "month", "all"] {
        assert_eq!(totals[period]["cost_usd"], 6.0, "{period}: {totals:#}");
        assert_eq!(totals[period]["responses"], 3, "{period}");
    }
    let (ok, text, _) = env.text(&["costs"]);
    assert!(ok);
    for period in ["today", "this week", "this month", "all time"] {
        assert!(text.contains(period), "{text}");
    }
    let days = env.json(&["costs", "--by", "day", "--since", "7d", "--json"]);
    assert_eq!(days.as_array().unwrap().len(), 1);
    let months = env.json(&["costs", "--by", "month", "--until", "2000-01-01", "--json"]);
    assert!(months.as_array().unwrap().is_empty());
}

#[test]
fn what_costs_cannot_read_is_a_usage_error_that_names_the_accepted_forms() {
    let env = Env::new();
    seeded(&env);
    let run = env.run_args(&["costs", "--by", "hour"]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("day, week, month, repo, model, task"),
        "{}",
        run.stderr()
    );
    let run = env.run_args(&["costs", "--by", "day", "--since", "yesterday"]);
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("7d, 2w, 3m"), "{}", run.stderr());
    let run = env.run_args(&["costs", "--json", "--csv"]);
    assert_eq!(run.code(), Some(2));
    let run = env.run_args(&["costs", "--by", "repo", "--repo", "/src/nowhere"]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("/src/api") && run.stderr().contains("/src/web"),
        "{}",
        run.stderr()
    );
}

#[test]
fn the_repository_filter_takes_the_path_as_typed_relative_or_through_a_symlink() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("Nothing to change.")]).unwrap();
    let run = env.run(&server, "explain", &[]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let link = env.dir.path().join("link");
    std::os::unix::fs::symlink(&env.repo, &link).unwrap();
    let canonical = env.repo.canonicalize().unwrap().display().to_string();
    let relative = env
        .repo
        .strip_prefix(env.dir.path())
        .unwrap()
        .display()
        .to_string();
    for (cwd, typed) in [
        (env.repo.clone(), "."),
        (env.dir.path().to_path_buf(), relative.as_str()),
        (env.dir.path().to_path_buf(), "link"),
    ] {
        let out = env
            .bosun()
            .current_dir(&cwd)
            .args(["costs", "--by", "repo", "--json", "--repo", typed])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{typed}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows[0]["key"], canonical.as_str(), "{typed}");
        // The mock model has no price: its response is counted, unpriced.
        assert_eq!(
            rows[0]["figure"]["unpriced_responses"],
            rows[0]["figure"]["responses"]
        );
    }
}
