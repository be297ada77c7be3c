//! Paths relative to the task's worktree, and the glob rules that scope them.

use globset::{Glob, GlobBuilder, GlobMatcher};

/// Where a path points once `.` and `..` are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Inside the worktree, as a clean relative path (`src/a.rs`; `""` is the root).
    Inside(String),
    /// Absolute, under the home directory (`~/…`), or escaping the worktree with `..`.
    Outside(String),
}

/// Resolves `path` lexically against the worktree root: `./src/../a` is `a`, `../x`, `/etc/x`
/// and `~/x` are outside.
pub fn locate(path: &str) -> Location {
    let path = path.trim();
    let path = path
        .strip_prefix("$HOME/")
        .or_else(|| path.strip_prefix("${HOME}/"))
        .map(|rest| format!("~/{rest}"))
        .unwrap_or_else(|| path.to_string());
    if path.starts_with('/') || path.starts_with('~') {
        return Location::Outside(path);
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Location::Outside(path);
                }
            }
            p => parts.push(p),
        }
    }
    Location::Inside(parts.join("/"))
}

/// A compiled path glob. A pattern without `/` matches a file name at any depth (like
/// `.gitignore`): `*.lock` matches `Cargo.lock` and `web/package-lock.json`'s siblings.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matchers: Vec<GlobMatcher>,
}

impl PathGlob {
    pub fn new(pattern: &str) -> Result<PathGlob, String> {
        let build = |p: &str| -> Result<GlobMatcher, String> {
            GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .map(|g: Glob| g.compile_matcher())
                .map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))
        };
        let trimmed = pattern.trim_start_matches("./");
        if trimmed.is_empty() {
            return Err("an empty path pattern matches nothing; remove it".into());
        }
        let mut matchers = vec![build(trimmed)?];
        if !trimmed.contains('/') {
            matchers.push(build(&format!("**/{trimmed}"))?);
        }
        if let Some(rest) = trimmed.strip_prefix("**/") {
            // `**/.env` also matches an absolute path ending in `/.env`.
            matchers.push(build(&format!("/**/{rest}"))?);
        }
        Ok(PathGlob { matchers })
    }

    /// Does the glob match this path (a worktree-relative path, or an outside one as written)?
    pub fn matches(&self, path: &str) -> bool {
        self.matchers.iter().any(|m| m.is_match(path))
    }

    /// Does the glob match the location (inside: the clean relative path; outside: as written)?
    pub fn matches_location(&self, location: &Location) -> bool {
        match location {
            Location::Inside(p) | Location::Outside(p) => self.matches(p),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn dot_dot_is_resolved_and_escapes_are_outside() {
        assert_eq!(locate("./src/../.env"), Location::Inside(".env".into()));
        assert_eq!(locate("src//a.rs"), Location::Inside("src/a.rs".into()));
        assert_eq!(locate("../x"), Location::Outside("../x".into()));
        assert_eq!(
            locate("src/../../x"),
            Location::Outside("src/../../x".into())
        );
        assert_eq!(locate("/etc/x"), Location::Outside("/etc/x".into()));
        assert_eq!(
            locate("$HOME/.ssh/id_rsa"),
            Location::Outside("~/.ssh/id_rsa".into())
        );
    }

    #[test]
    fn globs_without_slash_match_at_any_depth() {
        let lock = PathGlob::new("*.lock").unwrap();
        assert!(lock.matches("Cargo.lock") && lock.matches("web/yarn.lock"));
        let src = PathGlob::new("src/**").unwrap();
        assert!(src.matches("src/a/b.rs") && !src.matches("tests/a.rs"));
        let env = PathGlob::new("**/.env").unwrap();
        assert!(env.matches(".env") && env.matches("a/.env") && env.matches("/work/repo/.env"));
        let ssh = PathGlob::new("~/.ssh/**").unwrap();
        assert!(ssh.matches("~/.ssh/id_rsa"));
        assert!(PathGlob::new("a/[").is_err());
    }
}
