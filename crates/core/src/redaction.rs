//! Secrets never reach the journal or a model: every event is redacted before it is appended,
//! and everything added to the conversation is redacted before it is sent. Text that arrives in
//! pieces (a command's output, the model's streamed text) is redacted as a [`TextStream`], so a
//! secret split across two pieces is still found.

use bosun_policy::redact::{Redactor, StreamRedactor};
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};

/// What one redaction pass replaced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub count: usize,
    pub kinds: Vec<String>,
}

impl Replaced {
    pub(crate) fn merge(&mut self, other: Replaced) {
        self.add(other.count, other.kinds);
    }

    fn add(&mut self, count: usize, kinds: Vec<String>) {
        self.count += count;
        for k in kinds {
            if !self.kinds.contains(&k) {
                self.kinds.push(k);
            }
        }
    }
}

/// Redacts text with the task's redactor (built from the environment Bosun runs in, so the
/// values of its secret variables — API keys included — are found wherever they appear).
pub struct Redaction {
    redactor: Redactor,
}

impl Redaction {
    pub fn from_environment() -> Redaction {
        Redaction::from_environment_passing(&[])
    }

    /// [`Redaction::from_environment`], with the values of the variables named in `passed`
    /// redacted too whatever their names look like: what the user passes to an MCP server by
    /// name (`env_vars`, `bearer_token_env_var`) is a secret by being passed.
    pub fn from_environment_passing(passed: &[String]) -> Redaction {
        let mut env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let extra: Vec<(String, String)> = env
            .iter()
            .filter(|(k, _)| passed.contains(k))
            .enumerate()
            .map(|(i, (_, v))| (format!("BOSUN_PASSED_SECRET_{i}"), v.clone()))
            .collect();
        env.extend(extra);
        Redaction {
            redactor: Redactor::new(&env),
        }
    }

    /// Redacts `text` in place.
    pub fn text(&self, text: &mut String) -> Replaced {
        let mut replaced = Replaced::default();
        let r = self.redactor.redact(text);
        if r.count > 0 {
            replaced.add(r.count, r.kinds);
            *text = r.text.into_owned();
        }
        replaced
    }

    /// Tool-call arguments as the model wrote them (JSON text): the strings inside redacted,
    /// or the text itself when it is not JSON. Unchanged text is returned as it was.
    pub fn arguments(&self, raw: &str) -> (String, Replaced) {
        match serde_json::from_str::<Value>(raw) {
            Ok(mut value) => {
                let replaced = self.json(&mut value);
                if replaced.count == 0 {
                    (raw.to_string(), replaced)
                } else {
                    (value.to_string(), replaced)
                }
            }
            Err(_) => {
                let mut text = raw.to_string();
                let replaced = self.text(&mut text);
                (text, replaced)
            }
        }
    }

    /// Puts back the values behind the placeholders an edit of a file carries: the model saw
    /// the file redacted (`[REDACTED:openai_key]` where the key is) and writes it back so.
    /// `current` is the file as it is; `old` (an `edit_file`'s old text, as the model copied
    /// it) places the edit in it. Each placeholder of a kind takes the file's next value of
    /// that kind, from where `old` starts (the file's start for a whole file). `Err(kind)`
    /// when a placeholder has no value of its kind to take: the edit is refused, never
    /// written with a placeholder over a secret.
    pub fn restore(
        &self,
        current: &str,
        old: Option<&str>,
        texts: &mut [&mut String],
    ) -> Result<usize, String> {
        const PREFIX: &str = "[REDACTED:";
        if !texts.iter().any(|t| t.contains(PREFIX)) {
            return Ok(0);
        }
        let secrets = self.redactor.secrets(current);
        // Where the edit starts, in secrets of each kind before it.
        let redacted = self.redactor.redact(current).text;
        let start = old
            .and_then(|o| redacted.find(o))
            .map(|at| redacted[..at].to_string())
            .unwrap_or_default();
        let mut restored = 0;
        for text in texts.iter_mut() {
            let mut taken: std::collections::HashMap<String, usize> = Default::default();
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(at) = rest.find(PREFIX) {
                let Some(len) = rest[at..].find(']') else {
                    break;
                };
                let kind = &rest[at + PREFIX.len()..at + len];
                let before = start.matches(&format!("{PREFIX}{kind}]")).count();
                let n = taken.entry(kind.to_string()).or_insert(0);
                let value = secrets
                    .iter()
                    .filter(|(k, _)| k == kind)
                    .nth(before + *n)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| kind.to_string())?;
                *n += 1;
                out.push_str(&rest[..at]);
                out.push_str(value);
                rest = &rest[at + len + 1..];
                restored += 1;
            }
            out.push_str(rest);
            **text = out;
        }
        Ok(restored)
    }

    /// Redacts every string inside a JSON value in place.
    pub fn json(&self, value: &mut Value) -> Replaced {
        let mut replaced = Replaced::default();
        self.walk(value, &mut replaced);
        replaced
    }

    fn walk(&self, value: &mut Value, replaced: &mut Replaced) {
        match value {
            Value::String(s) => {
                let r = self.text(s);
                replaced.add(r.count, r.kinds);
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v, replaced)),
            Value::Object(map) => map.values_mut().for_each(|v| self.walk(v, replaced)),
            _ => {}
        }
    }
}

