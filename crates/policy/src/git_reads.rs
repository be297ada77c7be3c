//! Git commands that print (or extract) what the object store holds.
//!
//! A command's sandbox hides read-denied files from the file system, but not from git's object
//! store: a `.env` that was committed is a blob any `git show`, `git cat-file`, `git log -p` or
//! `git archive` can print, and the store cannot be filtered per object. So when the task's base
//! holds read-denied files, Bosun denies the git commands listed here ([`git_prints_objects`]).
//! The list covers git's porcelain and plumbing that print or write out file content; it
//! cannot cover a program that reads pack files itself, which is why the task also gets a
//! warning naming the committed files (remove them from history to be safe).

use crate::commands::{self, Part};

/// Subcommands that print or write out stored file content whatever their options.
const ALWAYS: &[&str] = &[
    "show",
    "cat-file",
    "grep",
    "blame",
    "annotate",
    "archive",
    "bundle",
    "fast-export",
    "format-patch",
    "unpack-file",
    "checkout-index",
    "pack-objects",
    "unpack-objects",
    "worktree",
    "clone",
    "stash",
    "restore",
    "checkout",
    "switch",
    "read-tree",
    "cherry-pick",
    "revert",
    "am",
    "apply",
    "merge",
    "rebase",
    "reset",
    "notes",
    "fsck",
    "filter-branch",
    "fast-import",
    "replay",
    "difftool",
    "mergetool",
    "merge-file",
    "merge-tree",
    "instaweb",
    "daemon",
    "upload-pack",
    "upload-archive",
    "http-backend",
    "send-pack",
    "push",
];

/// Subcommands that print content only with a patch option (or, for `diff`, unless every
/// option asks for a summary).
const WITH_PATCH: &[&str] = &[
    "log",
    "whatchanged",
    "reflog",
    "diff-tree",
    "diff-index",
    "diff-files",
];

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
    "--exit-code",
    "--raw",
    "--no-patch",
    "-s",
];

/// When `command` runs git in a way that can print the content of stored objects, the git
/// invocation as text (for the denial's reason), else None.
pub fn git_prints_objects(command: &str) -> Option<String> {
    commands::parts(command).into_iter().find_map(|part| {
        let Part::Run { argv } = part else {
            return None;
        };
        let program = argv.first()?;
        if program.rsplit('/').next() != Some("git") {
            return None;
        }
        let sub = argv.get(1)?.as_str();
        let args = &argv[2..];
        let summary = args.iter().any(|a| {
            SUMMARY_ONLY.contains(&a.as_str())
                || a.starts_with("--stat=")
                || a.starts_with("--dirstat=")
        });
        let patch = args.iter().any(|a| is_patch_option(a));
        let prints = ALWAYS.contains(&sub)
            || (WITH_PATCH.contains(&sub) && patch)
            || (sub == "diff" && (patch || !summary));
        prints.then(|| format!("git {sub}"))
    })
}

fn is_patch_option(arg: &str) -> bool {
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
            | "--raw-diff"
    ) || arg.starts_with("-U")
        || arg.starts_with("--unified")
        || arg.starts_with("-L")
        || arg.starts_with("--word-diff=")
        || arg.starts_with("--color-words=")
        || arg.starts_with("--output")
        || arg.starts_with("--ext-diff")
        || arg.starts_with("--textconv")
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
