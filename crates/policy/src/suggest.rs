//! General rules to offer when a person approves a tool call ("always allow …").

use bosun_protocol::ToolAction;

use crate::commands::{self, Part};
use crate::paths::{Location, locate};

/// Rules to offer on approval, most general first: `node a.mjs` → `node *.mjs`, `node a.mjs`;
/// `npm install` → `npm install`; a write to `src/a/b.rs` → `src/a/**`, `src/**`, `src/a/b.rs`.
/// Command suggestions are `commands.allow` patterns, path suggestions `paths.write` globs,
/// host suggestions `network.domains` entries (the exact host first), MCP suggestions
/// `mcp.allow` patterns (the exact `server/tool` first, then `server/*`).
pub fn suggestions(action: &ToolAction) -> Vec<String> {
    let mut out = Vec::new();
    match action {
        ToolAction::Command { command } => {
            for part in commands::parts(command) {
                if let Part::Run { argv, .. } = part {
                    push_all(&mut out, for_argv(&argv));
                }
            }
        }
        ToolAction::Write { paths } | ToolAction::Read { paths } => {
            for path in paths {
                push_all(&mut out, for_path(path));
            }
        }
        ToolAction::Network { host, .. } => push_all(&mut out, for_host(host)),
        ToolAction::Internal
        | ToolAction::SpendRate { .. }
        | ToolAction::UnpricedModel { .. }
        | ToolAction::Summary { .. }
        | ToolAction::PlanNodeFailed { .. }
        | ToolAction::McpServer { .. } => {}
        ToolAction::Mcp { server, tool, .. } => {
            push_all(
                &mut out,
                vec![format!("{server}/{tool}"), format!("{server}/*")],
            );
        }
    }
    out
}

/// `[network] domains` entries for a host, the exact host first (the safest default):
/// `files.pythonhosted.org` → `files.pythonhosted.org`, `*.pythonhosted.org`.
fn for_host(host: &str) -> Vec<String> {
    let host = crate::normalize_host(host);
    let mut out = vec![host.clone()];
    let labels: Vec<&str> = host.split('.').collect();
    if host.parse::<std::net::IpAddr>().is_err() && labels.len() > 2 {
        out.push(format!("*.{}", labels[1..].join(".")));
    }
    out
}

fn push_all(out: &mut Vec<String>, items: Vec<String>) {
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
}

fn is_subcommand(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
        && !word.starts_with('-')
}

/// Suggestions for one program run.
pub(crate) fn for_argv(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(program) = argv.first() else {
        return out;
    };
    let args = &argv[1..];
    // A script argument with an extension generalises to every such script.
    if let Some((i, ext)) = args.iter().enumerate().find_map(|(i, a)| {
        let name = a.rsplit('/').next()?;
        let (stem, ext) = name.rsplit_once('.')?;
        (!a.starts_with('-') && !stem.is_empty() && is_subcommand(ext)).then_some((i, ext))
    }) {
        let mut words: Vec<String> = vec![program.clone()];
        words.extend(args[..i].iter().cloned());
        words.push(format!("*.{ext}"));
        out.push(words.join(" "));
    }
    // `npm install lodash` → `npm install`; `git commit -m x` → `git commit`.
    if let Some(sub) = args.first()
        && is_subcommand(sub)
        && args.len() > 1
    {
        out.push(format!("{program} {sub}"));
    }
    let exact: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    let exact = exact.join(" ");
    if exact.len() <= 200 && !out.contains(&exact) {
        out.push(exact);
    }
    out
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%*".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn for_path(path: &str) -> Vec<String> {
    let Location::Inside(clean) = locate(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let dirs: Vec<&str> = clean.split('/').collect();
    if dirs.len() > 1 {
        let parent = dirs[..dirs.len() - 1].join("/");
        out.push(format!("{parent}/**"));
        if dirs.len() > 2 {
            out.push(format!("{}/**", dirs[0]));
        }
    }
    out.push(clean);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(c: &str) -> Vec<String> {
        suggestions(&ToolAction::Command { command: c.into() })
    }

    #[test]
    fn commands_generalise_scripts_and_subcommands() {
        assert_eq!(cmd("node a.mjs"), vec!["node *.mjs", "node a.mjs"]);
        assert_eq!(cmd("npm install"), vec!["npm install"]);
        assert_eq!(
            cmd("npm install lodash"),
            vec!["npm install", "npm install lodash"]
        );
        assert_eq!(
            cmd("python scripts/gen.py --out x"),
            vec!["python *.py", "python scripts/gen.py --out x"]
        );
        assert_eq!(
            cmd("git commit -m 'fix it'"),
            vec!["git commit", "git commit -m 'fix it'"]
        );
    }

    #[test]
    fn paths_generalise_to_their_directories() {
        let write = |p: &str| {
            suggestions(&ToolAction::Write {
                paths: vec![p.into()],
            })
        };
        assert_eq!(
            write("src/a/b.rs"),
            vec!["src/a/**", "src/**", "src/a/b.rs"]
        );
        assert_eq!(write("README.md"), vec!["README.md"]);
        assert!(write("/etc/passwd").is_empty());
    }
}
