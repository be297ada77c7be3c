//! `bosun mcp`: the MCP servers of `$BOSUN_HOME/config.toml`. `list` (in `mcp_list.rs`) shows
//! them with their tools; `import --from claude | codex | FILE` brings in the servers another agent is configured with, as `[mcp_servers.NAME]`
//! tables, keeping the rest of the file (comments included) as it was.

use anyhow::{Context, bail};
use bosun_mcp::import::{Found, ImportSource, ImportedServer, Places, Unreadable, find};
use bosun_mcp::{McpServerConfig, Transport};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toml_edit::{DocumentMut, Item, Table};

#[derive(Subcommand)]
pub enum McpCommand {
    /// Bring in the MCP servers of Claude Code (`~/.claude.json`, the project's `.mcp.json`),
    /// Codex (`~/.codex/config.toml`) or a JSON / TOML file, as `[mcp_servers.NAME]` tables of
    /// $BOSUN_HOME/config.toml. Secrets are never copied: they become variables passed by name
    Import(ImportArgs),
    /// Every MCP server configured for a repository (the current one by default): started in
    /// a scratch directory, its tools listed, stopped again
    List {
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct ImportArgs {
    /// `claude`, `codex`, or a file: JSON with `mcpServers` or TOML with `[mcp_servers.NAME]`
    #[arg(long, value_name = "claude|codex|FILE")]
    from: String,
    /// Show what would be imported; write nothing
    #[arg(long)]
    dry_run: bool,
    /// Replace servers of the same name already in config.toml (default: skip them)
    #[arg(long)]
    force: bool,
    /// Only this server (its name in the source or in Bosun; repeat for several)
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Print a JSON report: where it looked, each server with its status, notes and table
    #[arg(long)]
    json: bool,
}

pub fn mcp(cmd: McpCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        McpCommand::Import(args) => import(args),
        McpCommand::List { repo, json } => super::mcp_list::list(repo, json),
    }
}

/// What became of one server found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Imported,
    Replaced,
    /// A server of that name is in config.toml and `--force` was not given.
    Exists,
    /// It does not make a working table (the reason is in `Row::reason`).
    Invalid,
}

impl Outcome {
    fn word(self, dry_run: bool) -> &'static str {
        match (self, dry_run) {
            (Outcome::Imported, false) => "imported",
            (Outcome::Imported, true) => "would import",
            (Outcome::Replaced, false) => "replaced",
            (Outcome::Replaced, true) => "would replace",
            (Outcome::Exists, _) => "skipped",
            (Outcome::Invalid, _) => "invalid",
        }
    }

    fn writes(self) -> bool {
        matches!(self, Outcome::Imported | Outcome::Replaced)
    }
}

struct Row<'a> {
    server: &'a ImportedServer,
    outcome: Outcome,
    reason: Option<String>,
    notes: Vec<String>,
}

fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let source = ImportSource::parse(&args.from);
    if let ImportSource::File(path) = &source
        && !path.exists()
    {
        bail!(
            "--from {}: not `claude`, `codex` or a file that exists ({}: no such file)",
            args.from,
            path.display()
        );
    }
    let found = find(&source, &Places::from_env())?;
    if found.servers.is_empty() && found.unreadable.is_empty() {
        bail!(
            "no MCP servers found for --from {}; looked in {}",
            args.from,
            found.looked.join("; ")
        );
    }
    let (servers, unreadable) = select(&found, &args.only)?;

    let path = crate::home().join("config.toml");
    let text = read_config(&path)?;
    let mut doc = parse_config(&text, &path)?;
    let existing = existing_names(&doc, &path)?;
    let shown = Redactor::new();
    let rows: Vec<Row> = servers
        .iter()
        .map(|server| {
            let mut notes = server.notes.clone();
            notes.extend(shown.credential_note(&server.config));
            let (outcome, reason) = match server.config.validate(&server.name, "config.toml") {
                Err(e) => (Outcome::Invalid, Some(e)),
                Ok(()) if !existing.contains(&server.name) => (Outcome::Imported, None),
                Ok(()) if args.force => (Outcome::Replaced, None),
                Ok(()) => (
                    Outcome::Exists,
                    Some("already in config.toml (--force replaces it)".to_string()),
                ),
            };
            Row {
                server,
                outcome,
                reason,
                notes,
            }
        })
        .collect();
    let writes = rows.iter().filter(|r| r.outcome.writes()).count();

    if writes > 0 && !args.dry_run {
        let table = mcp_servers_table(&mut doc, &path)?;
        for row in rows.iter().filter(|r| r.outcome.writes()) {
            table.insert(&row.server.name, Item::Table(server_table(row)));
        }
        write_config(&path, doc.to_string().as_bytes())?;
        check_written(&path, rows.iter().filter(|r| r.outcome.writes()))?;
    }

    if args.json {
        print_json(&args, &found, &rows, &unreadable, &path, &shown)?;
    } else {
        print_text(&args, &found, &rows, &unreadable, &path, writes, &shown);
    }
    if writes == 0 {
        eprintln!(
            "bosun: nothing imported: {}",
            if rows.iter().any(|r| r.outcome == Outcome::Exists) {
                "every server found is already in config.toml (--force replaces them)"
            } else {
                "no server found makes a working [mcp_servers] table"
            }
        );
        return Ok(ExitCode::from(crate::exit::USAGE));
    }
    Ok(ExitCode::SUCCESS)
}

