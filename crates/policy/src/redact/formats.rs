//! Known secret formats: one regex per format, plus a check where the shape alone is not enough
//! (a JWT header must decode to JSON with `"alg"`, a private key block runs to its END line).

use regex::Regex;

/// A byte range of the text to replace, and what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span<'k> {
    pub start: usize,
    pub end: usize,
    pub kind: &'k str,
}

/// Turns a regex match into the span to redact, or `None` when the check rejects it.
type Extent = fn(text: &str, start: usize, end: usize) -> Option<(usize, usize)>;

pub(crate) struct Format {
    pub kind: &'static str,
    pub regex: Regex,
    /// The capture group holding the secret; 0 is the whole match.
    group: usize,
    extent: Extent,
}

/// `(?-u:\b)`: an ASCII word boundary keeps the lazy DFA usable on non-ASCII text.
const B: &str = r"(?-u:\b)";

/// The pattern source of each format, in priority order (earlier wins a tie on the same span).
pub(crate) fn sources() -> Vec<(&'static str, String, usize, Extent)> {
    let whole: Extent = |_, s, e| Some((s, e));
    vec![
        (
            "private_key",
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----".to_string(),
            0,
            private_key_block,
        ),
        (
            "aws_access_key",
            format!("{B}(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{{16}}{B}"),
            0,
            whole,
        ),
        (
            "github_token",
            format!("{B}(?:gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{22,255}}){B}"),
            0,
            whole,
        ),
        (
            "anthropic_key",
            format!("{B}sk-ant-[A-Za-z0-9_-]{{20,}}"),
            0,
            whole,
        ),
        (
            "openai_key",
            format!(
                "{B}sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{{20,}}|[A-Za-z0-9]{{20,}}{B})"
            ),
            0,
            |t, s, e| mixes_letters_and_digits(&t[s + 3..e]).then_some((s, e)),
        ),
        (
            "slack_token",
            format!("{B}(?:xox[abposr]-[A-Za-z0-9-]{{10,}}|xapp-[0-9]-[A-Za-z0-9-]{{10,}})"),
            0,
            whole,
        ),
        (
            "slack_webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}"
                .to_string(),
            0,
            whole,
        ),
        (
            "stripe_key",
            format!("{B}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{B}"),
            0,
            whole,
        ),
        (
            "google_api_key",
            format!("{B}AIza[0-9A-Za-z_-]{{35}}"),
            0,
            whole,
        ),
        (
            "npm_token",
            format!("{B}npm_[A-Za-z0-9]{{36}}{B}"),
            0,
            whole,
        ),
        (
            "gitlab_token",
            format!("{B}glpat-[A-Za-z0-9_-]{{20,}}"),
            0,
            whole,
        ),
        (
            "huggingface_token",
            format!("{B}hf_[A-Za-z0-9]{{34,}}{B}"),
            0,
            |t, s, e| {
                let body = &t[s + 3..e];
                let mixed_case = body.bytes().any(|b| b.is_ascii_uppercase())
                    && body.bytes().any(|b| b.is_ascii_lowercase());
                mixed_case.then_some((s, e))
            },
        ),
        (
            "pypi_token",
            format!("{B}pypi-AgE[A-Za-z0-9_-]{{50,}}"),
            0,
            whole,
        ),
        (
            "jwt",
            format!("{B}eyJ[A-Za-z0-9_-]{{8,}}\\.[A-Za-z0-9_-]{{4,}}\\.[A-Za-z0-9_-]*"),
            0,
            |t, s, e| jwt_header_has_alg(&t[s..e]).then_some((s, e)),
        ),
        (
            "connection_string_password",
            format!(r#"{B}[A-Za-z][A-Za-z0-9+.-]{{1,20}}://[^\s:/?#@'"<>]*:([^\s/?#@'"<>]+)@"#),
            1,
            |t, s, e| (!is_placeholder(&t[s..e])).then_some((s, e)),
        ),
        (
            "authorization_header",
            format!(
                r#"(?i){B}(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|basic|token)[ \t]+([A-Za-z0-9._~+/=-]{{8,}})"#
            ),
            1,
            whole,
        ),
    ]
}

impl Format {
    pub(crate) fn all() -> Result<Vec<Format>, regex::Error> {
        sources()
            .into_iter()
            .map(|(kind, source, group, extent)| {
                Ok(Format {
                    kind,
                    regex: Regex::new(&source)?,
                    group,
                    extent,
                })
            })
            .collect()
    }

    /// Every span of this format in `text`.
    pub(crate) fn find(&self, text: &str, out: &mut Vec<Span<'_>>) {
        let mut push = |start, end| {
            if let Some((start, end)) = (self.extent)(text, start, end) {
                out.push(Span {
                    start,
                    end,
                    kind: self.kind,
                });
            }
        };
        if self.group == 0 {
            // Finding without captures skips the slower capture engines.
            for m in self.regex.find_iter(text) {
                push(m.start(), m.end());
            }
        } else {
            for caps in self.regex.captures_iter(text) {
                if let Some(m) = caps.get(self.group) {
                    push(m.start(), m.end());
                }
            }
        }
    }
}

fn mixes_letters_and_digits(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Template variables and masks stand in for a secret; they are not one.
pub(crate) fn is_placeholder(value: &str) -> bool {
    value.starts_with('$')
        || value.starts_with('%')
        || value.starts_with('{')
        || value.starts_with('<')
        || value.starts_with("[REDACTED")
        || value.bytes().all(|b| b == b'*' || b == b'x' || b == b'X')
}

/// A line of a PEM body: base64 or one of its headers (`line` trimmed; an empty one is too).
pub(crate) fn is_key_material(line: &str) -> bool {
    line.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
        || line.starts_with("Proc-Type:")
        || line.starts_with("DEK-Info:")
}

/// From a BEGIN line to the end of its END line; when the END line is missing (truncated output),
/// to the last line that still looks like key material.
fn private_key_block(text: &str, start: usize, header_end: usize) -> Option<(usize, usize)> {
    let rest = &text[header_end..];
    if let Some(at) = rest.find("-----END") {
        let after = header_end + at + "-----END".len();
        let close = text[after..].find("-----").map(|c| after + c + 5);
        // A BEGIN with another BEGIN before its END is truncated; fall through.
        if !rest[..at].contains("-----BEGIN") {
            return Some((start, close.unwrap_or(text.len())));
        }
    }
    let mut end = header_end;
    let mut offset = header_end;
    for line in text[header_end..].split_inclusive('\n') {
        let body = line.trim();
        let key_material = !body.is_empty() && is_key_material(body);
        if offset != header_end && !key_material && !body.is_empty() {
            break;
        }
        offset += line.len();
        if key_material {
            end = offset - (line.len() - line.trim_end().len());
        }
    }
    Some((start, end))
}

/// The first part of a JWT is base64url JSON naming its algorithm.
fn jwt_header_has_alg(token: &str) -> bool {
    let header = token.split('.').next().unwrap_or_default();
    decode_base64url(header)
        .map(|bytes| {
            let json = String::from_utf8_lossy(&bytes);
            json.trim_start().starts_with('{') && json.contains("\"alg\"")
        })
        .unwrap_or(false)
}

fn decode_base64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn base64url_decodes_a_jwt_header() {
        let bytes = decode_base64url("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9").unwrap();
        assert_eq!(bytes, br#"{"alg":"HS256","typ":"JWT"}"#);
        assert!(decode_base64url("not base64!").is_none());
    }

    #[test]
    fn a_base64_json_without_alg_is_not_a_jwt() {
        // {"id":1234567} . payload . sig
        assert!(!jwt_header_has_alg("eyJpZCI6MTIzNDU2N30.eyJhIjoxfQ.abc"));
        assert!(jwt_header_has_alg(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhIjoxfQ.abc"
        ));
    }

    #[test]
    fn a_truncated_private_key_is_redacted_to_its_last_key_line() {
        let text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83+/abc=\n\nnext: line\n";
        let (s, e) = private_key_block(text, 0, 31).unwrap();
        assert_eq!(
            &text[s..e],
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83+/abc="
        );
    }

    #[test]
    fn every_format_compiles() {
        assert_eq!(Format::all().unwrap().len(), sources().len());
    }
}
