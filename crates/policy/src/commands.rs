//! Command rules: argv-prefix patterns with `*` wildcards and normalised flags, and the
//! see-through of wrappers (`sudo`, `env`, `bash -c`, `xargs`, `timeout`, …) that run another
//! command.

use std::collections::BTreeSet;

use crate::interpreters::{self, Language};
use crate::shell::{self, Input, Redirect, SimpleCommand, Word};

/// A command pattern such as `git push`, `npm run test*` or `rm -rf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    /// Program and positional words, each may contain `*`.
    words: Vec<String>,
    /// Normalised flags that must all be present (`-rf` is `{-r, -f}`).
    flags: BTreeSet<String>,
}

impl CommandPattern {
    pub fn parse(pattern: &str) -> Result<CommandPattern, String> {
        let tokens: Vec<String> = pattern.split_whitespace().map(str::to_string).collect();
        let Some(program) = tokens.first() else {
            return Err("an empty command pattern matches nothing; remove it".into());
        };
        if program.starts_with('-') {
            return Err(format!(
                "`{pattern}` must start with a program name, not a flag"
            ));
        }
        let (mut words, flags) = normalise(&tokens);
        words.insert(0, program.clone());
        Ok(CommandPattern { words, flags })
    }

    /// How many words (program and positional words) the pattern has.
    pub(crate) fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Its `i`th word, the program first.
    pub(crate) fn word(&self, i: usize) -> Option<&str> {
        self.words.get(i).map(String::as_str)
    }

    /// Whether the pattern requires this flag (`python -c` requires `-c`).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(flag)
    }

    /// How specific the pattern is: more words and flags match fewer commands.
    pub fn specificity(&self) -> usize {
        self.words.len() + self.flags.len()
    }

    pub fn matches(&self, argv: &[String]) -> bool {
        let Some(first) = self.words.first() else {
            return false;
        };
        let Some(arg0) = argv.first() else {
            return false;
        };
        let base = arg0.rsplit('/').next().unwrap_or(arg0);
        if !wildcard(first, arg0) && !wildcard(first, base) {
            return false;
        }
        let (positional, flags) = normalise(argv);
        self.words.len() - 1 <= positional.len()
            && self.words[1..]
                .iter()
                .zip(&positional)
                .all(|(p, w)| wildcard(p, w))
            && self.flags.is_subset(&flags)
    }
}

/// `*` matches any run of characters within one word.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Splits `argv[1..]` into positional words and a set of normalised flags: clusters split
/// (`-rf` → `-r`, `-f`), `--x=v` → `--x`, common long forms mapped to their short letters.
fn normalise(argv: &[String]) -> (Vec<String>, BTreeSet<String>) {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    let split_clusters = !matches!(program, Some("find" | "java" | "go"));
    let mut positional = Vec::new();
    let mut flags = BTreeSet::new();
    let mut only_positional = false;
    for arg in argv.iter().skip(1) {
        if only_positional || !arg.starts_with('-') || arg == "-" {
            positional.push(arg.clone());
        } else if arg == "--" {
            only_positional = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            let flag = match name {
                "recursive" => "-r".to_string(),
                "force" => "-f".to_string(),
                other => format!("--{other}"),
            };
            flags.insert(flag);
        } else if split_clusters {
            for c in arg.chars().skip(1) {
                let c = if c == 'R' { 'r' } else { c };
                flags.insert(format!("-{c}"));
            }
        } else {
            flags.insert(arg.clone());
        }
    }
    (positional, flags)
}

/// What one part of a command line amounts to for the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// A program run with these arguments; `via` says which inline code runs it (`run by
    /// `os.system` in the inline Python code of `python3``), `None` for the command line itself.
    Run {
        argv: Vec<String>,
        via: Option<String>,
    },
    /// An interpreter running inline code (`python -c`, `node -e`, a here-document fed to
    /// `perl`): the code can start programs in ways Bosun cannot read.
    Inline {
        /// The interpreter's command, e.g. `python3 -c "…"`.
        argv: Vec<String>,
        /// How the code is given: `-c`, `-e`, `--eval`, or `<<` for a here-document.
        flag: String,
        language: &'static str,
    },
    /// Something Bosun cannot see through; the reason says why (it asks).
    Opaque { reason: String },
    /// A file redirection.
    Redirect(Redirect),
}

