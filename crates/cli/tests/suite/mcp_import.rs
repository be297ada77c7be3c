//! `bosun mcp import --from claude | codex | FILE`: other agents' MCP servers written as
//! `[mcp_servers.NAME]` tables of `$BOSUN_HOME/config.toml`, without their secrets. `HOME`,
//! `CODEX_HOME` and the current directory are temporary, so the real home is never read.

use super::support::*;
use bosun_mcp::McpServerConfig;
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::path::PathBuf;

const SECRET: &str = "ghp_s3cr3tS3CR3Ts3cr3tS3CR3Ts3cr3t0123";

struct Homes {
    env: Env,
    /// `$HOME`, holding `.claude.json`.
    user: PathBuf,
    codex: PathBuf,
    /// The current directory of `bosun` (not in a repository unless a test says so).
    cwd: PathBuf,
}

fn homes() -> Homes {
    let env = Env::new();
    let user = env.dir.path().join("user");
    let codex = env.dir.path().join("codex");
    let cwd = env.dir.path().join("elsewhere");
    for d in [&user, &codex, &cwd] {
        std::fs::create_dir_all(d).unwrap();
    }
    Homes {
        env,
        user,
        codex,
        cwd,
    }
}

impl Homes {
    fn import(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .env
            .bosun()
            .current_dir(&self.cwd)
            .env("HOME", &self.user)
            .env("CODEX_HOME", &self.codex)
            .env_remove("CLAUDE_CONFIG_DIR")
            .args(["mcp", "import"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn config_path(&self) -> PathBuf {
        self.env.home.join("config.toml")
    }

    fn config_text(&self) -> String {
        std::fs::read_to_string(self.config_path()).unwrap()
    }

    /// The `[mcp_servers]` of config.toml as Bosun reads them.
    fn servers(&self) -> BTreeMap<String, McpServerConfig> {
        #[derive(serde::Deserialize)]
        struct File {
            #[serde(default)]
            mcp_servers: BTreeMap<String, McpServerConfig>,
        }
        toml::from_str::<File>(&self.config_text())
            .unwrap()
            .mcp_servers
    }

    fn claude(&self, json: serde_json::Value) {
        std::fs::write(self.user.join(".claude.json"), json.to_string()).unwrap();
    }
}

fn claude_servers() -> serde_json::Value {
    serde_json::json!({
        "numStartups": 12,
        "mcpServers": {
            "github": {"type": "stdio", "command": "npx",
                       "args": ["-y", "@modelcontextprotocol/server-github"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": SECRET, "LOG_LEVEL": "warn"}},
            "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                     "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "web"}}
        }
    })
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn claude_servers_are_imported_next_to_what_config_toml_had_and_the_secret_stays_out() {
    let h = homes();
    std::fs::create_dir_all(&h.env.home).unwrap();
    let before = "# my settings\ndefault_mode = \"ask\"  # keep this comment\n";
    std::fs::write(h.config_path(), before).unwrap();
    h.claude(claude_servers());

    let (code, out, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Imported 2 server(s)"), "{out}");
    assert!(
        out.contains(
            "set GITHUB_PERSONAL_ACCESS_TOKEN in your environment (the value was not copied)"
        ),
        "{out}"
    );
    let text = h.config_text();
    assert!(
        text.starts_with(before),
        "the file's own content stays first: {text}"
    );
    let read = bosun_core::BosunConfig::load(&h.env.home).unwrap();
    assert_eq!(read.default_mode.as_deref(), Some("ask"));
    assert_eq!(
        read.mcp_servers,
        h.servers(),
        "the core reads what was written"
    );
    assert!(!text.contains(SECRET), "{text}");
    assert!(!out.contains(SECRET) && !err.contains(SECRET));
    assert_eq!(
        h.servers(),
        BTreeMap::from([
            (
                "docs".to_string(),
                McpServerConfig {
                    url: Some("https://mcp.example.com/mcp".into()),
                    headers: BTreeMap::from([("X-Team".to_string(), "web".to_string())]),
                    bearer_token_env_var: Some("DOCS_TOKEN".into()),
                    ..Default::default()
                }
            ),
            (
                "github".to_string(),
                McpServerConfig {
                    command: Some("npx".into()),
                    args: strings(&["-y", "@modelcontextprotocol/server-github"]),
                    env: BTreeMap::from([("LOG_LEVEL".to_string(), "warn".to_string())]),
                    env_vars: strings(&["GITHUB_PERSONAL_ACCESS_TOKEN"]),
                    ..Default::default()
                }
            ),
        ])
    );
}

#[test]
fn a_projects_mcp_json_and_its_private_entry_come_in_from_the_repository() {
    let mut h = homes();
    h.cwd = h.env.repo.join("src");
    std::fs::create_dir_all(&h.cwd).unwrap();
    std::fs::write(
        h.env.repo.join(".mcp.json"),
        r#"{"mcpServers": {"team": {"command": "team-server", "args": ["--stdio"]}}}"#,
    )
    .unwrap();
    let repo = h.env.repo.display().to_string();
    h.claude(serde_json::json!({"projects": {repo: {"mcpServers": {
        "mine": {"type": "sse", "url": "http://127.0.0.1:8123/sse"}
    }}}}));
    let (code, out, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("SSE"), "{out}");
    let servers = h.servers();
    assert_eq!(servers["team"].command_line(), "team-server --stdio");
    assert_eq!(
        servers["mine"].url.as_deref(),
        Some("http://127.0.0.1:8123/sse")
    );
}

#[test]
fn codex_servers_are_imported_with_what_bosun_cannot_keep_noted() {
    let h = homes();
    std::fs::write(
        h.codex.join("config.toml"),
        r#"model = "o3"

[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
env_vars = ["SRV_HOME"]
cwd = "/srv"
startup_timeout_sec = 15
tool_timeout_sec = 120
enabled_tools = ["read_file"]

[mcp_servers.search]
url = "https://search.example.com/mcp"
bearer_token_env_var = "SEARCH_TOKEN"
enabled = false
"#,
    )
    .unwrap();
    let (code, out, err) = h.import(&["--from", "codex"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("dropped cwd = \"/srv\""), "{out}");
    assert!(out.contains("dropped enabled_tools = [read_file]"), "{out}");
    let text = h.config_text();
    assert!(
        text.contains("# note: dropped cwd"),
        "notes go in as comments: {text}"
    );
    let servers = h.servers();
    assert_eq!(
        servers["files"],
        McpServerConfig {
            command: Some("npx".into()),
            args: strings(&["-y", "@modelcontextprotocol/server-filesystem", "/srv"]),
            env_vars: strings(&["SRV_HOME"]),
            startup_timeout_sec: Some(15),
            tool_timeout_sec: Some(120),
            ..Default::default()
        }
    );
    assert_eq!(servers["search"].enabled, Some(false));
    assert_eq!(
        servers["search"].bearer_token_env_var.as_deref(),
        Some("SEARCH_TOKEN")
    );
}

#[test]
fn a_file_of_either_shape_is_imported_and_json_reports_it() {
    let h = homes();
    let json_file = h.cwd.join("claude_desktop_config.json");
    std::fs::write(
        &json_file,
        r#"{"mcpServers": {"my.tool": {"command": "tool", "env": {"API_KEY": "abc"}}}}"#,
    )
    .unwrap();
    let v: serde_json::Value = {
        let (code, out, err) = h.import(&["--from", json_file.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    assert_eq!(v["imported"], 1);
    let s = &v["servers"][0];
    assert_eq!(s["name"], "my-tool");
    assert_eq!(s["original_name"], "my.tool");
    assert_eq!(s["status"], "imported");
    assert_eq!(s["transport"], "stdio");
    assert_eq!(s["config"]["env_vars"], serde_json::json!(["API_KEY"]));
    assert!(
        s["notes"][0].as_str().unwrap().contains("renamed from"),
        "{s}"
    );
    assert!(!h.config_text().contains("\"abc\""));

    let toml_file = h.cwd.join("servers.toml");
    std::fs::write(
        &toml_file,
        "[mcp_servers.web]\nurl = \"http://127.0.0.1:3001/mcp\"\nheaders = { X-Env = \"dev\" }\n",
    )
    .unwrap();
    let (code, out, err) = h.import(&["--from", toml_file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let servers = h.servers();
    assert_eq!(servers.len(), 2);
    assert_eq!(servers["web"].headers["X-Env"], "dev");
}

#[test]
fn dry_run_shows_what_would_come_in_and_writes_nothing() {
    let h = homes();
    h.claude(claude_servers());
    let (code, out, err) = h.import(&["--from", "claude", "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("would import"), "{out}");
    assert!(out.contains("nothing written"), "{out}");
    assert!(!h.config_path().exists());

    std::fs::create_dir_all(&h.env.home).unwrap();
    std::fs::write(h.config_path(), "# untouched\n").unwrap();
    let (code, _, _) = h.import(&["--from", "claude", "--dry-run"]);
    assert_eq!(code, 0);
    assert_eq!(h.config_text(), "# untouched\n");
}

#[test]
fn a_second_import_skips_names_already_there_and_force_replaces_them() {
    let h = homes();
    h.claude(claude_servers());
    assert_eq!(h.import(&["--from", "claude"]).0, 0);

    // The user edits one by hand; a second import leaves it alone.
    let edited = h
        .config_text()
        .replace("LOG_LEVEL = \"warn\"", "LOG_LEVEL = \"debug\"");
    std::fs::write(h.config_path(), &edited).unwrap();
    let (code, out, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("already in config.toml (--force replaces it)"),
        "{out}"
    );
    assert!(err.contains("nothing imported"), "{err}");
    assert_eq!(h.config_text(), edited);

    let (code, out, err) = h.import(&["--from", "claude", "--force", "--only", "github"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("replaced"), "{out}");
    let servers = h.servers();
    assert_eq!(servers["github"].env["LOG_LEVEL"], "warn");
    assert_eq!(servers.len(), 2);
    assert_eq!(h.config_text().matches("[mcp_servers.github]").count(), 1);
}

#[test]
fn only_a_name_that_was_not_found_is_exit_2_naming_those_that_were() {
    let h = homes();
    h.claude(claude_servers());
    let (code, _, err) = h.import(&["--from", "claude", "--only", "gitlab"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--only gitlab: no server of that name was found; found: docs, github"),
        "{err}"
    );
    assert!(!h.config_path().exists());
}

#[test]
fn nothing_found_is_exit_2_saying_where_it_looked() {
    let h = homes();
    let (code, _, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no MCP servers found"), "{err}");
    assert!(err.contains(".claude.json (mcpServers, projects["), "{err}");
    assert!(err.contains(".mcp.json (mcpServers)"), "{err}");

    let (code, _, err) = h.import(&["--from", "codex"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}/config.toml", h.codex.display())),
        "{err}"
    );

    let (code, _, err) = h.import(&["--from", "cluade"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not `claude`, `codex` or a file that exists"),
        "{err}"
    );
}

#[test]
fn a_malformed_source_or_config_is_exit_2_naming_the_file_and_changes_nothing() {
    let h = homes();
    let bad = h.cwd.join("servers.json");
    std::fs::write(&bad, "{\"mcpServers\": {\n  \"a\": {\"command\": }\n}}").unwrap();
    let (code, _, err) = h.import(&["--from", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{} is not valid JSON", bad.display())),
        "{err}"
    );
    assert!(err.contains("line 2"), "{err}");

    h.claude(claude_servers());
    std::fs::create_dir_all(&h.env.home).unwrap();
    let broken = "[providers.x\napi = \"openai-chat\"\n";
    std::fs::write(h.config_path(), broken).unwrap();
    let (code, _, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("config.toml is not valid TOML at line 1"),
        "{err}"
    );
    assert_eq!(h.config_text(), broken);
}

#[test]
fn a_credential_in_a_command_line_is_not_printed_and_is_flagged() {
    let h = homes();
    let key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    h.claude(serde_json::json!({"mcpServers": {
        "keyed": {"command": "server", "args": ["--api-key", key]}
    }}));
    let (code, out, err) = h.import(&["--from", "claude"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains(key) && !err.contains(key), "{out}{err}");
    assert!(out.contains("[REDACTED:"), "{out}");
    assert!(
        out.contains("the command line holds what looks like a credential"),
        "{out}"
    );
    let v = {
        let (code, out, _) = h.import(&["--from", "claude", "--json", "--dry-run", "--force"]);
        assert_eq!(code, 0);
        out
    };
    assert!(!v.contains(key), "{v}");
}

#[test]
fn a_server_that_would_not_work_is_shown_invalid_and_not_written() {
    let h = homes();
    std::fs::write(
        h.codex.join("config.toml"),
        "[mcp_servers.ws]\nurl = \"ws://127.0.0.1:9/mcp\"\n\n[mcp_servers.broken]\ncommand = 3\n",
    )
    .unwrap();
    let (code, out, err) = h.import(&["--from", "codex"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("invalid"), "{out}");
    assert!(
        out.contains("`url` must start with http:// or https://"),
        "{out}"
    );
    assert!(out.contains("unreadable    broken"), "{out}");
    assert!(out.contains("`command` must be a string"), "{out}");
    assert!(
        err.contains("no server found makes a working [mcp_servers] table"),
        "{err}"
    );
    assert!(!h.config_path().exists());
}
