//! Server-sent events, parsed incrementally from the bytes of a response body.

/// One dispatched event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

impl SseEvent {
    /// A `ping` (Anthropic's keep-alive): the connection lives, but the answer did not move on,
    /// so it does not hold off a timeout. Comment lines (`: …`) are never events at all.
    pub fn is_keepalive(&self) -> bool {
        self.event.as_deref() == Some("ping")
            || self.data.trim() == r#"{"type": "ping"}"#
            || self.data.trim() == r#"{"type":"ping"}"#
    }
}

/// Feeds on body chunks in any split (lines and UTF-8 sequences may straddle chunks).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    pending: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl SseParser {
    /// Parses what `chunk` completes and returns the events dispatched by it.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = chunk;
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\n' || b == b'\r' {
                self.pending.extend_from_slice(&bytes[start..i]);
                let line = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                self.line(&line, &mut out);
                if b == b'\r' {
                    if i + 1 < bytes.len() {
                        if bytes[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.after_cr = true;
                    }
                }
                start = i + 1;
            }
            i += 1;
        }
        self.pending.extend_from_slice(&bytes[start..]);
        out
    }

    /// The end of the body: an event not followed by a blank line is still dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            let mut out = Vec::new();
            self.line(&line, &mut out);
            if let Some(ev) = out.pop() {
                return Some(ev);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(ev) = self.dispatch() {
                out.push(ev);
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if self.data.is_empty() {
            return None;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    #[test]
    fn events_survive_any_split_of_the_bytes() {
        let body = "event: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n: comment\n\ndata: one\ndata: two\n\ndata:[DONE]";
        let whole = {
            let mut p = SseParser::default();
            let mut v = p.push(body.as_bytes());
            v.extend(p.finish());
            v
        };
        assert_eq!(
            whole,
            vec![
                ev(Some("message_start"), "{\"a\":\"é\"}"),
                ev(None, "one\ntwo"),
                ev(None, "[DONE]")
            ]
        );
        for size in 1..8 {
            let mut p = SseParser::default();
            let mut v = Vec::new();
            for chunk in body.as_bytes().chunks(size) {
                v.extend(p.push(chunk));
            }
            v.extend(p.finish());
            assert_eq!(v, whole, "chunk size {size}");
        }
    }

    #[test]
    fn pings_are_keepalives_and_answers_are_not() {
        assert!(ev(Some("ping"), r#"{"type": "ping"}"#).is_keepalive());
        assert!(ev(None, r#"{"type":"ping"}"#).is_keepalive());
        assert!(
            !ev(
                Some("content_block_delta"),
                r#"{"type":"content_block_delta"}"#
            )
            .is_keepalive()
        );
        assert!(!ev(None, "[DONE]").is_keepalive());
    }
}
