use super::*;
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

struct Dirs {
    _tmp: tempfile::TempDir,
    places: Places,
}

/// A home, a Codex home and a current directory, all empty.
fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let cwd = tmp.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    let places = Places {
        home: Some(home.clone()),
        claude_config_dir: None,
        codex_home: Some(home.join(".codex")),
        cwd,
    };
    Dirs { _tmp: tmp, places }
}

fn home(d: &Dirs) -> &Path {
    d.places.home.as_deref().unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn by_name(found: &Found) -> BTreeMap<&str, &ImportedServer> {
    found.servers.iter().map(|s| (s.name.as_str(), s)).collect()
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn claude_user_and_project_servers_come_in_with_claude_codes_precedence() {
    let d = dirs();
    let cwd = d.places.cwd.display().to_string();
    write(
        &home(&d).join(".claude.json"),
        &serde_json::json!({
            "numStartups": 4,
            "mcpServers": {
                "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "/tmp"],
                       "env": {"LOG_LEVEL": "warn"}},
                "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                         "headers": {"X-Team": "web"}},
                "shared": {"command": "user-version"}
            },
            "projects": {
                cwd.clone(): {"mcpServers": {"local": {"command": "local-server"}},
                              "disabledMcpjsonServers": ["off"]},
                "/elsewhere": {"mcpServers": {"other": {"command": "not-this-one"}}}
            }
        })
        .to_string(),
    );
    write(
        &d.places.cwd.join(".mcp.json"),
        r#"{"mcpServers": {"shared": {"command": "project-version"}, "off": {"command": "o"}}}"#,
    );
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["local", "off", "shared", "docs", "fs"]);
    let s = by_name(&found);
    assert_eq!(s["off"].config.enabled, Some(false));
    assert_eq!(s["shared"].config.enabled, None);
    assert_eq!(
        s["fs"].config,
        McpServerConfig {
            command: Some("npx".into()),
            args: vec!["-y".into(), "server-fs".into(), "/tmp".into()],
            env: env(&[("LOG_LEVEL", "warn")]),
            ..Default::default()
        }
    );
    assert!(s["fs"].notes.is_empty(), "{:?}", s["fs"].notes);
    assert_eq!(
        s["docs"].config,
        McpServerConfig {
            url: Some("https://mcp.example.com/mcp".into()),
            headers: env(&[("X-Team", "web")]),
            ..Default::default()
        }
    );
    assert_eq!(
        s["shared"].config.command.as_deref(),
        Some("project-version")
    );
    let notes = s["shared"].notes.join("\n");
    assert!(notes.contains("shared by the project"), "{notes}");
    assert!(notes.contains("also in"), "{notes}");
    assert!(
        s["local"].notes[0]
            .contains("only; under [mcp_servers] Bosun offers it in every repository"),
        "{:?}",
        s["local"].notes
    );
    assert!(
        s["local"].origin.contains("projects["),
        "{}",
        s["local"].origin
    );
    assert_eq!(found.looked.len(), 2, "{:?}", found.looked);
    for server in &found.servers {
        server.config.validate(&server.name, "test").unwrap();
    }
}

#[test]
fn claude_config_dir_replaces_home() {
    let mut d = dirs();
    let other = home(&d).join("claude-dir");
    write(
        &other.join(".claude.json"),
        r#"{"mcpServers": {"a": {"command": "a"}}}"#,
    );
    write(
        &home(&d).join(".claude.json"),
        r#"{"mcpServers": {"b": {"command": "b"}}}"#,
    );
    d.places.claude_config_dir = Some(other);
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    assert_eq!(found.servers.len(), 1);
    assert_eq!(found.servers[0].name, "a");
}

#[test]
fn claude_variables_map_to_names_passed_from_the_environment() {
    let d = dirs();
    write(
        &home(&d).join(".claude.json"),
        r#"{"mcpServers": {
            "gh": {"command": "gh-mcp", "args": ["--root", "${HOME}/src"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "REGION": "${REGION:-eu}",
                           "API_BASE": "${OTHER_BASE}", "MODE": "fast"}},
            "docs": {"type": "http", "url": "https://docs.example.com/mcp",
                     "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Org": "${ORG}"}}
        }}"#,
    );
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    let s = by_name(&found);
    let gh = &s["gh"];
    assert_eq!(gh.config.env, env(&[("MODE", "fast")]));
    assert_eq!(gh.config.env_vars, ["API_BASE", "GITHUB_TOKEN", "REGION"]);
    let notes = gh.notes.join("\n");
    assert!(notes.contains("args holds ${HOME}"), "{notes}");
    assert!(
        notes.contains("REGION is passed from your environment; the default"),
        "{notes}"
    );
    assert!(
        notes.contains("API_BASE was made from ${OTHER_BASE}")
            && notes.contains("could not be mapped"),
        "{notes}"
    );
    assert!(
        !notes.contains("GITHUB_TOKEN"),
        "the same name maps silently: {notes}"
    );
    assert!(!notes.contains("eu"), "a default is not shown: {notes}");

    let docs = &s["docs"];
    assert_eq!(
        docs.config.bearer_token_env_var.as_deref(),
        Some("DOCS_TOKEN")
    );
    assert!(docs.config.headers.is_empty());
    assert!(
        docs.notes.join("\n").contains("X-Org was made from ${ORG}"),
        "{:?}",
        docs.notes
    );
    gh.config.validate("gh", "t").unwrap();
    docs.config.validate("docs", "t").unwrap();
}

