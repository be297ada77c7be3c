//! A small JSON Schema check for tool arguments: `type` (object, string, integer, number,
//! boolean, array, null, or a list of them), `properties`, `required`, `enum`, `const`, `items`
//! and `additionalProperties` (false or a schema). Anything else in a schema is ignored.

use serde_json::Value;

/// Checks `args` against `schema`. The error lists every problem found, as a sentence the model
/// can act on.
pub fn validate_args(schema: &Value, args: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    check(schema, args, "", &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn where_(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_string()
    } else {
        format!("`{path}`")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "object" => v.is_object(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn check(schema: &Value, v: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|t| has_type(v, t)) {
        problems.push(format!(
            "{} must be {} but is {}",
            where_(path),
            types.join(" or "),
            type_name(v)
        ));
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        problems.push(format!(
            "{} must be one of {} but is {}",
            where_(path),
            list.join(", "),
            v
        ));
    }
    if let Some(c) = schema.get("const")
        && c != v
    {
        problems.push(format!("{} must be {c} but is {v}", where_(path)));
    }
    if let Value::Object(obj) = v {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !obj.contains_key(name) {
                    problems.push(format!("missing required property `{}`", join(path, name)));
                }
            }
        }
        for (key, value) in obj {
            let sub = join(path, key);
            match props.and_then(|p| p.get(key)) {
                Some(prop_schema) => check(prop_schema, value, &sub, problems),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let known: Vec<&str> = props
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        problems.push(format!(
                            "unknown property `{sub}` (allowed: {})",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ));
                    }
                    Some(extra @ Value::Object(_)) => check(extra, value, &sub, problems),
                    _ => {}
                },
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (v, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}[{i}]"), problems);
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "force": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"step": {"type": "string"}},
                    "required": ["step"]
                }}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_pass() {
        let args = json!({"path": "a", "limit": 3, "ratio": 0.5, "force": true, "mode": "b",
                          "items": [{"step": "x"}]});
        assert_eq!(validate_args(&schema(), &args), Ok(()));
        assert_eq!(
            validate_args(&schema(), &json!({"path": "a", "limit": 2.0})),
            Ok(())
        );
    }

    #[test]
    fn every_problem_is_named() {
        let err = validate_args(
            &schema(),
            &json!({"limit": "3", "mode": "c", "extra": 1, "items": [{}]}),
        )
        .unwrap_err();
        assert!(err.contains("missing required property `path`"), "{err}");
        assert!(
            err.contains("`limit` must be integer but is string"),
            "{err}"
        );
        assert!(err.contains("`mode` must be one of \"a\", \"b\""), "{err}");
        assert!(err.contains("unknown property `extra`"), "{err}");
        assert!(
            err.contains("missing required property `items[0].step`"),
            "{err}"
        );
        let err = validate_args(&schema(), &json!(["path"])).unwrap_err();
        assert_eq!(err, "the arguments must be object but is array");
    }
}
