//! The name a server's tool has for the model: `mcp__<server>__<tool>`, sanitised to
//! `[a-zA-Z0-9_-]` and at most 64 characters (the limit OpenAI and Anthropic put on tool
//! names), with a short hash of the full name when it had to be cut — so two long names never
//! collide and the same tool always gets the same name.

/// The longest tool name the model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;
const PREFIX: &str = "mcp__";

fn sanitise(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// 64-bit FNV-1a (a stable short name, not a security hash).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Eight hex digits standing for `text` (stable across runs).
pub fn short_hash(text: &str) -> String {
    format!("{:08x}", fnv1a(text.as_bytes()) as u32)
}

/// `mcp__<server>__<tool>` for the model.
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("{PREFIX}{}__{}", sanitise(server), sanitise(tool));
    // A name that was changed by sanitising gets the hash too: `a.b` and `a_b` stay apart;
    // so does one with `__` inside a part: `x` + `y__z` and `x__y` + `z` stay apart.
    let changed = sanitise(server) != server
        || sanitise(tool) != tool
        || server.contains("__")
        || tool.contains("__");
    if full.len() <= MAX_TOOL_NAME && !changed {
        return full;
    }
    let hash = format!(
        "{:08x}",
        fnv1a(format!("{server}\0{tool}").as_bytes()) as u32
    );
    if full.len() + 1 + hash.len() <= MAX_TOOL_NAME {
        return format!("{full}_{hash}");
    }
    let keep = MAX_TOOL_NAME - 1 - hash.len();
    // Every character is ASCII after sanitising: cutting at a byte is cutting at a character.
    format!("{}_{hash}", &full[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept_and_odd_or_long_ones_are_sanitised_cut_and_hashed() {
        assert_eq!(
            tool_name("everything", "get-env"),
            "mcp__everything__get-env"
        );
        let odd = tool_name("fs", "read.file");
        assert!(odd.starts_with("mcp__fs__read_file_"), "{odd}");
        assert_ne!(odd, tool_name("fs", "read_file"));
        let long = tool_name("a-very-long-server-name-indeed", &"tool".repeat(20));
        assert_eq!(long.len(), MAX_TOOL_NAME);
        assert!(
            long.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        assert_ne!(
            long,
            tool_name("a-very-long-server-name-indeed", &"tool".repeat(21))
        );
        assert_eq!(tool_name("s", "é"), tool_name("s", "é"), "stable");
        assert!(long.starts_with(PREFIX));
    }

    #[test]
    fn two_different_server_tool_pairs_never_get_the_same_name() {
        // Server names may hold `__`: `x` + `y__z` and `x__y` + `z` both gave `mcp__x__y__z`,
        // and the registry let the later one silently replace the earlier.
        assert_ne!(tool_name("x", "y__z"), tool_name("x__y", "z"));
    }
}