#[test]
fn secret_looking_literals_are_passed_by_name_and_never_copied() {
    let d = dirs();
    let secrets = [
        "sk-ant-api03-abcdefghijklmnop",
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
        "xoxb-1234-5678-abcdef",
        "0123456789abcdef0123456789abcdef01234567",
        "dGhpcyBpcyBhIHNlY3JldCB0b2tlbiAxMjM0NTY3OA==",
    ];
    write(
        &home(&d).join(".claude.json"),
        &serde_json::json!({"mcpServers": {
            "s": {"command": "srv", "env": {
                "OPENAI_API_KEY": "plain-but-named-secret",
                "A": secrets[0], "B": secrets[1], "C": secrets[2], "D": secrets[3], "E": secrets[4],
                "PATH_EXTRA": "/usr/local/lib/some/long/path/that/is/not/a/secret/at/all",
                "COLOR": "never"
            }},
            "h": {"type": "http", "url": "https://h.example.com/mcp", "headers": {
                "Authorization": "Bearer sk-live-1234567890abcdef", "X-Api-Key": "abc",
                "Accept-Language": "en"
            }}
        }})
        .to_string(),
    );
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    let s = by_name(&found);
    assert_eq!(
        s["s"].config.env,
        env(&[
            ("COLOR", "never"),
            (
                "PATH_EXTRA",
                "/usr/local/lib/some/long/path/that/is/not/a/secret/at/all"
            )
        ])
    );
    assert_eq!(
        s["s"].config.env_vars,
        ["A", "B", "C", "D", "E", "OPENAI_API_KEY"]
    );
    let notes = s["s"].notes.join("\n");
    assert!(
        notes.contains("set OPENAI_API_KEY in your environment (the value was not copied)"),
        "{notes}"
    );
    assert_eq!(s["h"].config.headers, env(&[("Accept-Language", "en")]));
    assert_eq!(s["h"].config.bearer_token_env_var, None);
    let all = format!("{found:?}");
    for secret in secrets
        .iter()
        .chain(&["plain-but-named-secret", "sk-live-1234567890abcdef"])
    {
        assert!(!all.contains(secret), "{secret} leaked: {all}");
    }
}

#[test]
fn an_sse_server_is_imported_as_a_url_with_a_note() {
    let d = dirs();
    write(
        &d.places.cwd.join(".mcp.json"),
        r#"{"mcpServers": {"events": {"type": "sse", "url": "https://sse.example.com/sse"}}}"#,
    );
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    let s = &found.servers[0];
    assert_eq!(s.config.url.as_deref(), Some("https://sse.example.com/sse"));
    assert!(s.notes[0].contains("SSE"), "{:?}", s.notes);
}

#[test]
fn claude_entries_that_cannot_be_read_are_left_out_with_why() {
    let d = dirs();
    write(
        &home(&d).join(".claude.json"),
        r#"{"mcpServers": {"ok": {"command": "x"}, "odd": {"type": "websocket", "url": "ws://x"},
            "no": {"args": 3}, "my server.v2": {"command": "y", "timeout": 5}}}"#,
    );
    let found = find(&ImportSource::Claude, &d.places).unwrap();
    let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["my-server-v2", "ok"]);
    assert!(found.servers[0].notes[0].contains("renamed from \"my server.v2\""));
    assert!(found.servers[0].notes[1].contains("dropped (Bosun has no equivalent): timeout"));
    let bad: Vec<(&str, &str)> = found
        .unreadable
        .iter()
        .map(|u| (u.name.as_str(), u.reason.as_str()))
        .collect();
    assert_eq!(
        bad,
        [
            ("no", "`args` must be a list of strings"),
            (
                "odd",
                "`type` \"websocket\" is not one Bosun knows (stdio, http, sse)"
            ),
        ]
    );
}

