use crate::CallId;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How Bosun's egress proxy answered one connection a command asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum NetworkDecision {
    /// A policy rule names the host.
    Allowed,
    /// Refused: by a rule, because no rule names the host and nobody approved it, or because of
    /// where it resolves (see `reason`).
    Denied,
    /// No rule names the host, and a person approved it.
    Approved,
}

impl NetworkDecision {
    pub fn as_str(&self) -> &'static str {
        match self {
            NetworkDecision::Allowed => "allowed",
            NetworkDecision::Denied => "denied",
            NetworkDecision::Approved => "approved",
        }
    }
}

/// One connection a command made (or tried) through Bosun's egress proxy, reported when it ended;
/// a refused one too, with 0 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct NetworkConnection {
    /// The `run_command` call whose command connected.
    pub call_id: CallId,
    /// The host as the command named it (lowercase), or an IP address it gave.
    pub host: String,
    pub port: u16,
    pub decision: NetworkDecision,
    /// The rule that decided, e.g. `network.domains "pypi.org"`; none when a person decided
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<String>,
    /// For a refused connection: the one-line reason the command was told (its `403`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Bytes the command sent to the host (for a plain HTTP request: the request as forwarded).
    #[ts(type = "number")]
    pub bytes_up: u64,
    /// Bytes the host sent back.
    #[ts(type = "number")]
    pub bytes_down: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, EventMsg, TaskId};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_network_connection_event_is_flat_and_tagged() -> Result<(), serde_json::Error> {
        let ev = Event {
            seq: 9,
            task_id: TaskId::from("01abc"),
            ts: "2026-11-30T03:15:00.123Z".into(),
            msg: EventMsg::NetworkConnection(NetworkConnection {
                call_id: CallId::from("call_1"),
                host: "pypi.org".into(),
                port: 443,
                decision: NetworkDecision::Allowed,
                rule: Some("network.domains \"pypi.org\"".into()),
                reason: None,
                bytes_up: 517,
                bytes_down: 4096,
            }),
        };
        let v = serde_json::to_value(&ev)?;
        assert_eq!(
            v,
            json!({"seq":9,"task_id":"01abc","ts":"2026-11-30T03:15:00.123Z","type":"network_connection",
                   "call_id":"call_1","host":"pypi.org","port":443,"decision":"allowed",
                   "rule":"network.domains \"pypi.org\"","bytes_up":517,"bytes_down":4096})
        );
        assert_eq!(v["type"], ev.msg.kind());
        let back: Event = serde_json::from_value(v)?;
        assert_eq!(back, ev);
        Ok(())
    }
}
