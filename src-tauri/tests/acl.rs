//! Every command the app registers is declared to Tauri (build.rs) and granted to the main
//! window (capabilities/main-window.json), and nothing is granted that does not exist: a command
//! missing from either is refused at run time ("not allowed") while its tests, which call the
//! library directly, still pass.

use std::collections::BTreeSet;

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).map(|i| i + start.len()).unwrap_or(0);
    let to = text[from..].find(end).map_or(text.len(), |i| from + i);
    &text[from..to]
}

fn quoted(text: &str) -> BTreeSet<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn registered_declared_and_granted_commands_are_the_same() {
    let root = env!("CARGO_MANIFEST_DIR");
    let lib = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap_or_default();
    let registered: BTreeSet<String> = between(&lib, "generate_handler![", "]")
        .split(',')
        .filter_map(|p| p.trim().rsplit("::").next().map(str::to_string))
        .filter(|n| !n.is_empty())
        .collect();
    let build = std::fs::read_to_string(format!("{root}/build.rs")).unwrap_or_default();
    let declared = quoted(between(&build, "commands(&[", "]"));
    let caps = std::fs::read_to_string(format!("{root}/capabilities/main-window.json"))
        .unwrap_or_default();
    let granted: BTreeSet<String> = quoted(between(&caps, "\"permissions\"", "]"))
        .into_iter()
        .filter_map(|p| p.strip_prefix("allow-").map(|c| c.replace('-', "_")))
        .collect();
    assert!(registered.len() > 10, "{registered:?}");
    assert_eq!(registered, declared, "src/lib.rs vs build.rs");
    assert_eq!(
        registered, granted,
        "src/lib.rs vs capabilities/main-window.json"
    );
}
