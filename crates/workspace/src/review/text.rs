//! Line diffs of byte contents: lines split after `\n` (a CRLF line keeps its `\r`, the last line
//! may lack its `\n`), Myers via `similar`, changes grouped into hunks with 3 lines of context
//! like git, and the content with only some of those hunks applied.

use bosun_protocol::{DiffLine, LineKind};
use similar::{Algorithm, DiffOp, DiffTag};
use std::time::{Duration, Instant};

/// Lines of context around a change.
pub(crate) const CONTEXT: usize = 3;
/// A diff that takes longer falls back to a coarser (still exact) result.
const DIFF_DEADLINE: Duration = Duration::from_secs(1);

/// Git's rule: a NUL in the first 8000 bytes.
pub(crate) fn is_binary(content: &[u8]) -> bool {
    content.iter().take(8000).any(|b| *b == 0)
}

/// The lines of `content`, each with its `\n` (the last one may lack it).
pub(crate) fn split_lines(content: &[u8]) -> Vec<&[u8]> {
    content.split_inclusive(|b| *b == b'\n').collect()
}

/// One hunk of a line diff: the change ops it groups, and its position with context.
#[derive(Debug, Clone)]
pub(crate) struct TextHunk {
    /// The ops of the group, context (Equal) ops included.
    pub ops: Vec<DiffOp>,
    /// 0-based start and length in the old and the new lines, context included.
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

impl TextHunk {
    /// Ranges of the lines this hunk removes and adds (context excluded).
    pub fn changes(
        &self,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, std::ops::Range<usize>)> {
        self.ops.iter().filter_map(|op| {
            let (tag, old, new) = op.as_tag_tuple();
            (tag != DiffTag::Equal).then_some((old, new))
        })
    }

    pub fn removed_lines<'a>(&self, old: &[&'a [u8]]) -> Vec<&'a [u8]> {
        self.changes().flat_map(|(o, _)| old[o].to_vec()).collect()
    }

    pub fn added_lines<'a>(&self, new: &[&'a [u8]]) -> Vec<&'a [u8]> {
        self.changes().flat_map(|(_, n)| new[n].to_vec()).collect()
    }

    /// `@@ -a,b +c,d @@` as git writes it (a start of 0 for an empty side).
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            display_start(self.old_start, self.old_len),
            self.old_len,
            display_start(self.new_start, self.new_len),
            self.new_len
        )
    }

    /// The hunk's lines with context, shown lossily.
    pub fn lines(&self, old: &[&[u8]], new: &[&[u8]]) -> Vec<DiffLine> {
        let mut out = Vec::with_capacity(self.old_len + self.new_len);
        for op in &self.ops {
            let (tag, o, n) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => {
                    for (i, j) in o.zip(n) {
                        out.push(line(LineKind::Context, Some(i), Some(j), new[j]));
                    }
                }
                _ => {
                    for i in o {
                        out.push(line(LineKind::Removed, Some(i), None, old[i]));
                    }
                    for j in n {
                        out.push(line(LineKind::Added, None, Some(j), new[j]));
                    }
                }
            }
        }
        out
    }
}

fn display_start(start: usize, len: usize) -> usize {
    if len == 0 { start } else { start + 1 }
}

fn line(kind: LineKind, old: Option<usize>, new: Option<usize>, bytes: &[u8]) -> DiffLine {
    let (text, no_newline) = match bytes.strip_suffix(b"\n") {
        Some(text) => (text, false),
        None => (bytes, true),
    };
    DiffLine {
        kind,
        old_line: old.map(|i| i as u32 + 1),
        new_line: new.map(|j| j as u32 + 1),
        text: String::from_utf8_lossy(text).into_owned(),
        no_newline,
    }
}

/// The line diff of two contents as hunks, in order.
pub(crate) fn diff_hunks(old: &[&[u8]], new: &[&[u8]]) -> Vec<TextHunk> {
    let ops = diff_ops(old, new);
    similar::group_diff_ops(ops, CONTEXT)
        .into_iter()
        .filter(|group| group.iter().any(|op| op.tag() != DiffTag::Equal))
        .map(|ops| {
            let (first, last) = match (ops.first(), ops.last()) {
                (Some(f), Some(l)) => (f.as_tag_tuple(), l.as_tag_tuple()),
                _ => ((DiffTag::Equal, 0..0, 0..0), (DiffTag::Equal, 0..0, 0..0)),
            };
            TextHunk {
                old_start: first.1.start,
                old_len: last.1.end - first.1.start,
                new_start: first.2.start,
                new_len: last.2.end - first.2.start,
                ops,
            }
        })
        .collect()
}

/// The raw diff ops of two line lists.
pub(crate) fn diff_ops(old: &[&[u8]], new: &[&[u8]]) -> Vec<DiffOp> {
    similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        old,
        new,
        Some(Instant::now() + DIFF_DEADLINE),
    )
}

/// `old` with the hunks for which `keep` is true taking their new side.
pub(crate) fn compose(old: &[&[u8]], new: &[&[u8]], hunks: &[TextHunk], keep: &[bool]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    for (hunk, kept) in hunks.iter().zip(keep) {
        for (o, n) in hunk.changes() {
            for line in &old[at..o.start] {
                out.extend_from_slice(line);
            }
            let side = if *kept { &new[n] } else { &old[o.clone()] };
            for line in side {
                out.extend_from_slice(line);
            }
            at = o.end;
        }
    }
    for line in &old[at.min(old.len())..] {
        out.extend_from_slice(line);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn composing_all_or_no_hunks_gives_either_side() {
        let old = b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n".to_vec();
        let new = b"a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm".to_vec();
        let (o, n) = (split_lines(&old), split_lines(&new));
        let hunks = diff_hunks(&o, &n);
        assert_eq!(hunks.len(), 2);
        assert_eq!(compose(&o, &n, &hunks, &[true, true]), new);
        assert_eq!(compose(&o, &n, &hunks, &[false, false]), old);
        assert_eq!(
            compose(&o, &n, &hunks, &[true, false]),
            b"a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n".to_vec()
        );
        assert_eq!(hunks[0].header(), "@@ -1,5 +1,5 @@");
    }
}