/// The servers `--only` names (all of them without it); a name that matches none is an error
/// listing the names there are.
fn select<'a>(
    found: &'a Found,
    only: &[String],
) -> anyhow::Result<(Vec<&'a ImportedServer>, Vec<&'a Unreadable>)> {
    if only.is_empty() {
        return Ok((
            found.servers.iter().collect(),
            found.unreadable.iter().collect(),
        ));
    }
    let known: Vec<&str> = found
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .chain(found.unreadable.iter().map(|u| u.name.as_str()))
        .collect();
    for name in only {
        let matches = found
            .servers
            .iter()
            .any(|s| &s.name == name || &s.original_name == name)
            || found.unreadable.iter().any(|u| &u.name == name);
        if !matches {
            bail!(
                "--only {name}: no server of that name was found; found: {}",
                known.join(", ")
            );
        }
    }
    let wanted = |n: &String| only.contains(n);
    Ok((
        found
            .servers
            .iter()
            .filter(|s| wanted(&s.name) || wanted(&s.original_name))
            .collect(),
        found
            .unreadable
            .iter()
            .filter(|u| wanted(&u.name))
            .collect(),
    ))
}

fn read_config(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("while reading {}", path.display())),
    }
}

/// The file as it is; one that does not parse is the user's to fix, and is left untouched.
fn parse_config(text: &str, path: &Path) -> anyhow::Result<DocumentMut> {
    text.parse::<DocumentMut>().map_err(|e| {
        // Not the error's Display: it quotes the line, which may hold a key.
        let at = e
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line}, column {column}")
            })
            .unwrap_or_default();
        anyhow::anyhow!(
            "{} is not valid TOML{at}: {}; fix it first (nothing was written)",
            path.display(),
            e.message().trim_end()
        )
    })
}

fn existing_names(doc: &DocumentMut, path: &Path) -> anyhow::Result<Vec<String>> {
    match doc.get("mcp_servers") {
        None => Ok(Vec::new()),
        Some(item) => match item.as_table_like() {
            Some(t) => Ok(t.iter().map(|(k, _)| k.to_string()).collect()),
            None => bail!("{}: `mcp_servers` must be a table", path.display()),
        },
    }
}

fn mcp_servers_table<'d>(doc: &'d mut DocumentMut, path: &Path) -> anyhow::Result<&'d mut Table> {
    if !doc.contains_key("mcp_servers") {
        let mut t = Table::new();
        t.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(t));
    }
    doc["mcp_servers"].as_table_mut().with_context(|| {
        format!(
            "{}: `mcp_servers` is an inline table; write it as [mcp_servers.NAME] tables to import into it",
            path.display()
        )
    })
}

/// `[mcp_servers.NAME]`, with a comment saying where it came from and what to do by hand.
fn server_table(row: &Row) -> Table {
    bosun_core::mcp_import::server_table(row.server, &row.notes, "`bosun mcp import`")
}

