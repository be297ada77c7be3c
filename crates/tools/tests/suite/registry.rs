//! The registry and the size of what the model is offered.
use bosun_tools::ToolRegistry;
use pretty_assertions::assert_eq;

#[test]
fn builtin_tools_are_offered_in_a_stable_order() {
    let registry = ToolRegistry::builtin();
    let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "list_dir",
            "search",
            "symbols",
            "write_file",
            "edit_file",
            "apply_patch",
            "run_command",
            "update_plan"
        ]
    );
    assert!(registry.get("read_file").is_some());
    assert!(registry.get("rm_rf").is_none());
}

#[test]
fn every_schema_is_a_closed_object_naming_its_required_arguments() {
    for spec in ToolRegistry::builtin().specs() {
        let p = &spec.parameters;
        assert_eq!(p["type"], "object", "{}", spec.name);
        assert_eq!(p["additionalProperties"], false, "{}", spec.name);
        for required in p["required"].as_array().unwrap() {
            assert!(
                p["properties"].get(required.as_str().unwrap()).is_some(),
                "{}",
                spec.name
            );
        }
    }
}

#[test]
fn the_whole_tool_list_stays_under_3_5_kb() {
    let json = serde_json::to_string(&ToolRegistry::builtin().specs()).unwrap();
    println!("tool list: {} bytes of JSON", json.len());
    assert!(
        // Nine tools; peers send 35–40 KB of prompt and tools.
        json.len() < 3584,
        "tool list is {} bytes; keep it under 3.5 KB",
        json.len()
    );
}