#[test]
fn codex_servers_map_what_bosun_has_and_note_what_it_drops() {
    let d = dirs();
    write(
        &home(&d).join(".codex/config.toml"),
        r#"model = "o3"

[mcp_servers.fs]
command = "npx"
args = ["-y", "server-fs"]
env = { LOG = "1", GITLAB_TOKEN = "glpat-abcdefghijklmnop" }
env_vars = ["HOME_DIR"]
cwd = "/srv"
startup_timeout_ms = 2500
tool_timeout_sec = 30.5
enabled_tools = ["read", "list"]

[mcp_servers.remote]
url = "https://r.example.com/mcp"
bearer_token_env_var = "R_TOKEN"
http_headers = { "X-Region" = "eu" }
env_http_headers = { "X-Org" = "ORG_ID" }
disabled_tools = ["delete"]
enabled = false
"#,
    );
    let found = find(&ImportSource::Codex, &d.places).unwrap();
    let s = by_name(&found);
    assert_eq!(
        s["fs"].config,
        McpServerConfig {
            command: Some("npx".into()),
            args: vec!["-y".into(), "server-fs".into()],
            env: env(&[("LOG", "1")]),
            env_vars: vec!["GITLAB_TOKEN".into(), "HOME_DIR".into()],
            startup_timeout_sec: Some(3),
            tool_timeout_sec: Some(31),
            ..Default::default()
        }
    );
    let notes = s["fs"].notes.join("\n");
    assert!(notes.contains("dropped cwd = \"/srv\""), "{notes}");
    assert!(
        notes.contains("dropped enabled_tools = [read, list]"),
        "{notes}"
    );
    assert!(
        notes.contains("set GITLAB_TOKEN in your environment"),
        "{notes}"
    );
    assert_eq!(
        s["remote"].config,
        McpServerConfig {
            url: Some("https://r.example.com/mcp".into()),
            headers: env(&[("X-Region", "eu")]),
            bearer_token_env_var: Some("R_TOKEN".into()),
            enabled: Some(false),
            ..Default::default()
        }
    );
    let notes = s["remote"].notes.join("\n");
    assert!(
        notes.contains("dropped env_http_headers (X-Org from ORG_ID)"),
        "{notes}"
    );
    assert!(
        notes.contains("dropped disabled_tools = [delete]"),
        "{notes}"
    );
    assert!(!format!("{found:?}").contains("glpat-abcdefghijklmnop"));
}

#[test]
fn no_codex_config_is_nothing_found_with_where_it_looked() {
    let d = dirs();
    let found = find(&ImportSource::Codex, &d.places).unwrap();
    assert!(found.servers.is_empty());
    assert!(
        found.looked[0].contains(".codex/config.toml"),
        "{:?}",
        found.looked
    );
}

#[test]
fn a_file_is_read_as_json_or_toml_by_its_content() {
    let d = dirs();
    let json = home(&d).join("servers.txt");
    write(&json, r#"  {"mcpServers": {"a": {"command": "a"}}}"#);
    let found = find(&ImportSource::File(json), &d.places).unwrap();
    assert_eq!(found.servers[0].config.command.as_deref(), Some("a"));
    let toml_file = home(&d).join("servers.conf");
    write(
        &toml_file,
        "[mcp_servers.b]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { X = \"y\" }\n",
    );
    let found = find(&ImportSource::File(toml_file), &d.places).unwrap();
    assert_eq!(found.servers[0].config.headers, env(&[("X", "y")]));
}

#[test]
fn a_broken_or_missing_file_is_an_error_naming_it_and_where() {
    let d = dirs();
    let bad = home(&d).join("bad.json");
    write(&bad, "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}");
    let e = find(&ImportSource::File(bad.clone()), &d.places)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("{} is not valid JSON", bad.display())),
        "{e}"
    );
    assert!(e.contains("line 1 column"), "{e}");

    let bad = home(&d).join("bad.toml");
    write(
        &bad,
        "[mcp_servers.a]\ncommand = \"x\"\nenv = { TOKEN = sk-unquoted-secret }\n",
    );
    let e = find(&ImportSource::File(bad.clone()), &d.places)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("{} is not valid TOML", bad.display())),
        "{e}"
    );
    assert!(e.contains("at line 3, column"), "{e}");
    assert!(
        !e.contains("sk-unquoted-secret"),
        "the line is not quoted: {e}"
    );

    let e = find(&ImportSource::File(home(&d).join("nope.json")), &d.places)
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope.json: no such file"), "{e}");

    write(&home(&d).join(".claude.json"), "{ not json");
    let e = find(&ImportSource::Claude, &d.places)
        .unwrap_err()
        .to_string();
    assert!(e.contains(".claude.json is not valid JSON"), "{e}");
}

#[test]
fn names_are_sanitised_and_kept_unique() {
    assert_eq!(sanitise_name("my.server/v2"), "my-server-v2");
    assert_eq!(sanitise_name(""), "server");
    assert_eq!(sanitise_name(&"x".repeat(50)).len(), 40);
    let mk = |n: &str| ImportedServer {
        name: String::new(),
        original_name: n.into(),
        origin: "o".into(),
        config: McpServerConfig::default(),
        notes: Vec::new(),
    };
    let mut servers = vec![mk("a-b"), mk("a.b"), mk("a b")];
    give_unique_names(&mut servers);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a-b", "a-b-2", "a-b-3"]);
    assert!(servers[0].notes.is_empty());
    assert!(servers[1].notes[0].contains("renamed from \"a.b\""));
}

#[test]
fn token_shapes() {
    for yes in [
        "sk-proj-abcdefghij",
        "ghp_abcdefghijklmnop",
        "AKIAIOSFODNN7EXAMPLE",
        "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6",
    ] {
        assert!(values::value_looks_secret(yes), "{yes}");
    }
    for no in [
        "warn",
        "true",
        "https://example.com/a/very/long/url/path/1234567890",
        "/home/user/projects/some-long-directory-name-2024",
        "sk-",
        "eu-west-1",
    ] {
        assert!(!values::value_looks_secret(no), "{no}");
    }
}
