//! Reading one policy layer (a TOML text) into rules that remember the file and line they came
//! from.

use toml_edit::{Document, Item, Table, Value};

use crate::commands::CommandPattern;
use crate::mcp::{McpPattern, McpRule};
use crate::network::{DomainPattern, NetworkRule};
use crate::paths::PathGlob;
use crate::{BUILTIN_SOURCE, Decision, Layer, Mode, PolicyError};

/// Where a rule was written: a policy file (or `built-in`) and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One string from a rule list, compiled.
#[derive(Debug, Clone)]
pub struct Entry<T> {
    pub value: T,
    pub text: String,
    pub origin: Origin,
}

#[derive(Debug, Clone)]
pub struct CommandRule {
    pub decision: Decision,
    pub pattern: CommandPattern,
    pub text: String,
    pub origin: Origin,
    pub builtin: bool,
}

/// Everything one layer says.
#[derive(Debug, Clone, Default)]
pub struct LayerRules {
    pub builtin: bool,
    /// Written by the user (built-in, `$BOSUN_HOME/policy.toml`, `--policy`), not a repository.
    pub trusted: bool,
    pub mode: Option<(Mode, Origin)>,
    /// `None` when the layer sets no write scope (it then restricts nothing).
    pub write: Option<(Vec<Entry<PathGlob>>, Origin)>,
    pub deny: Vec<Entry<PathGlob>>,
    pub read_deny: Vec<Entry<PathGlob>>,
    pub commands: Vec<CommandRule>,
    pub max_files: Option<(usize, Origin)>,
    pub max_lines: Option<(usize, Origin)>,
    /// `[network] allow`: commands granted the network (through the proxy).
    pub network: Vec<Entry<CommandPattern>>,
    /// `[network] domains`: hosts every command with the proxy may reach.
    pub domains: Vec<Entry<DomainPattern>>,
    /// `[network] deny_domains`: hosts no command reaches, whatever allows them.
    pub deny_domains: Vec<Entry<DomainPattern>>,
    /// `[[network.rules]]`: hosts the commands matching a pattern may reach.
    pub network_rules: Vec<NetworkRule>,
    /// `[mcp] allow | ask | deny`: MCP tools (`server/tool`, `server/*`).
    pub mcp: Vec<McpRule>,
    pub sandbox_write: Vec<String>,
    pub env_allow: Vec<String>,
}

const SECTIONS: &[(&str, &[&str])] = &[
    ("paths", &["write", "deny", "read_deny"]),
    ("commands", &["allow", "ask", "deny"]),
    ("approval", &["max_files", "max_lines"]),
    ("network", &["allow", "domains", "deny_domains", "rules"]),
    ("sandbox", &["write"]),
    ("env", &["allow"]),
    ("mcp", &["allow", "ask", "deny"]),
];

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn line(&self, span: Option<std::ops::Range<usize>>) -> usize {
        let offset = span.map_or(0, |s| s.start).min(self.text.len());
        self.text
            .get(..offset)
            .map_or(1, |t| t.matches('\n').count() + 1)
    }

    fn origin(&self, span: Option<std::ops::Range<usize>>) -> Origin {
        Origin {
            file: self.file.to_string(),
            line: self.line(span),
        }
    }

    fn error(&self, span: Option<std::ops::Range<usize>>, message: String) -> PolicyError {
        PolicyError::Invalid {
            file: self.file.to_string(),
            line: self.line(span),
            message,
        }
    }

    fn strings(&self, key: &str, item: &Item) -> Result<Vec<(String, Origin)>, PolicyError> {
        let Some(array) = item.as_array() else {
            return Err(self.error(
                item.span(),
                format!("`{key}` must be a list of strings, like {key} = [\"…\"]"),
            ));
        };
        array
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok((s.value().clone(), self.origin(v.span()))),
                other => Err(self.error(
                    other.span(),
                    format!("`{key}` must hold only strings; put this entry in quotes"),
                )),
            })
            .collect()
    }

    fn count(&self, key: &str, item: &Item) -> Result<(usize, Origin), PolicyError> {
        match item.as_integer() {
            Some(n) if n >= 0 => Ok((n as usize, self.origin(item.span()))),
            _ => Err(self.error(
                item.span(),
                format!("`{key}` must be a whole number of at least 0"),
            )),
        }
    }

    /// A list of strings, each parsed with `parse` (an error names the file and line).
    fn entries<T>(
        &self,
        key: &str,
        item: &Item,
        parse: fn(&str) -> Result<T, String>,
    ) -> Result<Vec<Entry<T>>, PolicyError> {
        self.strings(key, item)?
            .into_iter()
            .map(|(text, origin)| {
                let value = parse(&text).map_err(|m| PolicyError::Invalid {
                    file: origin.file.clone(),
                    line: origin.line,
                    message: m,
                })?;
                Ok(Entry {
                    value,
                    text,
                    origin,
                })
            })
            .collect()
    }

    fn globs(&self, key: &str, item: &Item) -> Result<Vec<Entry<PathGlob>>, PolicyError> {
        self.entries(key, item, PathGlob::new)
    }

    fn patterns(&self, key: &str, item: &Item) -> Result<Vec<Entry<CommandPattern>>, PolicyError> {
        self.entries(key, item, CommandPattern::parse)
    }

    fn domains(&self, key: &str, item: &Item) -> Result<Vec<Entry<DomainPattern>>, PolicyError> {
        self.entries(key, item, DomainPattern::parse)
    }

    /// `[[network.rules]]` tables, each `command = "…"` and `domains = ["…"]`.
    fn network_rules(&self, item: &Item) -> Result<Vec<NetworkRule>, PolicyError> {
        const KEYS: &str = "each [[network.rules]] takes `command` and `domains`";
        let Some(tables) = item.as_array_of_tables() else {
            return Err(self.error(
                item.span(),
                format!("`network.rules` must be written as [[network.rules]] tables; {KEYS}"),
            ));
        };
        let mut rules = Vec::new();
        for table in tables.iter() {
            let mut command = None;
            let mut domains = Vec::new();
            for (name, value) in table.iter() {
                let span = table.key(name).and_then(|k| k.span());
                match name {
                    "command" => {
                        let text = value.as_str().ok_or_else(|| {
                            self.error(
                                value.span(),
                                "`network.rules.command` must be one command pattern in quotes, like command = \"pip install*\"".into(),
                            )
                        })?;
                        let origin = self.origin(value.span());
                        let pattern =
                            CommandPattern::parse(text).map_err(|m| self.error(value.span(), m))?;
                        command = Some(Entry {
                            value: pattern,
                            text: text.to_string(),
                            origin,
                        });
                    }
                    "domains" => domains = self.domains("network.rules.domains", value)?,
                    other => {
                        return Err(self
                            .error(span, format!("unknown key `network.rules.{other}`; {KEYS}")));
                    }
                }
            }
            let Some(command) = command else {
                return Err(self.error(
                    table.span(),
                    format!("a [[network.rules]] table has no `command`; {KEYS}"),
                ));
            };
            rules.push(NetworkRule { command, domains });
        }
        Ok(rules)
    }
}

