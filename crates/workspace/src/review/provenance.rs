//! Which checkpoints made each hunk: the file is walked through the checkpoint chain tracking
//! where each of its lines came from.

use super::change::{Analysed, Side};
use super::text;
use crate::error::{GitContext, Result};
use bosun_protocol::HunkKind;
use git2::{Repository, Tree};
use similar::DiffTag;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The chain: the base's tree, then each checkpoint's tree, with the paths each step changed.
pub(crate) struct Chain<'r> {
    /// (checkpoint number, tree); index 0 is the base (number 0).
    pub trees: Vec<(u32, Tree<'r>)>,
    /// For each path, the indices into `trees` of the steps that changed it.
    touched: HashMap<String, Vec<usize>>,
}

impl<'r> Chain<'r> {
    pub fn new(repo: &'r Repository, trees: Vec<(u32, Tree<'r>)>) -> Result<Chain<'r>> {
        let mut touched: HashMap<String, Vec<usize>> = HashMap::new();
        for step in 1..trees.len() {
            let diff = repo
                .diff_tree_to_tree(Some(&trees[step - 1].1), Some(&trees[step].1), None)
                .git_ctx("comparing two checkpoints")?;
            for delta in diff.deltas() {
                for file in [delta.old_file(), delta.new_file()] {
                    if let Some(path) = file.path().and_then(|p| p.to_str()) {
                        let steps = touched.entry(path.to_string()).or_default();
                        if steps.last() != Some(&step) {
                            steps.push(step);
                        }
                    }
                }
            }
        }
        Ok(Chain { trees, touched })
    }

    fn entry(&self, step: usize, paths: &[&str]) -> Option<Side> {
        let tree = &self.trees[step].1;
        paths.iter().find_map(|path| {
            tree.get_path(Path::new(path))
                .ok()
                .filter(|e| e.kind() == Some(git2::ObjectType::Blob))
                .map(|e| Side {
                    path: path.to_string(),
                    id: e.id(),
                    mode: e.filemode() as u32,
                })
        })
    }

    /// For each hunk of `a` (in order), the checkpoint numbers that made it.
    pub fn hunk_steps(&self, repo: &Repository, a: &Analysed) -> Result<Vec<Vec<u32>>> {
        let mut paths = vec![a.change.path()];
        if let Some(old) = a.change.old.as_ref().filter(|o| o.path != a.change.path()) {
            paths.push(&old.path);
        }
        let mut steps: BTreeSet<usize> = BTreeSet::new();
        for path in &paths {
            steps.extend(self.touched.get(*path).into_iter().flatten());
        }
        let numbers =
            |set: &BTreeSet<usize>| -> Vec<u32> { set.iter().map(|s| self.trees[*s].0).collect() };
        if steps.len() <= 1 {
            return Ok(vec![numbers(&steps); a.hunks.len()]);
        }
        let states: Vec<(usize, Option<Side>, Option<Side>)> = steps
            .iter()
            .map(|s| (*s, self.entry(s - 1, &paths), self.entry(*s, &paths)))
            .collect();
        let (origins, removed_at) = if a.text_hunks.is_empty() {
            (Vec::new(), HashMap::new())
        } else {
            track_lines(repo, &states, &a.old_bytes)?
        };
        let old_lines = text::split_lines(&a.old_bytes).len();
        let mut out = Vec::with_capacity(a.hunks.len());
        for hunk in &a.hunks {
            let mut made: BTreeSet<usize> = BTreeSet::new();
            match (hunk.kind, hunk.text.and_then(|i| a.text_hunks.get(i))) {
                (HunkKind::Text, Some(t)) => {
                    for (o, n) in t.changes() {
                        for j in n {
                            if let Some(Origin::Added(s)) = origins.get(j) {
                                made.insert(*s);
                            }
                        }
                        for i in o.filter(|i| *i < old_lines) {
                            made.extend(removed_at.get(&i));
                        }
                    }
                }
                (kind, _) => {
                    for (step, before, after) in &states {
                        let changed = match kind {
                            HunkKind::Mode => {
                                before.as_ref().map(|s| s.mode) != after.as_ref().map(|s| s.mode)
                            }
                            HunkKind::Rename => {
                                before.as_ref().map(|s| &s.path) != after.as_ref().map(|s| &s.path)
                            }
                            HunkKind::Empty => before.is_some() != after.is_some(),
                            _ => before != after,
                        };
                        if changed {
                            made.insert(*step);
                        }
                    }
                }
            }
            if made.is_empty() {
                made = steps.iter().copied().collect();
            }
            out.push(numbers(&made));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy)]
enum Origin {
    /// Line i of the base.
    Base(usize),
    /// Added by the step at this index of the chain.
    Added(usize),
}

/// Follows the file through the steps: where each line of the latest version came from, and at
/// which step each removed base line went.
type Tracked = (Vec<Origin>, HashMap<usize, usize>);

fn track_lines(
    repo: &Repository,
    states: &[(usize, Option<Side>, Option<Side>)],
    base: &[u8],
) -> Result<Tracked> {
    let load = |side: &Option<Side>| -> Result<Vec<u8>> {
        match side {
            Some(s) => Ok(repo
                .find_blob(s.id)
                .git_ctx("reading a file of a checkpoint")?
                .content()
                .to_vec()),
            None => Ok(Vec::new()),
        }
    };
    let mut origins: Vec<Origin> = (0..text::split_lines(base).len())
        .map(Origin::Base)
        .collect();
    let mut removed_at = HashMap::new();
    for (step, before, after) in states {
        let (old, new) = (load(before)?, load(after)?);
        let (old, new) = (text::split_lines(&old), text::split_lines(&new));
        if old.len() != origins.len() {
            // The chain does not line up (e.g. across a rebase): start over from here.
            origins = (0..old.len()).map(|_| Origin::Added(*step)).collect();
        }
        let mut next = Vec::with_capacity(new.len());
        for op in text::diff_ops(&old, &new) {
            let (tag, o, n) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                next.extend(o.map(|i| origins[i]));
                continue;
            }
            for i in o {
                if let Origin::Base(b) = origins[i] {
                    removed_at.insert(b, *step);
                }
            }
            next.extend(n.map(|_| Origin::Added(*step)));
        }
        origins = next;
    }
    Ok((origins, removed_at))
}
