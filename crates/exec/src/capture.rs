//! A bounded capture of a command's output: a fixed head, a ring-buffer tail, and a count of
//! everything in between.

use std::collections::VecDeque;

/// Keeps the first `head_cap` and the last `tail_cap` bytes pushed into it; memory never exceeds
/// `head_cap + tail_cap` however much is pushed.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Capture {
            head: Vec::with_capacity(head_cap.min(64 * 1024)),
            head_cap,
            tail: VecDeque::with_capacity(tail_cap.min(64 * 1024)),
            tail_cap,
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.is_empty() || self.tail_cap == 0 {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes.iter().copied());
    }

    /// Every byte pushed so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes counted but kept neither in the head nor in the tail.
    pub fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    /// `(head, tail, omitted)`.
    pub fn into_parts(self) -> (Vec<u8>, Vec<u8>, u64) {
        let omitted = self.omitted();
        (self.head, self.tail.into_iter().collect(), omitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole_in_the_head() {
        let mut c = Capture::new(10, 5);
        c.push(b"hello");
        c.push(b"world");
        assert_eq!(c.into_parts(), (b"helloworld".to_vec(), Vec::new(), 0));
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_counts_the_middle() {
        let mut c = Capture::new(4, 4);
        for chunk in [&b"abc"[..], b"defgh", b"ij", b"klmnopq", b"r"] {
            c.push(chunk);
        }
        assert_eq!(c.total(), 18);
        assert_eq!(
            c.into_parts(),
            (b"abcd".to_vec(), b"opqr".to_vec(), 10),
            "head abcd, tail opqr, efghijklmn omitted"
        );
    }

    #[test]
    fn zero_caps_only_count() {
        let mut c = Capture::new(0, 0);
        c.push(b"something");
        assert_eq!(c.into_parts(), (Vec::new(), Vec::new(), 9));
    }
}
