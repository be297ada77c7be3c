//! Git commands that may print (or extract) what the object store holds.
//!
//! A command's sandbox hides read-denied files from the file system, but not from git's object
//! store: a `.env` that was committed is a blob any `git show`, `git cat-file`, `git log -p`,
//! `git archive`, an alias or a `--format=%(raw)` can print, and the store cannot be filtered per
//! object. So when the task's base holds read-denied files, only the git uses listed here
//! ([`git_prints_objects`] says which others a command makes) run: status, staging and
//! committing, branches, and logs and diffs that print names and counts. It is an allowlist
//! because the ways to print a blob are many; it cannot see git run by a program the command
//! starts (a script, a Makefile, inline code that builds the command at run time; literal
//! commands in `python -c '…'` and the like are seen), which is why the task also gets a
//! warning naming the committed files: remove them from the history to be safe.

use crate::commands::{self, Part};

/// Subcommands that print names, ids, counts or the task's own state, never file content.
const SAFE: &[&str] = &[
    "status",
    "add",
    "commit",
    "rm",
    "mv",
    "branch",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "log",
    "shortlog",
    "rev-list",
    "describe",
    "show-ref",
    "merge-base",
    "name-rev",
    "count-objects",
    "version",
    "help",
    "diff",
    "init",
    "remote",
    "symbolic-ref",
];

/// Options of `log`/`diff`/`show`-like subcommands that print content or search it.
fn prints_content(arg: &str) -> bool {
    matches!(
        arg,
        "-p" | "-u"
            | "--patch"
            | "--patch-with-stat"
            | "--patch-with-raw"
            | "--cc"
            | "-c"
            | "--full-diff"
            | "--binary"
            | "--color-words"
            | "--word-diff"
            | "--check"
            | "-m"
            | "--remerge-diff"
            | "--textconv"
            | "--ext-diff"
    ) || [
        "-U",
        "--unified",
        "-L",
        "-G",
        "-S",
        "--pickaxe",
        "--word-diff=",
        "--color-words=",
        "--output",
        "--format",
        "--pretty",
        "--find-object",
        "--diff-merges",
        "--dd",
    ]
    .iter()
    .any(|p| arg.starts_with(p))
}

/// Options that make `diff` print names or counts only.
const SUMMARY_ONLY: &[&str] = &[
    "--stat",
    "--numstat",
    "--shortstat",
    "--dirstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--quiet",
    "--raw",
    "--no-patch",
    "-s",
];

/// Global options of git that take a value as the next argument.
const VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--exec-path",
    "--attr-source",
];

/// When `command` runs git in a way that can print the content of stored objects (anything
/// but the uses listed in [`SAFE`], with their content-printing options refused), the git
/// invocation as text (for the denial's reason), else None.
pub fn git_prints_objects(command: &str) -> Option<String> {
    commands::parts(command).into_iter().find_map(|part| {
        let Part::Run { argv, .. } = part else {
            return None;
        };
        let program = argv.first()?;
        if program.rsplit('/').next() != Some("git") {
            return None;
        }
        let (sub, args) = subcommand(&argv[1..]);
        let Some(sub) = sub else {
            // `git --version`, `git --help`: prints nothing stored.
            return None;
        };
        let summary = args.iter().any(|a| {
            SUMMARY_ONLY.contains(&a.as_str())
                || a.starts_with("--stat=")
                || a.starts_with("--dirstat=")
        });
        let content = match sub {
            "log" | "shortlog" | "rev-list" | "diff" => args.iter().any(|a| prints_content(a)),
            "commit" | "status" => args
                .iter()
                .any(|a| matches!(a.as_str(), "-v" | "--verbose" | "-vv")),
            _ => false,
        };
        let safe = SAFE.contains(&sub)
            && !content
            && (sub != "diff" || summary)
            && !(sub == "branch" && args.iter().any(|a| a.starts_with("--format")));
        (!safe).then(|| format!("git {sub}"))
    })
}