/// Parses a command line and sees through wrappers, returning every part that would run.
pub fn parts(command: &str) -> Vec<Part> {
    parts_at(command, 0)
}

pub(crate) fn parts_at(command: &str, depth: usize) -> Vec<Part> {
    match shell::parse_at_depth(command, depth) {
        Ok(cmds) => {
            if cmds.is_empty() {
                return vec![Part::Opaque {
                    reason: "the command is empty".into(),
                }];
            }
            let mut out = Vec::new();
            for cmd in cmds {
                simple(&cmd, depth, &mut out);
            }
            out
        }
        Err(reason) => vec![Part::Opaque {
            reason: format!("the command could not be parsed ({reason})"),
        }],
    }
}

fn simple(cmd: &SimpleCommand, depth: usize, out: &mut Vec<Part>) {
    out.extend(cmd.redirects.iter().cloned().map(Part::Redirect));
    if let Some(part) = risky_assignment(&cmd.assignments) {
        out.push(part);
    }
    unwrap(&cmd.argv, depth, out, cmd.stdin.as_ref());
}

/// Variables that change which program runs or what it loads, so a command prefixed with them
/// is not the command it looks like.
const RISKY_VARIABLES: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUSTC_WRAPPER",
];

fn risky_assignment(words: &[Word]) -> Option<Part> {
    words.iter().find_map(|w| {
        let (name, _) = w.text.split_once('=')?;
        let risky = RISKY_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_");
        risky.then(|| Part::Opaque {
            reason: format!("it sets `{name}`, which changes what the command runs"),
        })
    })
}

/// `git -c KEY=VALUE` keys that cannot make git run another program.
fn harmless_git_config(key_value: &str) -> bool {
    let key = key_value
        .split('=')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    key.starts_with("user.")
        || key.starts_with("color.")
        || key.starts_with("advice.")
        || matches!(
            key.as_str(),
            "core.quotepath"
                | "init.defaultbranch"
                | "commit.gpgsign"
                | "tag.gpgsign"
                | "core.autocrlf"
                | "pull.rebase"
                | "merge.conflictstyle"
                | "log.showsignature"
        )
}

fn texts(words: &[Word]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}

/// Skips options of a wrapper; `with_value` lists short options that take the next word.
fn skip_options<'a>(words: &'a [Word], with_value: &[&str]) -> &'a [Word] {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return words.get(i + 1..).unwrap_or(&[]);
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += if with_value.contains(&t) { 2 } else { 1 };
    }
    words.get(i..).unwrap_or(&[])
}

fn skip_assignments(words: &[Word]) -> &[Word] {
    let n = words
        .iter()
        .take_while(|w| {
            w.text
                .split_once('=')
                .is_some_and(|(name, _)| !name.is_empty() && !name.starts_with('-'))
        })
        .count();
    &words[n..]
}

fn run(words: &[Word]) -> Part {
    Part::Run {
        argv: texts(words),
        via: None,
    }
}

