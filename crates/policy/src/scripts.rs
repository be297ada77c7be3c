//! Project scripts: `make`, `npm run`, `cargo test`, `pytest`, `python tool.py` … run what the
//! repository defines (a Makefile's recipes, package.json scripts, build.rs, tests, a script
//! file), which the policy cannot see. They keep the decision their own rules give them, but a
//! network rule grants one the network only when it names the runner itself: `[network] allow
//! = ["npm"]` grants `npm install`, not `npm run build`; `allow = ["npm run build"]` or
//! `["make"]` does. (Like any command, they still reach the hosts `[network] domains` lists.)

use serde::Serialize;

use crate::commands::{self, CommandPattern, Part};
use crate::interpreters::{self, Language};

/// A command that runs the project's own scripts, which the policy does not inspect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectScript {
    /// The runner as a rule names it: `make`, `npm run`, `python setup.py`.
    pub runner: String,
    /// What it runs: "the Makefile's recipes", "the script file `tool.py`".
    pub runs: String,
}

/// Programs that run project scripts: the programs, the subcommands that do (`None`: every
/// use), and what they run.
type RunnerRow = (
    &'static [&'static str],
    Option<&'static [&'static str]>,
    &'static str,
);

const RUNNERS: &[RunnerRow] = &[
    (&["make", "gmake", "bmake"], None, "the Makefile's recipes"),
    (&["just"], None, "the justfile's recipes"),
    (&["rake"], None, "the Rakefile's tasks"),
    (&["tox"], None, "tox.ini's commands"),
    (&["nox"], None, "noxfile.py's sessions"),
    (&["invoke", "inv"], None, "tasks.py's tasks"),
    (&["task"], None, "Taskfile.yml's tasks"),
    (&["ninja"], None, "build.ninja's commands"),
    (&["gradle", "gradlew"], None, "the Gradle build scripts"),
    (&["mvn", "mvnw"], None, "the Maven build's plugins"),
    (&["bazel", "bazelisk"], None, "the BUILD rules"),
    (
        &["pytest", "py.test"],
        None,
        "the project's tests and conftest.py",
    ),
    (&["yarn"], None, "package.json scripts"),
    (&["pnpm"], None, "package.json scripts"),
    (
        &["npm"],
        Some(&[
            "run",
            "run-script",
            "rum",
            "urn",
            "test",
            "t",
            "tst",
            "start",
            "stop",
            "restart",
        ]),
        "package.json scripts",
    ),
    (&["bun"], Some(&["run", "test"]), "package.json scripts"),
    (&["deno"], Some(&["task"]), "deno.json tasks"),
    (
        &["cargo"],
        Some(&[
            "run", "r", "test", "t", "bench", "build", "b", "check", "c", "clippy", "doc", "d",
        ]),
        "build scripts (build.rs), procedural macros and the project's code",
    ),
    (
        &["go"],
        Some(&["run", "test", "generate"]),
        "the project's code and go:generate directives",
    ),
    (
        &["dotnet"],
        Some(&["run", "test", "build"]),
        "the project's build targets and code",
    ),
    (
        &["composer"],
        Some(&["run", "run-script"]),
        "composer.json scripts",
    ),
];

/// Options that take a value before the subcommand (`npm --prefix web run build`).
const VALUE_FLAGS: &[&str] = &[
    "--prefix",
    "-w",
    "--workspace",
    "-C",
    "--manifest-path",
    "--config",
    "-Z",
    "--color",
];

/// A runner found in a command's argv: the words a rule must name, and what it runs.
pub(crate) struct Runner {
    pub words: Vec<String>,
    pub runs: String,
}

fn subcommand(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if VALUE_FLAGS.contains(&a.as_str()) {
            i += 2;
        } else if a.starts_with('-') || a.starts_with('+') {
            i += 1;
        } else {
            return Some(a);
        }
    }
    None
}

