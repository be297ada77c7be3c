//! How a model name someone typed finds a table entry: the forgiving part of the lookup.

/// Providers that sell their own models; when several entries share a bare name, theirs wins.
const FIRST_PARTY: &[&str] = &[
    "openai",
    "anthropic",
    "gemini",
    "vertex_ai-language-models",
    "xai",
    "deepseek",
    "mistral",
    "moonshot",
    "zai",
    "dashscope",
    "cohere_chat",
    "perplexity",
];

/// The rank of a provider: first-party ones first, in [`FIRST_PARTY`]'s order.
pub(crate) fn provider_rank(provider: Option<&str>) -> usize {
    provider
        .and_then(|p| FIRST_PARTY.iter().position(|f| *f == p))
        .unwrap_or(FIRST_PARTY.len())
}

/// A name without what varies between the ways of naming one model: lower case, no provider
/// path (`openrouter/anthropic/`), no Bedrock `[region.]anthropic.` prefix, `-v1:0` or `@date`
/// suffix, date (`-20250929`, `-2024-08-06`) or `-latest`, and dots between digits as dashes
/// (OpenRouter's `claude-sonnet-4.5` is `claude-sonnet-4-5`).
pub(crate) fn bare(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    let mut s = lower.rsplit('/').next().unwrap_or(&lower);
    if let Some(i) = s.rfind("anthropic.") {
        s = &s[i + "anthropic.".len()..];
    }
    if let Some(i) = s.find('@') {
        s = &s[..i];
    }
    let s = strip_version_suffix(s);
    let bytes = s.as_bytes();
    s.char_indices()
        .map(|(i, c)| {
            let digit_around = i > 0
                && bytes[i - 1].is_ascii_digit()
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if c == '.' && digit_around { '-' } else { c }
        })
        .collect()
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4o-2024-08-06` → `gpt-4o`;
/// `claude-3-5-haiku-latest` → `claude-3-5-haiku`; `…-v1:0` (Bedrock) is dropped first.
pub(crate) fn strip_version_suffix(name: &str) -> &str {
    let name = match name.rfind("-v") {
        Some(i)
            if i + 2 < name.len()
                && name[i + 2..]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ':') =>
        {
            &name[..i]
        }
        _ => name,
    };
    if let Some(base) = name.strip_suffix("-latest") {
        return base;
    }
    // -YYYYMMDD
    if name.len() > 9 {
        let (base, tail) = name.split_at(name.len() - 9);
        if tail.starts_with('-') && tail[1..].bytes().all(|b| b.is_ascii_digit()) {
            return base;
        }
    }
    // -YYYY-MM-DD
    if name.len() > 11 {
        let (base, tail) = name.split_at(name.len() - 11);
        let t = tail.as_bytes();
        let digits = |r: std::ops::Range<usize>| t[r].iter().all(u8::is_ascii_digit);
        if t[0] == b'-'
            && digits(1..5)
            && t[5] == b'-'
            && digits(6..8)
            && t[8] == b'-'
            && digits(9..11)
        {
            return base;
        }
    }
    name
}

/// Edit distance between two names (for "did you mean").
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_agree_across_the_ways_of_naming_a_model() {
        for (name, want) in [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
            (
                "us.anthropic.claude-opus-4-1-20250805-v1:0",
                "claude-opus-4-1",
            ),
            (
                "openrouter/anthropic/claude-sonnet-4.5",
                "claude-sonnet-4-5",
            ),
            ("vertex_ai/claude-opus-4-1@20250805", "claude-opus-4-1"),
            ("openai/gpt-4o-2024-08-06", "gpt-4o"),
            ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
            ("gemini/gemini-2.5-pro", "gemini-2-5-pro"),
            ("qwen2.5-coder:7b", "qwen2-5-coder:7b"),
        ] {
            assert_eq!(bare(name), want, "{name}");
        }
        assert_eq!(distance("gpt-5", "gpt-4o"), 2);
    }
}
