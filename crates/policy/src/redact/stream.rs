//! Redaction of text that arrives in pieces (a command's stdout, the model's streamed text).
//!
//! Redacting each piece alone misses a secret split across two of them: `AKIAIOSF` now and
//! `ODNN7EXAMPLE` a second later are each harmless. A [`StreamRedactor`] therefore lets out only
//! whole lines (ended by `\n` or `\r`): the unterminated last line is held back (up to [`LINE_HOLD_BYTES`]) until its
//! newline or the end of the stream, and from a `-----BEGIN … PRIVATE KEY-----` line on
//! everything is held until its END line (up to [`KEY_HOLD_BYTES`]; past that what is held is
//! let out as `[REDACTED:private_key]` and the rest of the key is dropped). What it lets out has
//! been through the [`Redactor`].

use std::borrow::Cow;

use super::formats::is_key_material;
use super::{Redacted, Redactor};

/// The longest unterminated line held back. Past it the line is let out up to its last
/// whitespace (a secret is one word), or whole when it has none.
pub const LINE_HOLD_BYTES: usize = 4 * 1024;
/// The most of a private key block held back waiting for its END line.
pub const KEY_HOLD_BYTES: usize = 16 * 1024;

const KEY_KIND: &str = "private_key";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Lines go out as they complete.
    #[default]
    Text,
    /// Inside a private key block: held in `key` until its END line.
    Key,
    /// Inside a key block too long to hold: its lines are dropped until its END line.
    Dropping,
}

/// One stream's held-back text. Feed it pieces with [`StreamRedactor::push`] and end it with
/// [`StreamRedactor::finish`]; a stream of its own per source (stdout and stderr separately).
#[derive(Debug, Default)]
pub struct StreamRedactor {
    /// The unterminated last line.
    line: String,
    /// From the BEGIN marker of a private key on, while `mode` is `Key`.
    key: String,
    mode: Mode,
}

/// What one call lets out.
#[derive(Default)]
struct Out {
    text: String,
    count: usize,
    kinds: Vec<String>,
}

impl Out {
    fn release(&mut self, redactor: &Redactor, text: &str) {
        if text.is_empty() {
            return;
        }
        let r = redactor.redact(text);
        self.text.push_str(&r.text);
        self.count += r.count;
        for kind in r.kinds {
            self.kind(kind);
        }
    }

    fn key_marker(&mut self) {
        self.text.push_str("[REDACTED:private_key]\n");
        self.count += 1;
        self.kind(KEY_KIND.to_string());
    }

    fn kind(&mut self, kind: String) {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    fn done(self) -> Redacted<'static> {
        Redacted {
            text: Cow::Owned(self.text),
            count: self.count,
            kinds: self.kinds,
        }
    }
}

impl StreamRedactor {
    pub fn new() -> StreamRedactor {
        StreamRedactor::default()
    }

