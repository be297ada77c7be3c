//! Streamed bytes to text, per stream, holding back a UTF-8 character split across chunks (for
//! `run_command`'s output and a check's).

use crate::OutputStream;
use std::sync::Mutex;

#[derive(Default)]
/// Decodes each stream's bytes as UTF-8 (lossily), never splitting a character.
pub struct StreamDecoder {
    pending: Mutex<[Vec<u8>; 2]>,
}

impl StreamDecoder {
    /// The text of `bytes` after what `stream` held back; an incomplete last character waits.
    pub fn decode(&self, stream: OutputStream, bytes: &[u8]) -> String {
        let Ok(mut pending) = self.pending.lock() else {
            return String::from_utf8_lossy(bytes).into_owned();
        };
        let buf = &mut pending[index(stream)];
        buf.extend_from_slice(bytes);
        let rest = buf.split_off(complete_prefix_len(buf));
        let text = String::from_utf8_lossy(buf).into_owned();
        *buf = rest;
        text
    }

    /// What `stream` still holds (at its end).
    pub fn flush(&self, stream: OutputStream) -> String {
        match self.pending.lock() {
            Ok(mut pending) => {
                String::from_utf8_lossy(&std::mem::take(&mut pending[index(stream)])).into_owned()
            }
            Err(_) => String::new(),
        }
    }
}

fn index(stream: OutputStream) -> usize {
    match stream {
        OutputStream::Stdout => 0,
        OutputStream::Stderr => 1,
    }
}

/// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
fn complete_prefix_len(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let b = bytes[len - back];
        if b < 0x80 {
            return len;
        }
        if b >= 0xC0 {
            let needed = if b >= 0xF0 {
                4
            } else if b >= 0xE0 {
                3
            } else {
                2
            };
            return if needed > back { len - back } else { len };
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_chunks_comes_out_whole() {
        let d = StreamDecoder::default();
        let bytes = "✖ adds".as_bytes();
        let first = d.decode(OutputStream::Stdout, &bytes[..2]);
        let second = d.decode(OutputStream::Stdout, &bytes[2..]);
        assert_eq!(first, "");
        assert_eq!(second, "✖ adds");
        assert_eq!(d.flush(OutputStream::Stdout), "");
    }
}
