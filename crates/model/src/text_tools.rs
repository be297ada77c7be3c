//! Tools offered as text, for models whose native tool calls are not reliable: described in the
//! system prompt in the format the model's chat template was trained on, earlier calls replayed
//! in that format, results sent back as the user's turn. The calls the model writes are found
//! by [`crate::recover_tool_calls`], which reads all of these formats.

use crate::ToolFormat;
use crate::message::{ChatMessage, ToolCall};
use bosun_protocol::ToolSpec;
use serde_json::{Value, json};

/// The system prompt's tools section in `format`.
pub fn system_block(format: ToolFormat, tools: &[ToolSpec]) -> String {
    let schemas: Vec<String> = tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
            .to_string()
        })
        .collect();
    match format {
        // Qwen2.5's own template text.
        ToolFormat::Hermes | ToolFormat::Native => format!(
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
             You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
             For each function call, return a json object with function name and arguments within \
             <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>",
            schemas.join("\n")
        ),
        // Llama 3.1's JSON-based tool calling prompt.
        ToolFormat::Llama3 => format!(
            "Given the following functions, please respond with a JSON for a function call with its \
             proper arguments that best answers the given prompt.\n\n\
             Respond in the format {{\"name\": function name, \"parameters\": dictionary of argument \
             name and its value}}. Do not use variables.\n\n{}",
            schemas.join("\n\n")
        ),
        ToolFormat::Mistral => format!(
            "[AVAILABLE_TOOLS] [{}][/AVAILABLE_TOOLS]\n\nTo call tools, write [TOOL_CALLS] followed by \
             a JSON list: [TOOL_CALLS] [{{\"name\": \"<tool>\", \"arguments\": {{…}}}}]",
            schemas.join(", ")
        ),
        ToolFormat::Json => format!(
            "# Tools\n\n{}\n\nTo call a tool, write a fenced block holding one JSON object per call:\n\
             ```json\n{{\"name\": \"<tool>\", \"arguments\": {{…}}}}\n```",
            schemas.join("\n")
        ),
    }
}

fn args(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}))
}

/// Earlier calls, written as the model would have written them.
pub fn render_calls(format: ToolFormat, calls: &[ToolCall]) -> String {
    match format {
        ToolFormat::Hermes | ToolFormat::Native => calls
            .iter()
            .map(|c| {
                format!(
                    "<tool_call>\n{}\n</tool_call>",
                    json!({"name": c.name, "arguments": args(c)})
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        ToolFormat::Llama3 => calls
            .iter()
            .map(|c| json!({"name": c.name, "parameters": args(c)}).to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        ToolFormat::Mistral => format!(
            "[TOOL_CALLS] {}",
            Value::Array(
                calls
                    .iter()
                    .map(|c| json!({"name": c.name, "arguments": args(c)}))
                    .collect()
            )
        ),
        ToolFormat::Json => calls
            .iter()
            .map(|c| {
                format!(
                    "```json\n{}\n```",
                    json!({"name": c.name, "arguments": args(c)})
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Tool results, as the user's turn.
pub fn render_results(format: ToolFormat, results: &[(String, String)]) -> String {
    match format {
        ToolFormat::Hermes | ToolFormat::Native => results
            .iter()
            .map(|(_, content)| format!("<tool_response>\n{content}\n</tool_response>"))
            .collect::<Vec<_>>()
            .join("\n"),
        ToolFormat::Mistral => results
            .iter()
            .map(|(name, content)| format!("[TOOL_RESULTS] {name}: {content}[/TOOL_RESULTS]"))
            .collect::<Vec<_>>()
            .join("\n"),
        ToolFormat::Llama3 | ToolFormat::Json => results
            .iter()
            .map(|(name, content)| format!("Result of {name}:\n{content}"))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

/// A (role, content) message of the text conversation.
pub type TextMessage = (&'static str, String);

/// The conversation with every call and result written as text in `format`; consecutive
/// messages of one role are joined (strict templates require the roles to alternate).
pub fn conversation(format: ToolFormat, messages: &[ChatMessage]) -> Vec<TextMessage> {
    let mut out: Vec<TextMessage> = Vec::with_capacity(messages.len());
    let mut names: std::collections::HashMap<&str, &str> = Default::default();
    let mut pending: Vec<(String, String)> = Vec::new();
    let push = |out: &mut Vec<TextMessage>, role: &'static str, text: String| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((r, t)) if *r == role => {
                t.push_str("\n\n");
                t.push_str(&text);
            }
            _ => out.push((role, text)),
        }
    };
    for m in messages {
        if !matches!(m, ChatMessage::Tool { .. }) && !pending.is_empty() {
            push(&mut out, "user", render_results(format, &pending));
            pending.clear();
        }
        match m {
            ChatMessage::User { content } => push(&mut out, "user", content.clone()),
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                for c in tool_calls {
                    names.insert(c.id.as_str(), c.name.as_str());
                }
                let mut text = content.clone();
                if !tool_calls.is_empty() {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&render_calls(format, tool_calls));
                }
                push(&mut out, "assistant", text);
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => {
                let name = names.get(call_id.as_str()).copied().unwrap_or("tool");
                pending.push((name.to_string(), content.clone()));
            }
        }
    }
    if !pending.is_empty() {
        push(&mut out, "user", render_results(format, &pending));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        }]
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.py"}"#.into(),
        }
    }

    #[test]
    fn what_is_rendered_is_what_recovery_reads_back() {
        for format in [
            ToolFormat::Hermes,
            ToolFormat::Llama3,
            ToolFormat::Mistral,
            ToolFormat::Json,
        ] {
            let text = render_calls(format, &[call("recovered_1")]);
            let found = crate::recover_tool_calls(&text, &tools());
            assert_eq!(found.calls.len(), 1, "{format}: {text}");
            assert_eq!(found.calls[0].arguments, r#"{"path":"a.py"}"#, "{format}");
            assert!(found.invalid.is_empty(), "{format}: {:?}", found.invalid);
            assert!(
                system_block(format, &tools()).contains("read_file"),
                "{format}"
            );
        }
    }

    #[test]
    fn results_go_back_as_the_users_turn_and_roles_alternate() {
        let messages = vec![
            ChatMessage::User {
                content: "Fix a.py".into(),
            },
            ChatMessage::Assistant {
                content: "Reading it.".into(),
                tool_calls: vec![call("c1"), call("c2")],
                reasoning: Vec::new(),
            },
            ChatMessage::Tool {
                call_id: "c1".into(),
                content: "x = 1".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                call_id: "c2".into(),
                content: "y = 2".into(),
                is_error: false,
            },
            ChatMessage::User {
                content: "The calls above ran.".into(),
            },
        ];
        let conv = conversation(ToolFormat::Hermes, &messages);
        let roles: Vec<&str> = conv.iter().map(|(r, _)| *r).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert!(
            conv[1].1.starts_with("Reading it.\n<tool_call>"),
            "{}",
            conv[1].1
        );
        assert!(
            conv[2]
                .1
                .contains("<tool_response>\nx = 1\n</tool_response>")
        );
        assert!(conv[2].1.ends_with("The calls above ran."), "{}", conv[2].1);
        let llama = conversation(ToolFormat::Llama3, &messages);
        assert!(
            llama[2].1.contains("Result of read_file:\ny = 2"),
            "{}",
            llama[2].1
        );
    }
}
