//! `bosun models`: how Bosun talks to each configured model (its profile, and where each part
//! came from), and `bosun models probe`, which asks the server and the model.

use crate::commands::run::{ProviderFlags, provider_entry, runtime};
use anyhow::bail;
use bosun_core::config::BosunConfig;
use bosun_core::profiles::{self, ProbeReport};
use clap::{Args, Subcommand};
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ModelsArgs {
    #[command(subcommand)]
    command: Option<ModelsCommand>,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// Probe a model: the server's chat template and context window (llama.cpp's /props,
    /// Ollama's /api/show) and two short requests with native tool calls; the profile found is
    /// kept in $BOSUN_HOME/model-profiles.json and used by the next tasks
    Probe {
        #[command(flatten)]
        provider: ProviderFlags,
        #[arg(long)]
        json: bool,
    },
}

pub fn models(args: ModelsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        None => list(args.json),
        Some(ModelsCommand::Probe { provider, json }) => probe(&provider, json),
    }
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let home = crate::home();
    let config = BosunConfig::load(&home)?;
    if config.providers.is_empty() {
        bail!(
            "no providers in {}: add one with the app's Settings, or pass --api, --base-url and --model to `bosun models probe`",
            home.join("config.toml").display()
        );
    }
    let mut rows = Vec::new();
    for (name, entry) in &config.providers {
        // A missing key variable does not hide the profile.
        let cfg = match entry.to_provider_config(name, &|var| std::env::var(var).ok()) {
            Ok(c) => c,
            Err(_) => entry.to_provider_config(name, &|_| Some(String::new()))?,
        };
        let view = profiles::view(&home, &cfg);
        rows.push((
            name.clone(),
            cfg,
            view,
            entry.profile.clone().unwrap_or_default(),
        ));
    }
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(|(name, cfg, view, keys)| {
                json!({
                    "provider": name,
                    "api": cfg.api.as_str(),
                    "base_url": cfg.base_url,
                    "model": cfg.model,
                    "profile": view.profile,
                    "configured": keys,
                    "probe": view.probe,
                    "would_probe": view.would_probe,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for (name, cfg, view, _) in &rows {
        writeln!(out, "{name}  {} at {}", cfg.model, cfg.base_url)?;
        writeln!(out, "  {}", profiles::describe(&view.profile))?;
        match (&view.probe, view.would_probe) {
            (Some(p), _) => writeln!(out, "  probed {}", p.probed_at)?,
            (None, true) => writeln!(out, "  not probed yet: the first task probes it")?,
            (None, false) => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn probe(flags: &ProviderFlags, json: bool) -> anyhow::Result<ExitCode> {
    let home = crate::home();
    let config = BosunConfig::load(&home)?;
    let (name, entry) = provider_entry(flags, &config, None)?;
    let cfg = entry.to_provider_config(&name, &|var| std::env::var(var).ok())?;
    if !bosun_model::is_local_url(&cfg.base_url) && !json {
        eprintln!(
            "bosun: {} is not on this machine or the local network: the probe sends it 2 short requests (a few hundred tokens)",
            cfg.base_url
        );
    }
    let report: ProbeReport = runtime()?.block_on(profiles::probe_and_save(&home, &cfg))?;
    // What tasks will use: the configured keys over what the probe found.
    let used = profiles::view(&home, &cfg).profile;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({
                "provider": name,
                "report": report,
                "profile": used,
            }))?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "{name}  {} at {}", cfg.model, cfg.base_url)?;
    for f in &report.findings {
        writeln!(out, "  · {f}")?;
    }
    writeln!(out, "  profile: {}", profiles::describe(&used))?;
    if used != report.profile {
        writeln!(
            out,
            "  (the keys set in [providers.{name}] profile win over the probe's)"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
