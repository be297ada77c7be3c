//! `bosun prices`: the price table (which model costs what, from where), importing a newer
//! LiteLLM snapshot, and adding a price for a model the table does not know.

use anyhow::{Context, bail};
use bosun_model::{
    ModelPrice, PriceEntry, PriceLayer, PriceTable, Resolved, ServiceTier, UserPrice,
    import_snapshot, write_user_price,
};
use clap::{Args, Subcommand};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PricesArgs {
    #[command(subcommand)]
    command: Option<PricesCommand>,
    /// Show this model's entry: every rate, its tiers and where the price came from
    model: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub enum PricesCommand {
    /// Import LiteLLM's price JSON (model_prices_and_context_window.json): it prices over
    /// Bosun's table, under your prices.toml
    Update { file: PathBuf },
    /// Set a model's price in $BOSUN_HOME/prices.toml (USD per million tokens)
    Set(SetArgs),
}

#[derive(Args)]
pub struct SetArgs {
    model: String,
    #[arg(long)]
    input: f64,
    #[arg(long)]
    output: f64,
    /// Default: the input rate
    #[arg(long)]
    cache_read: Option<f64>,
    /// A 5-minute cache write; default: the input rate
    #[arg(long)]
    cache_write: Option<f64>,
    /// A 1-hour cache write; default: the 5-minute rate
    #[arg(long = "cache-write-1h")]
    cache_write_1h: Option<f64>,
    /// Default: the output rate
    #[arg(long)]
    reasoning: Option<f64>,
    /// Prompt tokens the model takes at most
    #[arg(long)]
    context_window: Option<u64>,
}

pub fn prices(args: PricesArgs) -> anyhow::Result<ExitCode> {
    let home = crate::home();
    match args.command {
        Some(PricesCommand::Update { file }) => update(&home, &file, args.json),
        Some(PricesCommand::Set(set)) => set_price(&home, set),
        None => {
            let table = PriceTable::load(&home)?;
            match args.model {
                Some(model) => show(&table, &model, args.json),
                None => list(&table, args.json),
            }
        }
    }
}

fn rate(v: f64) -> String {
    format!("{v}")
}

fn tokens(v: Option<u64>) -> String {
    match v {
        Some(n) if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        Some(n) if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        Some(n) => n.to_string(),
        None => "-".into(),
    }
}

/// Where the table came from, one line: `litellm 1.110.2 (sha256 8943af58bf9f, 3505 models)
/// + override (3) + …`.
fn provenance(table: &PriceTable) -> String {
    let parts: Vec<String> = table
        .layers()
        .iter()
        .map(|l| {
            let mut s = format!("{} ({} models", l.source, l.models);
            if let Some(sha) = &l.sha256 {
                s.push_str(&format!(", sha256 {}", &sha[..sha.len().min(12)]));
            }
            if let Some(path) = &l.path {
                s.push_str(&format!(", {path}"));
            }
            s.push(')');
            s
        })
        .collect();
    let mut line = format!("prices (each over the one before): {}", parts.join(" < "));
    for (layer, what) in [
        (
            PriceLayer::Snapshot,
            "no snapshot (`bosun prices update FILE`)",
        ),
        (PriceLayer::User, "no prices.toml (`bosun prices set`)"),
    ] {
        if !table.layers().iter().any(|l| l.layer == layer) {
            line.push_str(&format!("; {what}"));
        }
    }
    line
}

fn list(table: &PriceTable, json: bool) -> anyhow::Result<ExitCode> {
    match write_list(table, json) {
        // `bosun prices | head`: the reader had enough.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

fn write_list(table: &PriceTable, json: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let models: Vec<_> = table.entries().map(|e| entry_json(e, None)).collect();
        let doc =
            json!({"layers": table.layers(), "unit": "USD per million tokens", "models": models});
        serde_json::to_writer_pretty(&mut out, &doc)?;
        return writeln!(out);
    }
    writeln!(out, "{}", provenance(table))?;
    writeln!(
        out,
        "{:<48} {:>9} {:>9} {:>10} {:>9} {:>9} {:>8}  source",
        "model (USD / M tokens)", "input", "output", "cache rd", "5m write", "1h write", "context"
    )?;
    for e in table.entries() {
        let r = e.price.resolve(ServiceTier::Standard, 0);
        writeln!(
            out,
            "{:<48} {:>9} {:>9} {:>10} {:>9} {:>9} {:>8}  {}",
            e.name,
            rate(r.input),
            rate(r.output),
            rate(r.cache_read),
            rate(r.cache_write),
            rate(r.cache_write_1h),
            tokens(e.price.context_window),
            e.source
        )?;
    }
    Ok(())
}

fn resolved_json(r: &Resolved) -> serde_json::Value {
    json!({
        "input": r.input, "output": r.output, "cache_read": r.cache_read,
        "cache_write": r.cache_write, "cache_write_1h": r.cache_write_1h, "reasoning": r.reasoning,
    })
}

fn entry_json(e: PriceEntry<'_>, asked: Option<&str>) -> serde_json::Value {
    let mut v = json!({
        "entry": e.name,
        "source": e.source,
        "layer": e.layer,
        "rates": resolved_json(&e.price.resolve(ServiceTier::Standard, 0)),
        "price": e.price,
    });
    if let Some(asked) = asked {
        v["model"] = json!(asked);
    }
    v
}

fn show(table: &PriceTable, model: &str, json: bool) -> anyhow::Result<ExitCode> {
    let Some(e) = table.lookup(model) else {
        let close = table.close_names(model, 5);
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!("; close names: {}", close.join(", "))
        };
        bail!(
            "no price for `{model}`{hint}. Add one: bosun prices set {model} --input N --output N \
             (USD per million tokens)"
        );
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &entry_json(e, Some(model)))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let p: &ModelPrice = e.price;
    if e.name == model {
        writeln!(out, "{}", e.name)?;
    } else {
        writeln!(out, "{model} → {}", e.name)?;
    }
    writeln!(out, "  source          {}", e.source)?;
    if let Some(provider) = &p.provider {
        writeln!(out, "  provider        {provider}")?;
    }
    writeln!(out, "  context window  {}", tokens(p.context_window))?;
    writeln!(out, "  max output      {}", tokens(p.max_output_tokens))?;
    writeln!(out, "  USD per million tokens:")?;
    let row = |name: &str, r: &Resolved| {
        format!(
            "  {name:<28} input {}  output {}  cache read {}  5m write {}  1h write {}  reasoning {}",
            rate(r.input),
            rate(r.output),
            rate(r.cache_read),
            rate(r.cache_write),
            rate(r.cache_write_1h),
            rate(r.reasoning)
        )
    };
    writeln!(
        out,
        "{}",
        row("standard", &p.resolve(ServiceTier::Standard, 0))
    )?;
    for (name, t) in &p.tiers {
        let given = [
            ("input", t.input),
            ("output", t.output),
            ("cache read", t.cache_read),
            ("5m write", t.cache_write),
            ("1h write", t.cache_write_1h),
            ("reasoning", t.reasoning),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k} {}", rate(v))))
        .collect::<Vec<_>>()
        .join("  ");
        writeln!(out, "  {name:<28} {given}")?;
    }
    if let Some(t) = p.tiers.keys().find(|t| t.contains("above_")) {
        writeln!(
            out,
            "  ({t}: a request whose prompt passes the threshold is charged whole at those rates)"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn update(home: &std::path::Path, file: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let info = import_snapshot(home, file)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &info)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "imported {} models from {} (sha256 {}) into {}; they price over Bosun's table and \
             under prices.toml",
            info.models,
            file.display(),
            info.sha256,
            info.stored.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn set_price(home: &std::path::Path, a: SetArgs) -> anyhow::Result<ExitCode> {
    let price = UserPrice {
        input: a.input,
        output: a.output,
        cache_read: a.cache_read,
        cache_write: a.cache_write,
        cache_write_1h: a.cache_write_1h,
        reasoning: a.reasoning,
        context_window: a.context_window,
    };
    write_user_price(home, &a.model, &price)?;
    let table = PriceTable::load(home).context("while reading the prices back")?;
    let e = table
        .lookup(a.model.trim())
        .context("the price just written is not in the table")?;
    let r = e.price.resolve(ServiceTier::Standard, 0);
    println!(
        "{}: input {}, output {}, cache read {}, 5m write {}, 1h write {}, reasoning {} (USD per \
         million tokens) in {}",
        e.name,
        rate(r.input),
        rate(r.output),
        rate(r.cache_read),
        rate(r.cache_write),
        rate(r.cache_write_1h),
        rate(r.reasoning),
        home.join(bosun_model::USER_FILE).display()
    );
    Ok(ExitCode::SUCCESS)
}