/// The runner `argv` is, if it runs project scripts.
pub(crate) fn runner(argv: &[String]) -> Option<Runner> {
    let arg0 = argv.first()?;
    let program = arg0.rsplit('/').next().unwrap_or(arg0);
    let args = argv.get(1..).unwrap_or(&[]);
    for (programs, subs, runs) in RUNNERS {
        if !programs.contains(&program) {
            continue;
        }
        let mut words = vec![program.to_string()];
        if let Some(subs) = subs {
            let sub = subcommand(args)?;
            if !subs.contains(&sub) {
                return None;
            }
            words.push(sub.to_string());
        }
        return Some(Runner {
            words,
            runs: (*runs).to_string(),
        });
    }
    if let Some(language) = Language::of(program) {
        let what = interpreters::unread_program(language, argv)?;
        let setup = what == "the script file `setup.py`";
        let mut words = vec![program.to_string()];
        if setup {
            words.push("setup.py".into());
        }
        return Some(Runner { words, runs: what });
    }
    if matches!(program, "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish") {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains(['c', 's'])) {
                return None;
            }
            if !a.starts_with(['-', '+']) {
                return Some(Runner {
                    words: vec![program.to_string()],
                    runs: format!("the script file `{a}`"),
                });
            }
            i += if a == "-o" || a == "+o" || a == "-O" {
                2
            } else {
                1
            };
        }
    }
    None
}

impl CommandPattern {
    /// Whether the pattern spells out a runner's words (`npm run`, not `npm` or `*`).
    pub(crate) fn names(&self, words: &[String]) -> bool {
        self.word_count() >= words.len()
            && words.iter().enumerate().all(|(i, w)| {
                self.word(i)
                    .is_some_and(|p| p != "*" && commands::wildcard(p, w))
                    || (i == 0
                        && self
                            .word(0)
                            .is_some_and(|p| p.rsplit('/').next() == Some(w.as_str())))
            })
    }
}

/// The project scripts a command runs, each once: what `bosun policy check` reports as not
/// inspected.
pub fn project_scripts(command: &str) -> Vec<ProjectScript> {
    let mut out: Vec<ProjectScript> = Vec::new();
    for part in commands::parts(command) {
        let Part::Run { argv, .. } = part else {
            continue;
        };
        if let Some(r) = runner(&argv) {
            let script = ProjectScript {
                runner: r.words.join(" "),
                runs: r.runs,
            };
            if !out.contains(&script) {
                out.push(script);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn found(command: &str) -> Vec<(String, String)> {
        project_scripts(command)
            .into_iter()
            .map(|s| (s.runner, s.runs))
            .collect()
    }

    #[test]
    fn runners_are_found_through_wrappers_and_subcommands() {
        assert_eq!(
            found("make test && npm --prefix web run build"),
            vec![
                ("make".into(), "the Makefile's recipes".into()),
                ("npm run".into(), "package.json scripts".into())
            ]
        );
        assert_eq!(
            found("timeout 60 cargo +nightly test -p x")[0].0,
            "cargo test"
        );
        assert_eq!(found("python3 setup.py install")[0].0, "python3 setup.py");
        assert_eq!(
            found("python tools/gen.py"),
            vec![("python".into(), "the script file `tools/gen.py`".into())]
        );
        assert_eq!(found("python -m pytest")[0].1, "the module `pytest`");
        assert_eq!(found("bash ./scripts/ci.sh")[0].0, "bash");
        for none in [
            "npm install",
            "cargo fmt",
            "go vet ./...",
            "python -c 'print(1)'",
            "bash -c 'ls'",
            "ls",
        ] {
            assert_eq!(found(none), vec![], "{none}");
        }
    }

    #[test]
    fn a_pattern_names_a_runner_only_by_spelling_it_out() {
        let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        let p = |s: &str| CommandPattern::parse(s).unwrap();
        assert!(p("npm run").names(&words("npm run")));
        assert!(p("npm run build").names(&words("npm run")));
        assert!(p("npm run*").names(&words("npm run")));
        assert!(p("/usr/bin/make").names(&words("make")));
        assert!(!p("npm").names(&words("npm run")));
        assert!(!p("npm *").names(&words("npm run")));
        assert!(!p("*").names(&words("make")));
    }
}
