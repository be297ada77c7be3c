//! Tool calls that small local models write as text instead of using the API's tool-call
//! field: a JSON object on its own lines, a ```json fenced block, or `<tool_call>` tags
//! (Qwen/Hermes style), each `{"name": …, "arguments": {…}}` (also `parameters` / `input`, and
//! arguments given as a JSON string). Only offered tools count, and arguments are checked
//! against the tool's schema. JSON inside a sentence is never taken for a call.

use crate::message::ToolCall;
use crate::schema::validate_args;
use bosun_protocol::ToolSpec;
use serde_json::Value;

/// What [`recover_tool_calls`] found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecoveredCalls {
    /// Valid calls, in the order written, with ids `recovered_1`, `recovered_2`, …
    pub calls: Vec<ToolCall>,
    /// One message per call that was meant but cannot run (bad arguments, no such tool), to
    /// send back to the model; each includes the tool's schema or the list of tools.
    pub invalid: Vec<String>,
    /// The text with the calls (valid or not) taken out.
    pub remaining_text: String,
}

/// Finds tool calls written as text. Pure: the same text gives the same result.
pub fn recover_tool_calls(text: &str, tools: &[ToolSpec]) -> RecoveredCalls {
    let mut regions = tag_regions(text);
    let mut taken: Vec<(usize, usize)> = regions.iter().map(|r| (r.start, r.end)).collect();
    let (fenced, code_blocks) = fence_regions(text);
    for r in fenced {
        if !overlaps(&regions, r.start, r.end) {
            regions.push(r);
        }
    }
    // Nothing inside a fenced block is a bare call: it is either a fenced call or code.
    taken.extend(code_blocks);
    for r in bare_regions(text, &taken) {
        taken.push((r.start, r.end));
        regions.push(r);
    }
    regions.sort_by_key(|r| r.start);

    let mut out = RecoveredCalls::default();
    let mut kept = String::new();
    let mut cursor = 0;
    for region in regions {
        let verdicts: Vec<Verdict> = region
            .values
            .iter()
            .map(|v| judge(v, tools, region.explicit))
            .collect();
        if !region.explicit && verdicts.iter().any(|v| matches!(v, Verdict::Text)) {
            continue;
        }
        kept.push_str(&text[cursor..region.start]);
        cursor = region.end;
        for v in verdicts {
            match v {
                Verdict::Call { name, args } => {
                    out.calls.push(ToolCall {
                        id: format!("recovered_{}", out.calls.len() + 1),
                        name,
                        arguments: args.to_string(),
                    });
                }
                Verdict::Invalid(msg) => out.invalid.push(msg),
                Verdict::Text => {}
            }
        }
    }
    kept.push_str(&text[cursor..]);
    out.remaining_text = tidy(&kept);
    out
}

struct Region {
    start: usize,
    end: usize,
    /// Written in `<tool_call>` tags: meant as a call even when it cannot be one.
    explicit: bool,
    /// The JSON values inside; `Err` holds text that did not parse.
    values: Vec<Result<Value, String>>,
}

enum Verdict {
    Call { name: String, args: Value },
    Invalid(String),
    Text,
}

fn overlaps(regions: &[Region], start: usize, end: usize) -> bool {
    regions.iter().any(|r| start < r.end && r.start < end)
}

/// All JSON values in `s`, one after another; the rest as an error if something does not parse.
fn json_values(s: &str) -> Vec<Result<Value, String>> {
    let mut out = Vec::new();
    let mut iter = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    loop {
        let offset = iter.byte_offset();
        match iter.next() {
            None => break,
            Some(Ok(Value::Array(items))) => out.extend(items.into_iter().map(Ok)),
            Some(Ok(v)) => out.push(Ok(v)),
            Some(Err(_)) => {
                let rest = s[offset..].trim();
                // Python's `"""…"""` strings (small models write file contents that way): read
                // as the JSON strings they were meant to be.
                if let Some(fixed) = triple_quoted_as_json(rest) {
                    let again = json_values(&fixed);
                    if again.iter().any(Result::is_ok) {
                        out.extend(again);
                        break;
                    }
                }
                // What follows an unreadable object may still hold calls: go on after the next
                // line that starts an object.
                out.push(Err(rest.to_string()));
                if let Some(next) = next_object_start(rest) {
                    out.extend(json_values(&rest[next..]));
                }
                break;
            }
        }
    }
    out
}

