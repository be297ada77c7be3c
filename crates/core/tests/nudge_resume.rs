//! A nudge is part of the conversation: a continued or resumed task sends it again.

use bosun_core::rebuild_conversation;
use bosun_model::ChatMessage;
use bosun_protocol::Event;
use serde_json::json;

fn event(seq: u64, msg: serde_json::Value) -> Event {
    let mut v = json!({"seq": seq, "task_id": "t1", "ts": "2026-12-01T00:00:00.000Z"});
    v.as_object_mut()
        .unwrap()
        .extend(msg.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

#[test]
fn a_nudge_is_rebuilt_as_what_the_model_was_told() {
    let usage = json!({"type": "usage", "model": "m", "input_tokens": 1, "output_tokens": 1,
        "cached_input_tokens": 0, "cache_write_tokens": 0, "cost_usd": null,
        "total_cost_usd": 0.0, "priced": false});
    let events = vec![
        event(1, json!({"type": "user_message", "text": "Fix the bug"})),
        event(2, usage.clone()),
        event(
            3,
            json!({"type": "assistant_message", "text": "I will now fix it."}),
        ),
        event(
            4,
            json!({"type": "nudge", "reason": "promise", "message": "Do it now."}),
        ),
        event(5, usage),
        event(
            6,
            json!({"type": "nudge", "reason": "no_op_edit", "message": "changes nothing"}),
        ),
    ];
    let messages = rebuild_conversation(&events);
    assert_eq!(
        messages,
        vec![
            ChatMessage::User {
                content: "Fix the bug".into()
            },
            ChatMessage::Assistant {
                content: "I will now fix it.".into(),
                tool_calls: Vec::new()
            },
            // A no-op edit's nudge is its tool result, not a message of its own.
            ChatMessage::User {
                content: "Do it now.".into()
            },
        ]
    );
}
