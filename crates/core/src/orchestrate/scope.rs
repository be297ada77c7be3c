//! A sub-agent's scope: the globs of the files it may change.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Globs relative to the worktree (`src/parser/**`, `tests/test_parser.py`, `**`). A glob
/// without a wildcard also covers everything under it, as a directory.
#[derive(Debug, Clone)]
pub struct Scope {
    globs: Vec<String>,
    set: GlobSet,
}

impl PartialEq for Scope {
    fn eq(&self, other: &Scope) -> bool {
        self.globs == other.globs
    }
}

impl Scope {
    pub fn new(globs: &[String]) -> Result<Scope, String> {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::new();
        for g in globs {
            let g = g.trim().trim_start_matches("./").trim_end_matches('/');
            if g.is_empty() {
                continue;
            }
            let glob = |p: &str| {
                GlobBuilder::new(p)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("scope {g:?}: {e}"))
            };
            builder.add(glob(g)?);
            if literal_prefix(g) == g {
                builder.add(glob(&format!("{g}/**"))?);
            }
            kept.push(g.to_string());
        }
        if kept.is_empty() {
            return Err("a scope needs at least one glob".into());
        }
        let set = builder.build().map_err(|e| e.to_string())?;
        Ok(Scope { globs: kept, set })
    }

    /// The whole worktree.
    pub fn everything() -> Scope {
        Scope::new(&["**".to_string()]).unwrap_or_else(|_| unreachable!("** is a valid glob"))
    }

    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Whether a worktree-relative path is inside the scope.
    pub fn allows(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        self.set.is_match(path)
    }

    /// Neither scope's literal prefix (a glob's part before its first wildcard) is a prefix of
    /// the other's, for any pair of their globs: their children can run side by side.
    pub fn disjoint(&self, other: &Scope) -> bool {
        self.globs.iter().all(|a| {
            other.globs.iter().all(|b| {
                let (a, b) = (literal_prefix(a), literal_prefix(b));
                !a.starts_with(b) && !b.starts_with(a)
            })
        })
    }
}

/// The part of a glob before its first wildcard (`*`, `?`, `[`, `{`, `\`).
pub fn literal_prefix(glob: &str) -> &str {
    let end = glob
        .find(|c| matches!(c, '*' | '?' | '[' | '{' | '\\'))
        .unwrap_or(glob.len());
    &glob[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(globs: &[&str]) -> Scope {
        Scope::new(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_scope_allows_what_its_globs_match_and_a_plain_name_covers_its_directory() {
        let s = scope(&["src/parser/**", "tests/test_parser.py", "docs"]);
        assert!(s.allows("src/parser/lex.rs"));
        assert!(s.allows("src/parser/deep/a.rs"));
        assert!(s.allows("tests/test_parser.py"));
        assert!(s.allows("docs/guide/intro.md"));
        assert!(!s.allows("src/main.rs"));
        assert!(!s.allows("tests/test_other.py"));
        assert!(!s.allows("docsx/a.md"));
        let star = scope(&["src/*.py"]);
        assert!(star.allows("src/a.py"));
        assert!(!star.allows("src/sub/a.py"), "* does not cross a /");
        assert!(scope(&["**"]).allows("any/where/at/all.txt"));
    }

    #[test]
    fn scopes_are_disjoint_only_when_no_literal_prefix_is_a_prefix_of_another() {
        assert!(scope(&["src/a/**"]).disjoint(&scope(&["src/b/**"])));
        assert!(scope(&["notes.txt"]).disjoint(&scope(&["docs/**"])));
        assert!(!scope(&["src/**"]).disjoint(&scope(&["src/b/**"])));
        assert!(!scope(&["src/b/**"]).disjoint(&scope(&["src/**"])));
        assert!(!scope(&["**"]).disjoint(&scope(&["docs/**"])));
        // Literal prefixes, not directories: `src/a` is a prefix of `src/ab`.
        assert!(!scope(&["src/a*"]).disjoint(&scope(&["src/ab/**"])));
        assert!(!scope(&["a/**", "b/**"]).disjoint(&scope(&["c/**", "b/x.txt"])));
    }

    #[test]
    fn an_empty_or_invalid_scope_is_refused() {
        assert!(Scope::new(&[]).is_err());
        assert!(Scope::new(&["  ".into()]).is_err());
        assert!(Scope::new(&["src/[".into()]).is_err());
    }
}