/// Writes through a temporary file beside the real one (a crash leaves the old file or the
/// new), keeping its permissions; a symlinked config.toml is written where it points.
fn write_config(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let target: PathBuf = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("while creating {}", dir.display()))?;
    }
    let tmp = target.with_extension("toml.tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("while writing {}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(&target) {
        std::fs::set_permissions(&tmp, meta.permissions())
            .with_context(|| format!("while setting the permissions of {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, &target).with_context(|| format!("while writing {}", target.display()))
}

/// Reads config.toml back and checks every table written as Bosun will read it.
fn check_written<'a>(path: &Path, rows: impl Iterator<Item = &'a Row<'a>>) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("while reading back {}", path.display()))?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        anyhow::anyhow!("{} no longer parses: {}", path.display(), e.message())
    })?;
    let servers = table.get("mcp_servers").and_then(toml::Value::as_table);
    let shown = path.display().to_string();
    for row in rows {
        let name = &row.server.name;
        let entry = servers.and_then(|s| s.get(name)).with_context(|| {
            format!("{shown}: [mcp_servers.{name}] is missing after writing it")
        })?;
        let config: McpServerConfig = entry.clone().try_into().map_err(|e: toml::de::Error| {
            anyhow::anyhow!("{shown}: [mcp_servers.{name}]: {}", e.message())
        })?;
        config
            .validate(name, &shown)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

/// Shows a command line or URL with anything credential-shaped replaced, and notes it.
struct Redactor(bosun_policy::redact::Redactor);

impl Redactor {
    fn new() -> Redactor {
        Redactor(bosun_policy::redact::Redactor::new(&[]))
    }

    fn target(&self, c: &McpServerConfig) -> String {
        let raw = match c.transport() {
            Transport::Stdio => c.command_line(),
            Transport::Http => c.url.clone().unwrap_or_default(),
        };
        self.0.redact(&raw).text.into_owned()
    }

    fn credential_note(&self, c: &McpServerConfig) -> Option<String> {
        let raw = format!("{} {}", c.command_line(), c.url.as_deref().unwrap_or(""));
        let r = self.0.redact(&raw);
        (r.count > 0).then(|| {
            format!(
                "the {} holds what looks like a credential ({}), copied as it was: better move it into a variable passed by name",
                if c.url.is_some() { "URL" } else { "command line" },
                r.kinds.join(", ")
            )
        })
    }
}

fn transport_word(c: &McpServerConfig) -> &'static str {
    match c.transport() {
        Transport::Stdio => "stdio",
        Transport::Http => "http",
    }
}

fn print_text(
    args: &ImportArgs,
    found: &Found,
    rows: &[Row],
    unreadable: &[&Unreadable],
    path: &Path,
    writes: usize,
    shown: &Redactor,
) {
    println!("Looked in {}", found.looked.join("; "));
    let width = rows.iter().map(|r| r.server.name.len()).max().unwrap_or(0);
    for row in rows {
        let c = &row.server.config;
        println!(
            "{:<13} {:<width$}  {:<5}  {}",
            row.outcome.word(args.dry_run),
            row.server.name,
            transport_word(c),
            shown.target(c)
        );
        println!("{:<13}   from {}", "", row.server.origin);
        if let Some(reason) = &row.reason {
            println!("{:<13}   {reason}", "");
        }
        for note in &row.notes {
            println!("{:<13}   note: {note}", "");
        }
    }
    for u in unreadable {
        println!("{:<13} {}  ({})", "unreadable", u.name, u.origin);
        println!("{:<13}   {}", "", u.reason);
    }
    if writes > 0 {
        if args.dry_run {
            println!(
                "Would import {writes} server(s) into {} (--dry-run: nothing written)",
                path.display()
            );
        } else {
            println!("Imported {writes} server(s) into {}", path.display());
        }
    }
}

fn print_json(
    args: &ImportArgs,
    found: &Found,
    rows: &[Row],
    unreadable: &[&Unreadable],
    path: &Path,
    shown: &Redactor,
) -> anyhow::Result<()> {
    let servers: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let c = &row.server.config;
            let mut config = serde_json::to_value(c).unwrap_or_default();
            shown.0.redact_json(&mut config);
            json!({
                "name": row.server.name,
                "original_name": row.server.original_name,
                "origin": row.server.origin,
                "status": row.outcome.word(args.dry_run).replace(' ', "_"),
                "reason": row.reason,
                "transport": transport_word(c),
                "target": shown.target(c),
                "notes": row.notes,
                "config": config,
            })
        })
        .collect();
    let unreadable: Vec<serde_json::Value> = unreadable
        .iter()
        .map(|u| json!({"name": u.name, "origin": u.origin, "reason": u.reason}))
        .collect();
    let report = json!({
        "from": args.from,
        "config_file": path.display().to_string(),
        "dry_run": args.dry_run,
        "looked": found.looked,
        "servers": servers,
        "unreadable": unreadable,
        "imported": rows.iter().filter(|r| r.outcome.writes()).count(),
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