/// Text that did not parse but reads as a call: an object with a name and its arguments.
fn meant_as_call(raw: &str) -> bool {
    raw.trim_start().starts_with('{')
        && raw.contains("\"name\"")
        && ["\"arguments\"", "\"parameters\"", "\"input\""]
            .iter()
            .any(|k| raw.contains(k))
}

/// `"""text"""` as a JSON string, throughout; None when there is none (or one is not closed).
fn triple_quoted_as_json(s: &str) -> Option<String> {
    if !s.contains("\"\"\"") {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("\"\"\"") {
        out.push_str(&rest[..open]);
        let body_start = open + 3;
        let close = rest[body_start..].find("\"\"\"")?;
        let body = &rest[body_start..body_start + close];
        out.push_str(&serde_json::to_string(body).ok()?);
        rest = &rest[body_start + close + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// Where the next line that starts with `{` begins, after the first line.
fn next_object_start(s: &str) -> Option<usize> {
    let mut at = s.find('\n')? + 1;
    loop {
        let line = &s[at..];
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if line[indent..].starts_with('{') {
            return Some(at + indent);
        }
        at += line.find('\n')? + 1;
    }
}

fn strip_fence(s: &str) -> &str {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.split_once('\n').map(|(_, body)| body).unwrap_or("");
        return rest.trim_end().strip_suffix("```").unwrap_or(rest).trim();
    }
    t
}

fn tag_regions(text: &str) -> Vec<Region> {
    let mut out = hermes_regions(text);
    out.extend(marker_regions(text, &out));
    out
}

/// Llama 3's `<|python_tag|>` and Mistral's `[TOOL_CALLS]`: the JSON after the marker (an
/// object or a list of them) is meant as calls.
fn marker_regions(text: &str, taken: &[Region]) -> Vec<Region> {
    let mut out = Vec::new();
    for marker in ["<|python_tag|>", "[TOOL_CALLS]"] {
        let mut from = 0;
        while let Some(pos) = text[from..].find(marker) {
            let start = from + pos;
            let inner_start = start + marker.len();
            from = inner_start;
            if taken.iter().any(|r| start >= r.start && start < r.end) {
                continue;
            }
            let rest = &text[inner_start..];
            let lead = rest.len() - rest.trim_start().len();
            let body_start = inner_start + lead;
            let mut iter =
                serde_json::Deserializer::from_str(&text[body_start..]).into_iter::<Value>();
            let (values, mut end) = match iter.next() {
                Some(Ok(Value::Array(items))) => (
                    items.into_iter().map(Ok).collect(),
                    body_start + iter.byte_offset(),
                ),
                Some(Ok(v)) => (vec![Ok(v)], body_start + iter.byte_offset()),
                _ => {
                    let line_end = text[body_start..]
                        .find('\n')
                        .map_or(text.len(), |p| body_start + p);
                    (json_values(&text[body_start..line_end]), line_end)
                }
            };
            for closer in ["<|eom_id|>", "<|eot_id|>"] {
                if text[end..].trim_start().starts_with(closer) {
                    end = end + (text[end..].len() - text[end..].trim_start().len()) + closer.len();
                }
            }
            out.push(Region {
                start,
                end,
                explicit: true,
                values: if values.is_empty() {
                    vec![Err(String::new())]
                } else {
                    values
                },
            });
            from = end;
        }
    }
    out
}

fn hermes_regions(text: &str) -> Vec<Region> {
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find(OPEN) {
        let start = from + pos;
        let inner_start = start + OPEN.len();
        let (inner_end, end) = match text[inner_start..].find(CLOSE) {
            Some(p) => (inner_start + p, inner_start + p + CLOSE.len()),
            None => (text.len(), text.len()),
        };
        let inner = strip_fence(&text[inner_start..inner_end]);
        let values = if inner.is_empty() {
            vec![Err(String::new())]
        } else {
            json_values(inner)
        };
        out.push(Region {
            start,
            end,
            explicit: true,
            values,
        });
        from = end;
    }
    out
}

/// Fenced blocks that may hold calls, and the spans of all fenced blocks.
fn fence_regions(text: &str) -> (Vec<Region>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find("```") {
        let start = from + pos;
        let after = start + 3;
        let Some(nl) = text[after..].find('\n') else {
            break;
        };
        let lang = text[after..after + nl].trim().to_ascii_lowercase();
        let body_start = after + nl + 1;
        let Some(close) = text[body_start..].find("```") else {
            break;
        };
        let end = body_start + close + 3;
        spans.push((start, end));
        if matches!(
            lang.as_str(),
            "" | "json" | "tool_call" | "tool_code" | "tool"
        ) {
            let values = json_values(text[body_start..body_start + close].trim());
            // A block with at least one call in it is a block of calls: what in it cannot be
            // read is reported, not taken for prose.
            let has_call = values.iter().any(|v| match v {
                Ok(v) => call_shape(v).is_some_and(|(_, a)| a.is_some()),
                Err(raw) => meant_as_call(raw),
            });
            if has_call || (!values.is_empty() && values.iter().all(Result::is_ok)) {
                out.push(Region {
                    start,
                    end,
                    explicit: false,
                    values,
                });
            }
        }
        from = end;
    }
    (out, spans)
}

/// JSON objects that start a line and end one, outside the regions already taken.
fn bare_regions(text: &str, taken: &[(usize, usize)]) -> Vec<Region> {
    let mut out = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map(|p| line_start + p)
            .unwrap_or(text.len());
        let line = &text[line_start..line_end];
        let indent = line.len() - line.trim_start().len();
        let start = line_start + indent;
        let mut next = line_end + 1;
        let inside = taken.iter().any(|(s, e)| start >= *s && start < *e);
        if !inside && text[start..].starts_with('{') {
            let mut iter = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            if let Some(Ok(v)) = iter.next() {
                let end = start + iter.byte_offset();
                let rest_of_line = text[end..].split('\n').next().unwrap_or("");
                let crosses = taken.iter().any(|(s, e)| start < *e && *s < end);
                if rest_of_line.trim().is_empty() && !crosses {
                    out.push(Region {
                        start,
                        end,
                        explicit: false,
                        values: vec![Ok(v)],
                    });
                    next = end;
                }
            }
        }
        line_start = next;
    }
    out
}

/// The name and the arguments of a call-shaped object.
fn call_shape(v: &Value) -> Option<(String, Option<&Value>)> {
    let obj = v.as_object()?;
    if let Some(f) = obj.get("function").and_then(Value::as_object) {
        let name = f.get("name")?.as_str()?.to_string();
        return Some((name, f.get("arguments").or_else(|| f.get("parameters"))));
    }
    let name = obj.get("name")?.as_str()?.to_string();
    let args = obj
        .get("arguments")
        .or_else(|| obj.get("parameters"))
        .or_else(|| obj.get("input"));
    Some((name, args))
}

fn judge(value: &Result<Value, String>, tools: &[ToolSpec], explicit: bool) -> Verdict {
    let names = || {
        tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let v = match value {
        Ok(v) => v,
        Err(raw) => {
            return Verdict::Invalid(format!(
                "A tool call was not run: it is not JSON ({}). Write each call as \
                 {{\"name\": \"<tool>\", \"arguments\": {{…}}}}, strings in double quotes with \\n for \
                 new lines.",
                crate::client::snippet(raw)
            ));
        }
    };
    let Some((name, args)) = call_shape(v) else {
        return if explicit {
            Verdict::Invalid(
                "A tool call in <tool_call> tags was not run: it needs a \"name\" and \
                 \"arguments\", as {\"name\": \"<tool>\", \"arguments\": {…}}."
                    .to_string(),
            )
        } else {
            Verdict::Text
        };
    };
    // Outside tags, an object counts only if it says how to call: name plus arguments.
    if !explicit && args.is_none() {
        return Verdict::Text;
    }
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        // A name and arguments say "call this" wherever they are written.
        return if explicit || args.is_some() {
            Verdict::Invalid(format!(
                "The tool call `{name}` was not run: there is no tool of that name. Available \
                 tools: {}.{}",
                names(),
                match meant_tool(&name, args, tools) {
                    Some(t) => format!(
                        " It looks like you meant `{}`; its arguments must match this JSON schema: {}",
                        t.name, t.parameters
                    ),
                    None => String::new(),
                }
            ))
        } else {
            Verdict::Text
        };
    };
    let schema = tool.parameters.to_string();
    let args = match args {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) if s.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => v,
            Err(e) => {
                return Verdict::Invalid(format!(
                    "The tool call `{name}` was not run: its arguments are not valid JSON ({e}). \
                     They must match this JSON schema: {schema}"
                ));
            }
        },
        Some(v) => v.clone(),
    };
    let args = near_miss_names(&tool.parameters, args);
    match validate_args(&tool.parameters, &args) {
        Ok(()) => Verdict::Call { name, args },
        Err(problems) => Verdict::Invalid(format!(
            "The tool call `{name}` was not run: {problems}. Its arguments must match this JSON \
             schema: {schema}"
        )),
    }
}