    /// Takes the next piece of the stream and returns what may go out now, redacted.
    pub fn push(&mut self, redactor: &Redactor, piece: &str) -> Redacted<'static> {
        let mut out = Out::default();
        self.line.push_str(piece);
        // A carriage return ends a line too (a progress bar redrawing itself goes out as it
        // draws); no secret format spans one.
        if let Some(newline) = self.line.rfind(['\n', '\r']) {
            let rest = self.line.split_off(newline + 1);
            let complete = std::mem::replace(&mut self.line, rest);
            self.lines(redactor, &complete, &mut out);
        }
        self.bound(redactor, &mut out);
        out.done()
    }

    /// The end of the stream: everything still held, redacted (a key block without its END
    /// line is redacted to its last line of key material).
    pub fn finish(&mut self, redactor: &Redactor) -> Redacted<'static> {
        let mut out = Out::default();
        let line = std::mem::take(&mut self.line);
        match std::mem::take(&mut self.mode) {
            Mode::Text => out.release(redactor, &line),
            Mode::Key => {
                let mut key = std::mem::take(&mut self.key);
                key.push_str(&line);
                out.release(redactor, &key);
            }
            Mode::Dropping if is_key_material(line.trim()) => {}
            Mode::Dropping => out.release(redactor, &line),
        }
        out.done()
    }

    /// How many bytes are held back now.
    pub fn held_bytes(&self) -> usize {
        self.line.len() + self.key.len()
    }

    /// Forgets what is held (the stream was abandoned, e.g. a model request sent again).
    pub fn reset(&mut self) {
        *self = StreamRedactor::default();
    }

    /// Complete lines (each ending in `\n`).
    fn lines(&mut self, redactor: &Redactor, complete: &str, out: &mut Out) {
        if self.mode == Mode::Text && !complete.contains("PRIVATE KEY") {
            out.release(redactor, complete);
            return;
        }
        let mut text = String::new();
        for line in complete.split_inclusive('\n') {
            self.line_in(redactor, line, &mut text, out);
        }
        out.release(redactor, &text);
    }

    /// One complete line; lines that simply go out gather in `text`.
    fn line_in(&mut self, redactor: &Redactor, line: &str, text: &mut String, out: &mut Out) {
        match self.mode {
            Mode::Text => match redactor.key_begin(line) {
                Some(at) if !line[at..].contains("-----END") => {
                    text.push_str(&line[..at]);
                    out.release(redactor, &std::mem::take(text));
                    self.key.push_str(&line[at..]);
                    self.mode = Mode::Key;
                }
                _ => text.push_str(line),
            },
            Mode::Key if line.contains("-----END") => {
                self.key.push_str(line);
                out.release(redactor, &std::mem::take(&mut self.key));
                self.mode = Mode::Text;
            }
            Mode::Key if is_key_material(line.trim()) => {
                self.key.push_str(line);
                if self.key.len() > KEY_HOLD_BYTES {
                    self.drop_key(out);
                }
            }
            Mode::Key => {
                // Not key material: the block was cut short. What was held is redacted to its
                // last line of key material, and this line is an ordinary one.
                out.release(redactor, &std::mem::take(&mut self.key));
                self.mode = Mode::Text;
                self.line_in(redactor, line, text, out);
            }
            Mode::Dropping if line.contains("-----END") => self.mode = Mode::Text,
            Mode::Dropping if is_key_material(line.trim()) => {}
            Mode::Dropping => {
                self.mode = Mode::Text;
                self.line_in(redactor, line, text, out);
            }
        }
    }

    /// The key block is too long to hold: it goes out as one marker, the rest is dropped.
    fn drop_key(&mut self, out: &mut Out) {
        self.key.clear();
        out.key_marker();
        self.mode = Mode::Dropping;
    }

    /// Keeps what is held within its limits.
    fn bound(&mut self, redactor: &Redactor, out: &mut Out) {
        match self.mode {
            Mode::Key if self.key.len() + self.line.len() > KEY_HOLD_BYTES => {
                if is_key_material(self.line.trim()) {
                    self.line.clear();
                    self.drop_key(out);
                } else {
                    out.release(redactor, &std::mem::take(&mut self.key));
                    self.mode = Mode::Text;
                }
            }
            Mode::Dropping if self.line.len() > LINE_HOLD_BYTES => {
                if is_key_material(self.line.trim()) {
                    self.line.clear();
                } else {
                    self.mode = Mode::Text;
                }
            }
            _ => {}
        }
        if self.mode == Mode::Text && self.line.len() > LINE_HOLD_BYTES {
            let cut = match self
                .line
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
            {
                Some((at, c)) if self.line.len() - (at + c.len_utf8()) <= LINE_HOLD_BYTES => {
                    at + c.len_utf8()
                }
                _ => self.line.len(),
            };
            let rest = self.line.split_off(cut);
            let head = std::mem::replace(&mut self.line, rest);
            out.release(redactor, &head);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    const AWS: &str = "AKIAIOSFODNN7EXAMPLE";

    /// Feeds `pieces` and returns every piece let out, then what the end let out.
    fn feed(pieces: &[&str]) -> (Vec<String>, String, usize) {
        let redactor = Redactor::new(&[]);
        let mut stream = StreamRedactor::new();
        let mut count = 0;
        let out = pieces
            .iter()
            .map(|p| {
                let r = stream.push(&redactor, p);
                count += r.count;
                r.text.into_owned()
            })
            .collect();
        let end = stream.finish(&redactor);
        count += end.count;
        (out, end.text.into_owned(), count)
    }

    fn pem(lines: usize) -> String {
        let mut s = "-----BEGIN RSA PRIVATE KEY-----\n".to_string();
        for i in 0..lines {
            s.push_str(&format!("MIIEpAIBAAKCAQEA{i:048}\n"));
        }
        s.push_str("-----END RSA PRIVATE KEY-----\n");
        s
    }

    #[test]
    fn a_key_printed_in_two_halves_is_redacted_whole() {
        let (out, end, count) = feed(&["key: AKIAIOSFOD", "NN7EXAMPLE\n", "next\n"]);
        assert_eq!(out, vec!["", "key: [REDACTED:aws_access_key]\n", "next\n"]);
        assert_eq!((end.as_str(), count), ("", 1));
    }

    #[test]
    fn an_unterminated_last_line_is_let_out_at_the_end() {
        let (out, end, count) = feed(&["done\nkey AKIAIOSF", "ODNN7EXAMPLE"]);
        assert_eq!(out, vec!["done\n", ""]);
        assert_eq!((end.as_str(), count), ("key [REDACTED:aws_access_key]", 1));
    }

    #[test]
    fn a_pem_in_three_chunks_never_shows_its_body() {
        let key = pem(4);
        let (a, rest) = key.split_at(20);
        let (b, c) = rest.split_at(90);
        let (out, end, count) = feed(&["before\n", a, b, c, "after\n"]);
        assert_eq!(
            out,
            vec!["before\n", "", "", "[REDACTED:private_key]\n", "after\n"]
        );
        assert_eq!((end.as_str(), count), ("", 1));
    }

    #[test]
    fn text_before_a_begin_marker_goes_out_and_the_key_is_held() {
        let (out, _, _) = feed(&[
            "KEY=-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
            "-----END PRIVATE KEY-----\n",
        ]);
        assert_eq!(out, vec!["KEY=", "[REDACTED:private_key]\n"]);
    }

    #[test]
    fn a_key_cut_short_by_an_ordinary_line_is_redacted_and_the_line_goes_out() {
        let (out, end, count) = feed(&[
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
            "error: truncated\n",
        ]);
        assert_eq!(out, vec!["", "[REDACTED:private_key]\nerror: truncated\n"]);
        assert_eq!((end.as_str(), count), ("", 1));
    }

    #[test]
    fn a_key_without_its_end_is_redacted_when_the_stream_ends() {
        let (out, end, count) = feed(&["-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM\n"]);
        assert_eq!(out, vec![""]);
        assert_eq!((end.as_str(), count), ("[REDACTED:private_key]\n", 1));
    }

    #[test]
    fn a_key_block_past_its_hold_is_let_out_as_one_marker_and_the_rest_dropped() {
        let key = pem(400); // ~26 KB
        assert!(key.len() > KEY_HOLD_BYTES);
        let pieces: Vec<&str> = key
            .as_bytes()
            .chunks(1000)
            .map(|c| std::str::from_utf8(c).unwrap())
            .chain(["after\n"])
            .collect();
        let (out, end, count) = feed(&pieces);
        let all: String = out.concat() + &end;
        assert_eq!(all, "[REDACTED:private_key]\nafter\n");
        assert_eq!(count, 1);
    }

    #[test]
    fn a_progress_bar_redrawn_with_carriage_returns_goes_out_as_it_draws() {
        let (out, end, _) = feed(&["\r 10%", "\r 50%", "\r100%\n"]);
        assert_eq!(out, vec!["\r", " 10%\r", " 50%\r100%\n"]);
        assert_eq!(end, "");
        let (out, _, count) = feed(&[
            "-----BEGIN PRIVATE KEY-----\r\nMIIEvQIBADANBg\r",
            "\n-----END PRIVATE KEY-----\r\n",
        ]);
        assert_eq!(
            (out.concat(), count),
            ("[REDACTED:private_key]\r\n".into(), 1)
        );
    }

    #[test]
    fn held_text_stays_within_its_limits() {
        let redactor = Redactor::new(&[]);
        let mut stream = StreamRedactor::new();
        // A long line of words: let out up to its last space, the last word held.
        let words = "word ".repeat(1000) + "AKIAIOSF";
        let out = stream.push(&redactor, &words);
        assert_eq!(out.text.len(), 5000);
        assert_eq!(stream.held_bytes(), 8);
        let out = stream.push(&redactor, "ODNN7EXAMPLE tail");
        assert_eq!(out.text, "");
        let end = stream.finish(&redactor);
        assert_eq!(end.text, "[REDACTED:aws_access_key] tail");
        // One endless word: let out whole once past the hold.
        let blob = "x".repeat(LINE_HOLD_BYTES + 1);
        let out = stream.push(&redactor, &blob);
        assert_eq!((out.text.len(), stream.held_bytes()), (blob.len(), 0));
        // An unfinished key block never holds more than its limit.
        stream.push(&redactor, "-----BEGIN PRIVATE KEY-----\n");
        for _ in 0..100 {
            stream.push(&redactor, &"A".repeat(1000));
            assert!(stream.held_bytes() <= KEY_HOLD_BYTES + 1000);
        }
    }

    #[test]
    fn streamed_and_whole_text_redact_the_same() {
        let text = format!(
            "a {AWS}\npassword=Zq9xLm2Pw7Tr5Yb3\n{}token ghp_{}\n",
            pem(3),
            "a1B2".repeat(9)
        );
        let whole = Redactor::new(&[]).redact(&text).text.into_owned();
        for size in [1, 3, 7, 64] {
            let pieces: Vec<String> = text
                .chars()
                .collect::<Vec<_>>()
                .chunks(size)
                .map(|c| c.iter().collect())
                .collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let (out, end, _) = feed(&refs);
            assert_eq!(out.concat() + &end, whole, "pieces of {size}");
        }
    }

    #[test]
    fn redacted_text_fed_again_is_unchanged() {
        let (out, end, count) = feed(&["[REDACTED:aws_access_key] x\n"]);
        assert_eq!(
            (out.concat() + &end, count),
            ("[REDACTED:aws_access_key] x\n".into(), 0)
        );
    }
}
