//! Incremental tree writes: a new tree from the previous checkpoint's tree and the changed paths,
//! rebuilding only the directories along those paths.

use crate::entry::MODE_TREE;
use crate::error::{GitContext, Result};
use git2::{ObjectType, Oid, Repository, Tree};
use std::collections::BTreeMap;

/// One path's new state: `Some((blob, mode))`, or `None` when it was deleted.
pub(crate) type Change = (String, Option<(Oid, u32)>);

#[derive(Default)]
struct Dir<'a> {
    files: Vec<(&'a str, Option<(Oid, u32)>)>,
    dirs: BTreeMap<&'a str, Dir<'a>>,
}

/// Writes the tree `base` + `changes` and returns its id.
pub(crate) fn apply(repo: &Repository, base: &Tree<'_>, changes: &[Change]) -> Result<Oid> {
    let mut root = Dir::default();
    for (path, state) in changes {
        let mut dir = &mut root;
        let mut parts = path.split('/').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_some() {
                dir = dir.dirs.entry(part).or_default();
            } else {
                dir.files.push((part, *state));
            }
        }
    }
    match write_dir(repo, Some(base), &root)? {
        Some(id) => Ok(id),
        None => repo
            .treebuilder(None)
            .and_then(|b| b.write())
            .git_ctx("writing an empty tree"),
    }
}

fn write_dir(repo: &Repository, existing: Option<&Tree<'_>>, dir: &Dir<'_>) -> Result<Option<Oid>> {
    let mut builder = repo.treebuilder(existing).git_ctx("reading a tree")?;
    for (name, state) in &dir.files {
        if state.is_none() && builder.get(name).git_ctx("reading a tree")?.is_some() {
            builder.remove(name).git_ctx("editing a tree")?;
        }
    }
    for (name, sub) in &dir.dirs {
        let current = builder
            .get(name)
            .git_ctx("reading a tree")?
            .filter(|e| e.kind() == Some(ObjectType::Tree))
            .map(|e| e.id());
        let current = match current {
            Some(id) => Some(repo.find_tree(id).git_ctx("reading a tree")?),
            None => None,
        };
        match write_dir(repo, current.as_ref(), sub)? {
            Some(id) => {
                builder
                    .insert(name, id, MODE_TREE)
                    .git_ctx("editing a tree")?;
            }
            None if current.is_some() => builder.remove(name).git_ctx("editing a tree")?,
            None => {}
        }
    }
    for (name, state) in &dir.files {
        if let Some((id, mode)) = state {
            builder
                .insert(name, *id, *mode as i32)
                .git_ctx("editing a tree")?;
        }
    }
    if builder.is_empty() {
        return Ok(None);
    }
    builder.write().git_ctx("writing a tree").map(Some)
}
