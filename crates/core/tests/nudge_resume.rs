//! A nudge is part of the conversation: a continued or resumed task sends it again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_core::rebuild_conversation;
use bosun_model::ChatMessage;
use bosun_protocol::Event;
use serde_json::json;

#[test]
fn a_nudge_is_rebuilt_as_what_the_model_was_told() {
    let usage = json!({"type": "usage", "model": "m", "input_tokens": 1, "output_tokens": 1,
        "cached_input_tokens": 0, "cache_write_tokens": 0, "cost_usd": null,
        "total_cost_usd": 0.0, "priced": false});
    let msgs = [
        json!({"type": "user_message", "text": "Fix the bug"}),
        usage.clone(),
        json!({"type": "assistant_message", "text": "I will now fix it."}),
        json!({"type": "nudge", "reason": "promise", "message": "Do it now."}),
        usage,
        json!({"type": "nudge", "reason": "no_op_edit", "message": "changes nothing"}),
    ];
    let mut events: Vec<Event> = Vec::new();
    for (i, msg) in msgs.into_iter().enumerate() {
        let mut v = msg;
        v["seq"] = json!(i + 1);
        v["task_id"] = json!("t1");
        v["ts"] = json!("2026-12-01T00:00:00.000Z");
        events.push(serde_json::from_value(v).unwrap());
    }
    let messages = rebuild_conversation(&events);
    assert_eq!(
        messages,
        vec![
            ChatMessage::User {
                content: "Fix the bug".into()
            },
            ChatMessage::Assistant {
                content: "I will now fix it.".into(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            },
            // A no-op edit's nudge is its tool result, not a message of its own.
            ChatMessage::User {
                content: "Do it now.".into()
            },
        ]
    );
}