/// One stream of text pieces redacted as a whole (see [`StreamRedactor`]): what a piece lets
/// out may be less than the piece (an unterminated line is held back) and what
/// [`TextStream::finish`] lets out is the rest. Without a redaction it passes pieces through.
pub struct TextStream {
    redaction: Option<Arc<Redaction>>,
    held: Mutex<StreamRedactor>,
}

impl TextStream {
    pub fn new(redaction: Option<Arc<Redaction>>) -> TextStream {
        TextStream {
            redaction,
            held: Mutex::new(StreamRedactor::new()),
        }
    }

    /// What may go out of the stream after `piece`, redacted.
    pub fn push(&self, piece: &str) -> (String, Replaced) {
        match &self.redaction {
            Some(r) => Self::taken(self.held().push(&r.redactor, piece)),
            None => (piece.to_string(), Replaced::default()),
        }
    }

    /// Everything still held, redacted: the stream ended.
    pub fn finish(&self) -> (String, Replaced) {
        match &self.redaction {
            Some(r) => Self::taken(self.held().finish(&r.redactor)),
            None => (String::new(), Replaced::default()),
        }
    }

    /// Forgets what is held: the stream was abandoned (its request is sent again).
    pub fn reset(&self) {
        self.held().reset();
    }

    fn held(&self) -> MutexGuard<'_, StreamRedactor> {
        // A panic while holding the lock leaves whole lines behind, never half a secret.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn taken(r: bosun_policy::redact::Redacted<'static>) -> (String, Replaced) {
        (
            r.text.into_owned(),
            Replaced {
                count: r.count,
                kinds: r.kinds,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn placeholders_written_back_get_the_file_s_own_values() {
        let r = Redaction {
            redactor: Redactor::new(&[]),
        };
        let key1 = "AKIAIOSFODNN7EXAMPLE";
        let key2 = "AKIAI44QH8DHBEXAMPLE";
        let current = format!("A = \"{key1}\"\nB = \"{key2}\"\n\ndef f():\n    return 1\n");
        let mut shown = current.clone();
        r.text(&mut shown);
        assert!(
            !shown.contains(key1) && shown.contains("[REDACTED:aws_access_key]"),
            "{shown}"
        );
        // A whole file: each placeholder in order.
        let mut whole = shown.replace("return 1", "return 2");
        let n = r.restore(&current, None, &mut [&mut whole]).unwrap();
        assert_eq!(n, 2);
        assert_eq!(whole, current.replace("return 1", "return 2"));
        // An edit of the second line only: the second value.
        let mut old = "B = \"[REDACTED:aws_access_key]\"\n".to_string();
        let mut new = "B = \"[REDACTED:aws_access_key]\"  # backup\n".to_string();
        let probe = old.clone();
        r.restore(&current, Some(&probe), &mut [&mut old, &mut new])
            .unwrap();
        assert_eq!(old, format!("B = \"{key2}\"\n"));
        assert_eq!(new, format!("B = \"{key2}\"  # backup\n"));
        // More placeholders than values: refused.
        let mut extra = format!("{shown}C = \"[REDACTED:aws_access_key]\"\n");
        assert_eq!(
            r.restore(&current, None, &mut [&mut extra]),
            Err("aws_access_key".to_string())
        );
        // No placeholder: nothing to do.
        let mut plain = "x = 1\n".to_string();
        assert_eq!(r.restore(&current, None, &mut [&mut plain]), Ok(0));
    }

    #[test]
    fn strings_inside_json_are_redacted_and_counted() {
        let r = Redaction::from_environment();
        let mut v = serde_json::json!({"a": ["AKIAIOSFODNN7EXAMPLE is my key"], "n": 3});
        let replaced = r.json(&mut v);
        assert_eq!(replaced.count, 1);
        assert!(v["a"][0].as_str().unwrap().starts_with("[REDACTED:"), "{v}");
    }

    #[test]
    fn a_stream_finds_a_key_split_across_pieces_and_counts_it() {
        let stream = TextStream::new(Some(Arc::new(Redaction::from_environment())));
        let (first, none) = stream.push("id AKIAIOSF");
        assert_eq!((first.as_str(), none.count), ("", 0));
        let (second, replaced) = stream.push("ODNN7EXAMPLE\nnext");
        assert_eq!(second, "id [REDACTED:aws_access_key]\n");
        assert_eq!(replaced.kinds, vec!["aws_access_key".to_string()]);
        assert_eq!(stream.finish().0, "next");
    }

    #[test]
    fn arguments_are_redacted_inside_their_json_and_kept_when_clean() {
        let r = Redaction::from_environment();
        let raw = r#"{"path":"a.txt","content":"key AKIAIOSFODNN7EXAMPLE"}"#;
        let (args, replaced) = r.arguments(raw);
        assert_eq!(replaced.count, 1);
        let v: Value = serde_json::from_str(&args).unwrap();
        assert_eq!(v["content"], "key [REDACTED:aws_access_key]");
        assert_eq!(r.arguments(r#"{"b":1, "a":2}"#).0, r#"{"b":1, "a":2}"#);
        assert_eq!(
            r.arguments("AKIAIOSFODNN7EXAMPLE").0,
            "[REDACTED:aws_access_key]"
        );
    }
}
