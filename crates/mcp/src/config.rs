//! `[mcp_servers.NAME]`: one MCP server, as `$BOSUN_HOME/config.toml` (top level and
//! `[repos."<path>".mcp_servers.NAME]`) and a repository's `.bosun/config.toml` declare it.
//!
//! ```toml
//! [mcp_servers.github]                 # stdio: a command Bosun starts, sandboxed
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-github"]
//! env = { LOG_LEVEL = "warn" }         # literal values
//! env_vars = ["GITHUB_TOKEN"]          # passed by name from Bosun's environment
//!
//! [mcp_servers.docs]                   # streamable HTTP
//! url = "https://mcp.example.com/mcp"
//! headers = { "X-Team" = "web" }
//! bearer_token_env_var = "DOCS_TOKEN"  # sent as `Authorization: Bearer …`
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How long a server has to start and answer `initialize` and `tools/list` (default).
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 20;
/// How long one tool call may take before the model is told it timed out (default).
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;

/// One `[mcp_servers.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program to start (looked up on PATH), run sandboxed in the task's worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for the server, literal values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables passed by name from Bosun's environment (the only way a secret reaches a
    /// server: everything else secret-looking is dropped from its environment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_vars: Vec<String>,
    /// Streamable HTTP: the server's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent with every request, literal values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A variable of Bosun's environment holding a bearer token (`Authorization: Bearer …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env_var: Option<String>,
    /// Off: the server is known but neither started nor offered (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_sec: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_sec: Option<u64>,
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpTransport"
)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Stdio,
    Http,
}

impl McpServerConfig {
    pub fn transport(&self) -> Transport {
        if self.url.is_some() {
            Transport::Http
        } else {
            Transport::Stdio
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    pub fn startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.startup_timeout_sec
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT_SECS)
                .clamp(1, 600),
        )
    }

    pub fn tool_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.tool_timeout_sec
                .unwrap_or(DEFAULT_TOOL_TIMEOUT_SECS)
                .clamp(1, 3600),
        )
    }

    /// The command line as the user approves it and the policy's network rules see it: the
    /// program and its arguments, each quoted where the shell would need it.
    pub fn command_line(&self) -> String {
        let mut words = Vec::new();
        if let Some(c) = &self.command {
            words.push(shell_quote(c));
        }
        words.extend(self.args.iter().map(|a| shell_quote(a)));
        words.join(" ")
    }

    /// What identifies the server for a one-time approval of a project-declared one: its
    /// exact command and arguments (or URL), environment names and values, and headers.
    pub fn fingerprint(&self) -> String {
        let shown = serde_json::json!({
            "command": self.command,
            "args": self.args,
            "env": self.env,
            "env_vars": self.env_vars,
            "url": self.url,
            "headers": self.headers,
            "bearer_token_env_var": self.bearer_token_env_var,
        });
        shown.to_string()
    }

    /// Checks the table, naming the server (`origin` is the file, e.g. `config.toml`).
    pub fn validate(&self, name: &str, origin: &str) -> Result<(), String> {
        let at = format!("{origin}: [mcp_servers.{name}]");
        check_server_name(name).map_err(|e| format!("{at}: {e}"))?;
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{at} has both `command` (stdio) and `url` (HTTP); keep one"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "{at} has neither `command` (a stdio server) nor `url` (a streamable-HTTP server)"
                ));
            }
            (Some(c), None) => {
                if c.trim().is_empty() {
                    return Err(format!("{at}: `command` is empty"));
                }
                if !self.headers.is_empty() || self.bearer_token_env_var.is_some() {
                    return Err(format!(
                        "{at}: `headers` and `bearer_token_env_var` are for HTTP servers (`url`), not `command`"
                    ));
                }
            }
            (None, Some(u)) => {
                if !(u.starts_with("http://") || u.starts_with("https://")) {
                    return Err(format!(
                        "{at}: `url` must start with http:// or https:// (got {u:?})"
                    ));
                }
                if !self.args.is_empty() || !self.env.is_empty() || !self.env_vars.is_empty() {
                    return Err(format!(
                        "{at}: `args`, `env` and `env_vars` are for stdio servers (`command`), not `url`"
                    ));
                }
            }
        }
        for key in self.env.keys().chain(self.env_vars.iter()) {
            if key.is_empty() || key.contains(['=', '\0']) {
                return Err(format!("{at}: {key:?} is not an environment variable name"));
            }
        }
        Ok(())
    }
}

/// A server's name: letters, digits, `_` and `-` (it becomes part of tool names).
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 40 {
        return Err(format!(
            "the server name {name:?} must be 1 to 40 characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "the server name {name:?} may hold only letters, digits, `_` and `-`"
        ));
    }
    Ok(())
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> BTreeMap<String, McpServerConfig> {
        #[derive(Deserialize)]
        struct F {
            mcp_servers: BTreeMap<String, McpServerConfig>,
        }
        toml::from_str::<F>(text).unwrap().mcp_servers
    }

    #[test]
    fn stdio_and_http_servers_parse_and_validate() {
        let servers = parse(
            "[mcp_servers.fs]\ncommand = \"node\"\nargs = [\"x.js\", \"a b\"]\nenv = { A = \"1\" }\nenv_vars = [\"TOKEN\"]\n\n[mcp_servers.docs]\nurl = \"http://127.0.0.1:3001/mcp\"\nheaders = { X = \"y\" }\nbearer_token_env_var = \"DOCS\"\n",
        );
        let fs = &servers["fs"];
        assert_eq!(fs.transport(), Transport::Stdio);
        assert_eq!(fs.command_line(), "node x.js 'a b'");
        fs.validate("fs", "config.toml").unwrap();
        let docs = &servers["docs"];
        assert_eq!(docs.transport(), Transport::Http);
        docs.validate("docs", "config.toml").unwrap();
        assert!(docs.is_enabled());
    }

    #[test]
    fn a_table_that_cannot_work_is_named_with_what_to_change() {
        let both = McpServerConfig {
            command: Some("node".into()),
            url: Some("http://x/mcp".into()),
            ..Default::default()
        };
        let e = both.validate("x", "config.toml").unwrap_err();
        assert!(e.contains("[mcp_servers.x] has both"), "{e}");
        let none = McpServerConfig::default();
        assert!(none.validate("x", "f").unwrap_err().contains("neither"));
        let bad_url = McpServerConfig {
            url: Some("ftp://x".into()),
            ..Default::default()
        };
        assert!(bad_url.validate("x", "f").unwrap_err().contains("http://"));
        let ok = McpServerConfig {
            command: Some("node".into()),
            ..Default::default()
        };
        assert!(
            ok.validate("a b", "f")
                .unwrap_err()
                .contains("only letters")
        );
        assert!(
            toml::from_str::<McpServerConfig>("comand = \"x\"")
                .unwrap_err()
                .to_string()
                .contains("unknown field `comand`")
        );
    }
}