/// The tool a call to an unknown name seems to mean: the one whose schema shares the most
/// argument names with the call (after [`near_miss_names`]), or failing that whose name shares a
/// word with it (`update_file` → `edit_file`); none when nothing points anywhere.
fn meant_tool<'a>(name: &str, args: Option<&Value>, tools: &'a [ToolSpec]) -> Option<&'a ToolSpec> {
    let score = |t: &ToolSpec| -> (usize, usize) {
        let props = t.parameters.get("properties").and_then(Value::as_object);
        let shared = match (
            args.cloned().map(|a| near_miss_names(&t.parameters, a)),
            props,
        ) {
            (Some(Value::Object(a)), Some(p)) => a.keys().filter(|k| p.contains_key(*k)).count(),
            _ => 0,
        };
        let words = |n: &str| -> Vec<String> {
            n.to_ascii_lowercase()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| w.len() > 2)
                .map(str::to_string)
                .collect()
        };
        let theirs = words(&t.name);
        let named = words(name).iter().filter(|w| theirs.contains(w)).count();
        (shared, named)
    };
    let best = tools
        .iter()
        .map(|t| (score(t), t))
        .max_by_key(|(s, _)| *s)?;
    let ((shared, named), tool) = best;
    if shared == 0 && named == 0 {
        return None;
    }
    // A tie says nothing.
    let ties = tools.iter().filter(|t| score(t) == (shared, named)).count();
    (ties == 1).then_some(tool)
}

