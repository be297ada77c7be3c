//! Adding a rule to a policy file's text ("approve always"), keeping its comments and layout.

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use crate::layers::parse_layer;
use crate::{Layer, PolicyError};

/// A list in a policy file that takes patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleList {
    CommandsAllow,
    CommandsAsk,
    CommandsDeny,
    PathsWrite,
    PathsDeny,
    PathsReadDeny,
    NetworkAllow,
    NetworkDomains,
    McpAllow,
    McpAsk,
    McpDeny,
}

impl RuleList {
    /// `(section, key)`, e.g. `("commands", "allow")`.
    pub fn key(&self) -> (&'static str, &'static str) {
        match self {
            RuleList::CommandsAllow => ("commands", "allow"),
            RuleList::CommandsAsk => ("commands", "ask"),
            RuleList::CommandsDeny => ("commands", "deny"),
            RuleList::PathsWrite => ("paths", "write"),
            RuleList::PathsDeny => ("paths", "deny"),
            RuleList::PathsReadDeny => ("paths", "read_deny"),
            RuleList::NetworkAllow => ("network", "allow"),
            RuleList::NetworkDomains => ("network", "domains"),
            RuleList::McpAllow => ("mcp", "allow"),
            RuleList::McpAsk => ("mcp", "ask"),
            RuleList::McpDeny => ("mcp", "deny"),
        }
    }
}

impl std::fmt::Display for RuleList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (section, key) = self.key();
        write!(f, "{section}.{key}")
    }
}

impl std::str::FromStr for RuleList {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<RuleList, PolicyError> {
        let all = [
            RuleList::CommandsAllow,
            RuleList::CommandsAsk,
            RuleList::CommandsDeny,
            RuleList::PathsWrite,
            RuleList::PathsDeny,
            RuleList::PathsReadDeny,
            RuleList::NetworkAllow,
            RuleList::NetworkDomains,
            RuleList::McpAllow,
            RuleList::McpAsk,
            RuleList::McpDeny,
        ];
        all.into_iter()
            .find(|l| l.to_string() == s)
            .ok_or_else(|| PolicyError::UnknownList(s.to_string()))
    }
}

/// Returns `file_text` with `pattern` appended to `list` (creating the section or list if
/// needed), comments and formatting kept. Adding a pattern already there changes nothing.
pub fn add_rule(file_text: &str, list: RuleList, pattern: &str) -> Result<String, PolicyError> {
    let mut doc: DocumentMut = file_text.parse().map_err(|e: toml_edit::TomlError| {
        PolicyError::Unreadable(e.message().trim().to_string())
    })?;
    let (section, key) = list.key();
    let root = doc.as_table_mut();
    if !root.contains_key(section) {
        root.insert(section, Item::Table(Table::new()));
    }
    if let Some(table) = root.get_mut(section).and_then(Item::as_table_mut)
        && table.is_implicit()
    {
        // Only sub-tables (`[[network.rules]]`) so far: the new `[network]` goes after them,
        // so comments above them stay where they were.
        let last = table
            .iter()
            .filter_map(|(_, item)| match item {
                Item::Table(t) => t.position(),
                Item::ArrayOfTables(a) => a.iter().filter_map(Table::position).max(),
                _ => None,
            })
            .max();
        table.set_implicit(false);
        if let Some(last) = last {
            table.set_position(Some(last + 1));
        }
    }
    let Some(table) = root.get_mut(section).and_then(Item::as_table_like_mut) else {
        return Err(PolicyError::Unreadable(format!(
            "`{section}` is not a table"
        )));
    };
    if !table.contains_key(key) {
        table.insert(key, Item::Value(Value::Array(Array::new())));
    }
    let Some(array) = table.get_mut(key).and_then(Item::as_array_mut) else {
        return Err(PolicyError::Unreadable(format!("`{list}` is not a list")));
    };
    if !array.iter().any(|v| v.as_str() == Some(pattern)) {
        // Keep a multi-line list multi-line: copy the decoration of the last element.
        let decor = array.iter().last().map(|v| {
            v.decor()
                .prefix()
                .and_then(|p| p.as_str())
                .map(str::to_string)
        });
        array.push(pattern);
        if let (Some(Some(prefix)), Some(last)) = (decor, array.iter_mut().last())
            && !prefix.is_empty()
        {
            last.decor_mut().set_prefix(prefix);
        }
    }
    let text = doc.to_string();
    parse_layer(&Layer::file("the edited policy", text.clone()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn adds_to_existing_lists_and_keeps_comments() {
        let text =
            "# my policy\nmode = \"ask\" # default\n[commands]\n# safe ones\nallow = [\"make\"]\n";
        let out = add_rule(text, RuleList::CommandsAllow, "npm install").unwrap();
        assert_eq!(
            out,
            "# my policy\nmode = \"ask\" # default\n[commands]\n# safe ones\nallow = [\"make\", \"npm install\"]\n"
        );
        assert_eq!(
            add_rule(&out, RuleList::CommandsAllow, "npm install").unwrap(),
            out
        );
    }

    #[test]
    fn creates_sections_and_rejects_broken_files() {
        let out = add_rule("", RuleList::PathsWrite, "src/**").unwrap();
        assert_eq!(out, "[paths]\nwrite = [\"src/**\"]\n");
        assert!(matches!(
            add_rule("[commands\n", RuleList::CommandsAllow, "x"),
            Err(PolicyError::Unreadable(_))
        ));
        assert!(add_rule("commands = 3\n", RuleList::CommandsAllow, "x").is_err());
        assert_eq!(
            "network.allow".parse::<RuleList>().unwrap(),
            RuleList::NetworkAllow
        );
        assert!("commands.maybe".parse::<RuleList>().is_err());
    }
}