/// git's subcommand (past its global options, however spelled) and the arguments after it.
fn subcommand(args: &[String]) -> (Option<&str>, &[String]) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !arg.starts_with('-') {
            return (Some(arg.as_str()), &args[i + 1..]);
        }
        i += if VALUE_OPTIONS.contains(&arg.as_str()) {
            2
        } else {
            1
        };
    }
    (None, &[])
}

/// For an argument of git's `<rev>:<path>` form (`HEAD:.env`, `:.env`, `:0:.env`,
/// `main~2:config/.env`), the path part(s) to judge against the read rules.
pub(crate) fn revision_paths(arg: &str) -> Vec<&str> {
    if arg.starts_with('-') || arg.contains("://") || !arg.contains(':') {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some((_, after_first)) = arg.split_once(':') {
        out.push(after_first);
    }
    if let Some((_, after_last)) = arg.rsplit_once(':')
        && !out.contains(&after_last)
    {
        out.push(after_last);
    }
    out.into_iter()
        .map(|p| p.trim_start_matches("./"))
        .filter(|p| !p.is_empty() && !p.starts_with('/'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_print_stored_content_are_found_through_wrappers() {
        for command in [
            "git show HEAD:.env",
            "git show abc123",
            "git cat-file -p 1234abcd",
            "git cat-file --batch-all-objects --batch",
            "git log -p",
            "git log --patch -- .env",
            "git log -U3",
            "git diff HEAD~1",
            "git diff",
            "git diff --stat -p",
            "git grep -e KEY $(git rev-list --all)",
            "git archive HEAD | tar -x -C $TMPDIR",
            "cd src && git --no-pager show HEAD:../.env",
            "bash -c 'git cat-file blob HEAD:.env'",
            "git stash show -p",
            "git worktree add $TMPDIR/x",
            "env GIT_PAGER=cat git log -p",
            "git --no-optional-locks show abc123",
            "git --namespace=x show abc123",
            "git --literal-pathspecs cat-file -p abc123",
            "git --no-replace-objects cat-file blob abc123",
            "git -C . -c core.pager=cat show HEAD",
            "git diff --exit-code 4b825dc HEAD",
            "git tag x abc123 && git for-each-ref '--format=%(raw)'",
            "git config alias.peek 'cat-file -p' && git peek abc123",
            "git update-index --cacheinfo 100644,abc123,leak.txt",
            "git log -G'^KEY=s'",
            "git diff --check",
        ] {
            assert!(git_prints_objects(command).is_some(), "{command}");
        }
    }

    #[test]
    fn status_logs_and_summaries_stay_usable() {
        for command in [
            "git status",
            "git status --short",
            "git log --oneline -5",
            "git diff --stat",
            "git diff --name-only HEAD~1",
            "git --no-pager diff --stat",
            "git -C sub status",
            "git add -A && git commit -m x",
            "git branch",
            "git rev-parse HEAD",
            "git ls-files",
            "echo git show HEAD:.env",
        ] {
            assert_eq!(git_prints_objects(command), None, "{command}");
        }
    }

    #[test]
    fn revision_paths_are_the_parts_after_the_colon() {
        assert_eq!(revision_paths("HEAD:.env"), vec![".env"]);
        assert_eq!(revision_paths(":.env"), vec![".env"]);
        assert_eq!(revision_paths(":0:.env"), vec!["0:.env", ".env"]);
        assert_eq!(revision_paths("main~2:./config/.env"), vec!["config/.env"]);
        assert_eq!(revision_paths("https://x.test/a:b"), Vec::<&str>::new());
        assert_eq!(revision_paths("--format=%H:%s"), Vec::<&str>::new());
        assert_eq!(revision_paths("README.md"), Vec::<&str>::new());
    }
}

#[cfg(test)]
mod through_interpreters {
    use super::git_prints_objects;

    #[test]
    fn git_run_by_inline_code_is_judged_too() {
        for command in [
            r#"python3 -c 'import subprocess; subprocess.run(["git", "cat-file", "-p", "abc123"])'"#,
            r#"node -e 'require("child_process").execSync("git show HEAD:.env")'"#,
            "perl -e 'system(\"git log -p\")'",
        ] {
            assert!(git_prints_objects(command).is_some(), "{command}");
        }
    }
}