fn section_table<'a>(
    reader: &Reader<'_>,
    name: &str,
    item: &'a Item,
) -> Result<&'a Table, PolicyError> {
    item.as_table().ok_or_else(|| {
        reader.error(
            item.span(),
            format!("`{name}` must be a table: write it as a `[{name}]` section"),
        )
    })
}

/// Parses one layer. Unknown keys are errors (a typo would otherwise silently loosen nothing).
pub fn parse_layer(layer: &Layer) -> Result<LayerRules, PolicyError> {
    let reader = Reader {
        file: &layer.source,
        text: &layer.text,
    };
    let doc = Document::parse(layer.text.as_str()).map_err(|e| {
        reader.error(
            e.span(),
            format!("not valid TOML: {}", e.message().trim_end()),
        )
    })?;
    let builtin = layer.source == BUILTIN_SOURCE;
    let mut rules = LayerRules {
        builtin,
        trusted: layer.trusted,
        ..LayerRules::default()
    };
    for (key, item) in doc.as_table().iter() {
        let key_span = doc.as_table().key(key).and_then(|k| k.span());
        if key == "mode" {
            let text = item.as_str().unwrap_or_default();
            let mode: Mode = text
                .parse()
                .map_err(|e: PolicyError| reader.error(item.span(), e.to_string()))?;
            rules.mode = Some((mode, reader.origin(item.span())));
            continue;
        }
        let Some((_, keys)) = SECTIONS.iter().find(|(s, _)| *s == key) else {
            return Err(reader.error(
                key_span,
                format!(
                    "unknown key `{key}`; a policy has `mode` and the sections [paths], [commands], [approval], [network], [sandbox], [env], [mcp]"
                ),
            ));
        };
        let table = section_table(&reader, key, item)?;
        for (name, value) in table.iter() {
            let span = table.key(name).and_then(|k| k.span());
            if !keys.contains(&name) {
                return Err(reader.error(
                    span,
                    format!(
                        "unknown key `{key}.{name}`; [{key}] takes {}",
                        keys.join(", ")
                    ),
                ));
            }
            let full = format!("{key}.{name}");
            match (key, name) {
                ("paths", "write") => {
                    let origin = reader.origin(span.or(value.span()));
                    rules.write = Some((reader.globs(&full, value)?, origin));
                }
                ("paths", "deny") => rules.deny = reader.globs(&full, value)?,
                ("paths", "read_deny") => rules.read_deny = reader.globs(&full, value)?,
                ("commands", list) => {
                    let decision = match list {
                        "allow" => Decision::Allow,
                        "ask" => Decision::Ask,
                        _ => Decision::Deny,
                    };
                    for e in reader.patterns(&full, value)? {
                        rules.commands.push(CommandRule {
                            decision,
                            pattern: e.value,
                            text: e.text,
                            origin: e.origin,
                            builtin,
                        });
                    }
                }
                ("mcp", list) => {
                    let decision = match list {
                        "allow" => Decision::Allow,
                        "ask" => Decision::Ask,
                        _ => Decision::Deny,
                    };
                    for e in reader.entries(&full, value, McpPattern::parse)? {
                        rules.mcp.push(McpRule {
                            decision,
                            pattern: e.value,
                            text: e.text,
                            origin: e.origin,
                        });
                    }
                }
                ("approval", "max_files") => rules.max_files = Some(reader.count(&full, value)?),
                ("approval", "max_lines") => rules.max_lines = Some(reader.count(&full, value)?),
                ("network", "allow") => rules.network = reader.patterns(&full, value)?,
                ("network", "domains") => rules.domains = reader.domains(&full, value)?,
                ("network", "deny_domains") => rules.deny_domains = reader.domains(&full, value)?,
                ("network", _) => rules.network_rules = reader.network_rules(value)?,
                ("sandbox", _) => {
                    rules.sandbox_write = reader
                        .strings(&full, value)?
                        .into_iter()
                        .map(|s| s.0)
                        .collect()
                }
                _ => {
                    rules.env_allow = reader
                        .strings(&full, value)?
                        .into_iter()
                        .map(|s| s.0)
                        .collect()
                }
            }
        }
    }
    Ok(rules)
}
