//! Recent changes to some files: the commits before a task's base that touched them, each with
//! its patch (for the first request's "recent changes" layer). Read through libgit2 from the
//! user's repository — its object store only: no hook, filter or config of the worktree runs.

use std::path::Path;

/// One commit that touched the files asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentChange {
    /// The short id.
    pub commit: String,
    /// The subject line.
    pub summary: String,
    /// Its diff of those files (unified, `diff --git` headers), cut to the byte cap.
    pub patch: String,
}

/// Commits walked back from `base` at most, looking for ones that touch `paths`.
const MAX_WALK: usize = 300;

/// Up to `max_commits` commits reachable from `base` (first parents, newest first) that changed
/// any of `paths` (worktree-relative), with their patches of those paths, all within
/// `max_bytes`. Empty when the repository or `base` cannot be read.
pub fn recent_changes(
    repo_root: &Path,
    base: &str,
    paths: &[String],
    max_commits: usize,
    max_bytes: usize,
) -> Vec<RecentChange> {
    if paths.is_empty() || max_commits == 0 {
        return Vec::new();
    }
    let Ok(repo) = git2::Repository::open_ext(
        repo_root,
        git2::RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    ) else {
        return Vec::new();
    };
    let Ok(mut commit) = repo.revparse_single(base).and_then(|o| o.peel_to_commit()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut used = 0;
    for _ in 0..MAX_WALK {
        let parent = commit.parent(0).ok();
        let tree = commit.tree().ok();
        let parent_tree = parent.as_ref().and_then(|p| p.tree().ok());
        let mut opts = git2::DiffOptions::new();
        for p in paths {
            opts.pathspec(p);
        }
        opts.disable_pathspec_match(true).context_lines(2);
        if let Ok(diff) =
            repo.diff_tree_to_tree(parent_tree.as_ref(), tree.as_ref(), Some(&mut opts))
            && diff.deltas().len() > 0
        {
            let mut patch = String::new();
            let _ = diff.print(git2::DiffFormat::Patch, |_, _, line| {
                let origin = line.origin();
                if matches!(origin, '+' | '-' | ' ') {
                    patch.push(origin);
                }
                patch.push_str(&String::from_utf8_lossy(line.content()));
                patch.len() < max_bytes
            });
            let left = max_bytes.saturating_sub(used);
            if left < 200 {
                break;
            }
            if patch.len() > left {
                let mut cut = left;
                while !patch.is_char_boundary(cut) {
                    cut -= 1;
                }
                patch.truncate(cut);
                patch.push_str("\n[… cut]\n");
            }
            used += patch.len();
            let id = commit.id().to_string();
            out.push(RecentChange {
                commit: id[..id.len().min(10)].to_string(),
                summary: commit
                    .summary_bytes()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
                patch,
            });
            if out.len() >= max_commits {
                break;
            }
        }
        match parent {
            Some(p) => commit = p,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(st.success());
    }

    #[test]
    fn the_commits_that_touched_the_files_newest_first_with_their_patches() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(d.join("b.py"), "y = 1\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "start"]);
        std::fs::write(d.join("a.py"), "x = 2\n").unwrap();
        git(d, &["commit", "-qam", "a: two"]);
        std::fs::write(d.join("b.py"), "y = 2\n").unwrap();
        git(d, &["commit", "-qam", "b only"]);
        std::fs::write(d.join("a.py"), "x = 3\n").unwrap();
        git(d, &["commit", "-qam", "a: three"]);
        let found = recent_changes(d, "HEAD", &["a.py".into()], 2, 10_000);
        let subjects: Vec<&str> = found.iter().map(|c| c.summary.as_str()).collect();
        assert_eq!(subjects, ["a: three", "a: two"]);
        assert!(
            found[0].patch.contains("-x = 2\n+x = 3\n"),
            "{}",
            found[0].patch
        );
        assert!(!found[0].patch.contains("y = "), "{}", found[0].patch);
        // Within the byte cap; nothing for a path no commit touched or a base that is not.
        let small = recent_changes(d, "HEAD", &["a.py".into()], 5, 300);
        assert!(
            small.iter().map(|c| c.patch.len()).sum::<usize>() <= 320,
            "{small:?}"
        );
        assert!(recent_changes(d, "HEAD", &["zzz.py".into()], 3, 10_000).is_empty());
        assert!(recent_changes(d, "nonexistent", &["a.py".into()], 3, 10_000).is_empty());
    }
}
