//! Secrets never reach the journal or a model: every event is redacted before it is appended,
//! and everything added to the conversation is redacted before it is sent.

use bosun_policy::redact::Redactor;
use serde_json::Value;

/// What one redaction pass replaced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub count: usize,
    pub kinds: Vec<String>,
}

impl Replaced {
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
        let env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn strings_inside_json_are_redacted_and_counted() {
        let r = Redaction::from_environment();
        let mut v = serde_json::json!({"a": ["AKIAIOSFODNN7EXAMPLE is my key"], "n": 3});
        let replaced = r.json(&mut v);
        assert_eq!(replaced.count, 1);
        assert!(v["a"][0].as_str().unwrap().starts_with("[REDACTED:"), "{v}");
    }
}