/// Sees through the wrappers in one command (`words`, fed `stdin` by a here-document).
pub(crate) fn unwrap(words: &[Word], depth: usize, out: &mut Vec<Part>, stdin: Option<&Input>) {
    let after = skip_assignments(words);
    if let Some(part) = risky_assignment(&words[..words.len() - after.len()]) {
        out.push(part);
    }
    let words = after;
    let Some(first) = words.first() else { return };
    if first.dynamic {
        out.push(Part::Opaque {
            reason: format!(
                "the program `{}` is only known when the command runs",
                first.text
            ),
        });
        return;
    }
    if depth > 16 {
        out.push(Part::Opaque {
            reason: "the command wraps other commands too deeply to follow".into(),
        });
        return;
    }
    let program = first.text.rsplit('/').next().unwrap_or(&first.text);
    let rest = &words[1..];
    if let Some(language) = Language::of(program) {
        interpreters::parts(language, words, stdin, depth, out);
        return;
    }
    match program {
        "env" => {
            let after = skip_options(rest, &["-u", "-C", "-S"]);
            let inner = skip_assignments(after);
            if let Some(part) = risky_assignment(&after[..after.len() - inner.len()]) {
                out.push(part);
            }
            if inner.is_empty() {
                out.push(run(words));
            } else {
                unwrap(inner, depth + 1, out, stdin);
            }
        }
        "sudo" | "doas" => {
            out.push(run(words));
            let opts = ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"];
            unwrap(
                skip_assignments(skip_options(rest, &opts)),
                depth + 1,
                out,
                stdin,
            );
        }
        "nohup" | "exec" | "time" | "setsid" | "stdbuf" | "builtin" => {
            unwrap(
                skip_options(rest, &["-a", "-i", "-o", "-e"]),
                depth + 1,
                out,
                stdin,
            );
        }
        "command" if !rest.iter().any(|w| w.text == "-v" || w.text == "-V") => {
            unwrap(skip_options(rest, &[]), depth + 1, out, stdin);
        }
        "nice" => unwrap(skip_options(rest, &["-n"]), depth + 1, out, stdin),
        // Environment managers that run a command: both the manager's rules and the
        // command's apply.
        "poetry" | "pipenv" | "hatch" | "pdm" | "uv" | "rye" | "conda" | "mamba" | "micromamba"
        | "bundle"
            if rest
                .first()
                .is_some_and(|w| w.text == "run" || (program == "bundle" && w.text == "exec")) =>
        {
            out.push(run(words));
            let opts = [
                "--with",
                "--python",
                "-p",
                "--project",
                "--directory",
                "--package",
                "--extra",
                "--group",
                "--env-file",
                "--index",
                "-e",
                "-n",
                "--name",
                "--prefix",
            ];
            unwrap(skip_options(&rest[1..], &opts), depth + 1, out, stdin);
        }
        "timeout" => {
            let after = skip_options(rest, &["-s", "-k"]);
            unwrap(after.get(1..).unwrap_or(&[]), depth + 1, out, stdin);
        }
        "xargs" => {
            let opts = ["-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a"];
            let inner = skip_options(rest, &opts);
            if inner.is_empty() {
                out.push(Part::Run {
                    argv: vec!["echo".into()],
                    via: None,
                });
            } else {
                // xargs reads its own input: the command it runs gets none of it.
                unwrap(inner, depth + 1, out, None);
            }
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" => shell_wrapper(words, depth, out, stdin),
        "eval" => {
            if rest.iter().any(|w| w.dynamic) {
                out.push(Part::Opaque {
                    reason: "`eval` runs text that is only known when the command runs".into(),
                });
            } else {
                out.extend(parts_at(&texts(rest).join(" "), depth + 1));
            }
        }
        "find" => {
            out.push(run(words));
            let mut i = 0;
            while i < rest.len() {
                if matches!(
                    rest[i].text.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir"
                ) {
                    let end = rest[i + 1..]
                        .iter()
                        .position(|w| w.text == ";" || w.text == "+")
                        .map_or(rest.len(), |p| i + 1 + p);
                    let inner: Vec<Word> = rest[i + 1..end]
                        .iter()
                        .filter(|w| w.text != "{}")
                        .cloned()
                        .collect();
                    unwrap(&inner, depth + 1, out, None);
                    i = end;
                }
                i += 1;
            }
        }
        "git" => {
            let mut argv = vec![first.text.clone()];
            let mut i = 0;
            while let Some(w) = rest.get(i) {
                match w.text.as_str() {
                    "-c" => {
                        let pair = rest.get(i + 1).map_or("", |w| w.text.as_str());
                        if !harmless_git_config(pair) {
                            out.push(Part::Opaque {
                                reason: format!("`git -c {pair}` can make git run another program"),
                            });
                        }
                        i += 2;
                    }
                    "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
                    t if t.starts_with("--git-dir=")
                        || t.starts_with("--work-tree=")
                        || t == "--no-pager"
                        || t == "-P"
                        || t == "--bare"
                        || t == "--paginate"
                        || t == "-p" =>
                    {
                        i += 1
                    }
                    _ => break,
                }
            }
            argv.extend(texts(rest.get(i..).unwrap_or(&[])));
            out.push(Part::Run { argv, via: None });
        }
        "export" | "declare" | "typeset" | "readonly" | "local" => {
            if let Some(part) = risky_assignment(rest) {
                out.push(part);
            }
            out.push(run(words));
        }
        _ => out.push(run(words)),
    }
}

fn shell_wrapper(words: &[Word], depth: usize, out: &mut Vec<Part>, stdin: Option<&Input>) {
    let rest = &words[1..];
    let mut i = 0;
    let mut has_c = false;
    let mut has_s = false;
    while let Some(w) = rest.get(i) {
        let t = w.text.as_str();
        if t == "--" || !t.starts_with(['-', '+']) {
            break;
        }
        if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            has_c = true;
        }
        if t.starts_with('-') && !t.starts_with("--") && t.contains('s') {
            has_s = true;
        }
        i += if t == "-o" || t == "+o" || t == "-O" {
            2
        } else {
            1
        };
    }
    if rest.get(i).is_some_and(|w| w.text == "--") {
        i += 1;
    }
    match rest.get(i) {
        Some(script) if has_c => {
            if script.dynamic {
                out.push(Part::Opaque {
                    reason: format!(
                        "`{} -c` runs a script only known when the command runs",
                        words[0].text
                    ),
                });
            } else {
                out.extend(parts_at(&script.text, depth + 1));
            }
        }
        Some(_) if !has_s => out.push(run(words)),
        _ => match stdin {
            // A here-document is the script: it is read like `-c`.
            Some(input) if !input.dynamic => out.extend(parts_at(&input.text, depth + 1)),
            Some(_) => out.push(Part::Opaque {
                reason: format!(
                    "`{}` runs a here-document that expands variables, so its script is only known when the command runs",
                    words[0].text
                ),
            }),
            None => out.push(Part::Opaque {
                reason: format!(
                    "`{}` runs a script read from its input, which Bosun cannot see",
                    words[0].text
                ),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn flags_are_normalised() {
        let p = CommandPattern::parse("rm -rf").unwrap();
        for cmd in [
            "rm -rf x",
            "rm -fr x",
            "rm -r -f x",
            "rm --recursive --force x",
            "rm -Rf x",
            "/bin/rm -f -v -R x",
        ] {
            assert!(p.matches(&argv(cmd)), "{cmd}");
        }
        assert!(!p.matches(&argv("rm -r x")));
        assert!(!p.matches(&argv("rmdir -rf x")));
    }

    #[test]
    fn wildcards_match_within_a_word() {
        let p = CommandPattern::parse("npm run test*").unwrap();
        assert!(p.matches(&argv("npm run test")));
        assert!(p.matches(&argv("npm run test:unit --watch")));
        assert!(!p.matches(&argv("npm run build")));
        assert!(!p.matches(&argv("npm")));
        assert!(wildcard("node *.mjs", "node a.mjs"));
        assert!(!wildcard("*.mjs", "a.js"));
    }

    #[test]
    fn wrappers_are_seen_through() {
        let runs = |cmd: &str| -> Vec<Vec<String>> {
            parts(cmd)
                .into_iter()
                .filter_map(|p| match p {
                    Part::Run { argv, .. } => Some(argv),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            runs("sudo -u root rm -fr /"),
            vec![argv("sudo -u root rm -fr /"), argv("rm -fr /")]
        );
        assert_eq!(
            runs("env A=1 B=2 timeout 5 nohup git push"),
            vec![argv("git push")]
        );
        assert_eq!(
            runs("bash -lc 'make && git push'"),
            vec![argv("make"), argv("git push")]
        );
        assert_eq!(runs("xargs -n 1 rm -rf"), vec![argv("rm -rf")]);
        assert_eq!(
            runs("uv run --with requests curl x"),
            vec![argv("uv run --with requests curl x"), argv("curl x")]
        );
        assert_eq!(
            runs("bundle exec rake test"),
            vec![argv("bundle exec rake test"), argv("rake test")]
        );
        assert_eq!(runs("git -C .. --no-pager push"), vec![argv("git push")]);
        assert_eq!(
            runs(r"find . -exec rm {} \;"),
            vec![argv("find . -exec rm {} ;"), argv("rm")]
        );
        assert!(matches!(parts("bash").as_slice(), [Part::Opaque { .. }]));
        assert!(matches!(parts("$CMD x").as_slice(), [Part::Opaque { .. }]));
    }
}
