//! One file's part of a search: the sink that keeps its matching and context lines within what
//! the call may still show and count, and how a line is shown.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

/// Characters shown at most per line; a longer line is cut around its first match.
pub(super) const MAX_LINE_CHARS: usize = 300;
/// Characters shown before the first match when a long line is cut.
const LEAD_CHARS: usize = MAX_LINE_CHARS / 3;

/// One line to show.
pub(super) struct Line {
    pub number: u64,
    pub is_match: bool,
    pub text: String,
}

/// How much of the call's output one file may still take.
pub(super) struct Allowance {
    /// Matching lines it may still show.
    pub show: usize,
    /// Bytes of shown lines it may still add.
    pub bytes: usize,
    /// Matches it may still count past those shown; the search of the file stops there.
    pub count: usize,
}

/// What the searcher found in one file.
pub(super) struct FileHits<'m> {
    matcher: &'m RegexMatcher,
    allowance: Allowance,
    /// The lines to show, in order.
    pub lines: Vec<Line>,
    /// Matching lines found (shown or not).
    pub matched: usize,
    /// Matching lines shown.
    pub shown: usize,
    /// The file has a NUL byte: it is binary and none of it is shown.
    pub binary: bool,
    /// Bytes of `lines`.
    bytes: usize,
    /// Where the before-context of the next match starts in `lines`, dropped if that match is not
    /// shown.
    pending: Option<usize>,
    /// The last match was shown, so its after-context is too.
    last_shown: bool,
}

impl<'m> FileHits<'m> {
    pub fn new(matcher: &'m RegexMatcher, allowance: Allowance) -> Self {
        FileHits {
            matcher,
            allowance,
            lines: Vec::new(),
            matched: 0,
            shown: 0,
            binary: false,
            bytes: 0,
            pending: None,
            last_shown: false,
        }
    }

    fn may_show(&self) -> bool {
        self.shown < self.allowance.show && self.bytes < self.allowance.bytes
    }

    fn push(&mut self, number: u64, is_match: bool, text: String) {
        self.bytes += text.len() + 12;
        self.lines.push(Line {
            number,
            is_match,
            text,
        });
    }

    fn drop_pending(&mut self) {
        if let Some(at) = self.pending.take() {
            for line in self.lines.drain(at..) {
                self.bytes -= line.text.len() + 12;
            }
        }
    }
}

impl Sink for FileHits<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            self.matched += 1;
            if self.may_show() {
                let at = self.matcher.find(line).ok().flatten().map(|m| m.start());
                self.push(first + i as u64, true, shown_line(line, at));
                self.shown += 1;
                self.pending = None;
                self.last_shown = true;
            } else {
                self.drop_pending();
                self.last_shown = false;
            }
        }
        Ok(self.matched - self.shown < self.allowance.count)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        let keep = match ctx.kind() {
            SinkContextKind::Before => self.may_show(),
            SinkContextKind::After => self.last_shown,
            SinkContextKind::Other => false,
        };
        if keep {
            if *ctx.kind() == SinkContextKind::Before && self.pending.is_none() {
                self.pending = Some(self.lines.len());
            }
            let number = ctx.line_number().unwrap_or(0);
            self.push(number, false, shown_line(ctx.bytes(), None));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line as shown: without its line break, invalid UTF-8 replaced, and cut to
/// [`MAX_LINE_CHARS`] around `focus` (the first match's byte offset) with markers saying how much
/// was cut.
pub(super) fn shown_line(line: &[u8], focus: Option<usize>) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    let total = text.chars().count();
    if total <= MAX_LINE_CHARS {
        return text.into_owned();
    }
    let focus = focus
        .map(|at| {
            String::from_utf8_lossy(&line[..at.min(line.len())])
                .chars()
                .count()
        })
        .unwrap_or(0);
    let start = if focus < MAX_LINE_CHARS - LEAD_CHARS {
        0
    } else {
        (focus - LEAD_CHARS).min(total - MAX_LINE_CHARS)
    };
    let end = start + MAX_LINE_CHARS;
    let mut out = String::new();
    if start > 0 {
        out.push_str(&format!("[{} characters cut] …", thousands(start)));
    }
    out.extend(text.chars().skip(start).take(MAX_LINE_CHARS));
    if end < total {
        out.push_str(&format!(
            "… [{} more characters cut]",
            thousands(total - end)
        ));
    }
    out
}

/// `1234567` → `1,234,567`.
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_long_line_is_cut_around_its_match() {
        let short = shown_line(b"abc\r\n", Some(0));
        assert_eq!(short, "abc");
        let line = format!("{}needle{}", "x".repeat(1000), "y".repeat(1000));
        let cut = shown_line(line.as_bytes(), Some(1000));
        assert!(cut.starts_with("[900 characters cut] …"), "{cut}");
        assert!(cut.contains("needle"), "{cut}");
        assert!(cut.ends_with("… [806 more characters cut]"), "{cut}");
        let cut = shown_line(line.as_bytes(), None);
        assert!(cut.starts_with("xxx"), "{cut}");
        assert!(cut.ends_with("… [1,706 more characters cut]"), "{cut}");
    }
}