/// Argument names small models write for the ones a schema has (`file_path` for `path`,
/// `cmd` for `command`): renamed when the schema lacks the written name, has the meant one, and
/// the call does not give it already. Anything else is left for the schema check to report.
fn near_miss_names(schema: &Value, args: Value) -> Value {
    const ALIASES: &[(&str, &[&str])] = &[
        (
            "path",
            &[
                "file_path",
                "filepath",
                "file",
                "filename",
                "file_name",
                "dir",
                "directory",
            ],
        ),
        ("command", &["cmd", "shell", "script"]),
        (
            "old_string",
            &["old_str", "old", "old_text", "search", "find", "original"],
        ),
        (
            "new_string",
            &[
                "new_str",
                "new",
                "new_text",
                "replace",
                "replacement",
                "updated",
            ],
        ),
        (
            "content",
            &["contents", "text", "code", "data", "file_content"],
        ),
        ("pattern", &["query", "regex", "search_term"]),
    ];
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return args;
    };
    let Value::Object(mut obj) = args else {
        return args;
    };
    let written: Vec<String> = obj.keys().cloned().collect();
    for key in written {
        if props.contains_key(&key) {
            continue;
        }
        let norm = key.to_ascii_lowercase().replace('-', "_");
        let meant = if props.contains_key(&norm) {
            Some(norm.clone())
        } else {
            ALIASES
                .iter()
                .find(|(target, names)| {
                    props.contains_key(*target) && names.contains(&norm.as_str())
                })
                .map(|(target, _)| target.to_string())
        };
        if let Some(meant) = meant
            && !obj.contains_key(&meant)
            && let Some(v) = obj.remove(&key)
        {
            obj.insert(meant, v);
        }
    }
    Value::Object(obj)
}

/// Trims the text and closes the gaps left where calls were taken out.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut newlines = 0;
    for c in s.trim().chars() {
        if c == '\n' {
            newlines += 1;
            if newlines > 2 {
                continue;
            }
        } else if !c.is_whitespace() {
            newlines = 0;
        }
        out.push(c);
    }
    out
}
