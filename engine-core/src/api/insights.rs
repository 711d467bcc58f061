//! P10 insights answers: the harness and protocol checked (RU-31) and the snapshot a surface
//! renders, normalized field by field ([`snapshot`], RU-30).
//!
//! The engine holds the answer as received (compact, shared); the normalized snapshot is built
//! when a host reads it ([`InsightsValue::snapshot`]) or serializes the engine's snapshot, so a
//! ready engine holds no more than the answer's text and a publish copies a pointer.

pub mod snapshot;

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use crate::Json;
pub use snapshot::InsightsSnapshot;

/// Session insights as read: the harness and protocol, and the answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Insights {
    /// `hasInsights` as the snapshot reads it (RU-30).
    pub has_insights: bool,
    /// `harness`, when given.
    pub harness: Option<String>,
    /// `harnessProtocol` / `harness_protocol`, when given (RU-31: it must be the harness's own).
    pub harness_protocol: Option<String>,
    /// The answer, shared with every snapshot that shows it.
    pub value: InsightsValue,
}

impl Insights {
    /// What a 404 stands for (RU-31): the reference's empty snapshot, `hasInsights` false,
    /// `agentSessionId` the session asked about.
    pub fn none(session_uid: &str) -> Insights {
        let mut root = Map::new();
        root.insert("has_insights".into(), Value::Bool(false));
        root.insert(
            "agent_session_uid".into(),
            Value::String(session_uid.into()),
        );
        root.insert("insights".into(), Value::Object(Map::new()));
        Insights {
            has_insights: false,
            harness: None,
            harness_protocol: None,
            value: InsightsValue(Arc::new(Json::compact_of(Value::Object(root)))),
        }
    }
}

/// `activeSessionDetail.insights`: an insights answer (already checked), shown as RU-30's
/// normalized snapshot. Serializes as [`InsightsSnapshot`]; cheap to clone.
#[derive(Clone, PartialEq)]
pub struct InsightsValue(Arc<Json>);

impl InsightsValue {
    /// The normalized snapshot (RU-30), built from the answer.
    pub fn snapshot(&self) -> InsightsSnapshot {
        let value = self.0.value();
        let empty = Map::new();
        let root = value.as_object().unwrap_or(&empty);
        let (harness, protocol) = harness_and_protocol(root);
        snapshot::normalize(root, harness.as_deref(), protocol)
    }

    /// The answer as received (compact).
    pub fn raw(&self) -> &Json {
        &self.0
    }
}

impl std::fmt::Debug for InsightsValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("InsightsValue").field(&*self.0).finish()
    }
}

impl Serialize for InsightsValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.snapshot().serialize(s)
    }
}

/// `harness` and `harnessProtocol` (or `harness_protocol`): the first spelling present, a
/// non-blank string, trimmed.
fn harness_and_protocol(root: &Map<String, Value>) -> (Option<String>, Option<String>) {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|key| root.get(*key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    (
        text(&["harness"]),
        text(&["harnessProtocol", "harness_protocol"]),
    )
}

/// Parses a 2xx insights body (snake_case or camelCase). Not a JSON object: malformed.
///
/// A `harness` that is not a non-blank string stays unknown. RU-31: a known harness (`tau`,
/// `pi`) with another harness's protocol is refused, naming the protocol expected.
pub fn parse_insights(body: &[u8]) -> Result<Insights, ApiError> {
    let Some(Value::Object(root)) = parse_json(body) else {
        return Err(ApiError::Malformed {
            message: "The session insights answer is not a JSON object.".to_owned(),
        });
    };
    let (harness, harness_protocol) = harness_and_protocol(&root);
    // RU-31: each known harness speaks one protocol; an answer pairing it with another is
    // refused (the insights error; readiness is untouched).
    if let (Some(harness), Some(protocol)) = (&harness, &harness_protocol)
        && let Some(expected) = protocol_of(harness)
        && protocol != expected
    {
        return Err(ApiError::Malformed {
            message: format!(
                "The session insights answer gives harness \"{harness}\" the protocol \"{protocol}\"; expected \"{expected}\"."
            ),
        });
    }
    let has_insights = snapshot::has_insights(&root);
    Ok(Insights {
        has_insights,
        harness,
        harness_protocol,
        value: InsightsValue(Arc::new(Json::compact_of(Value::Object(root)))),
    })
}

/// RU-31: the protocol a known harness speaks.
fn protocol_of(harness: &str) -> Option<&'static str> {
    match harness {
        "tau" => Some("tau-session-v1"),
        "pi" => Some("pi-checkpoint-v1"),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::error::hostile_bodies;

    const INSIGHTS_EXAMPLE: &str = r#"{"agent_session_uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "harness": "tau", "harness_protocol": "tau-session-v1", "harness_version": "0.4.2", "computed_at": "2026-10-02T08:17:00Z", "reason": "turn_completed", "updated_at": "2026-10-02T08:16:30Z", "has_insights": true, "entry_count": 2, "last_sequence": 2, "active_branch_entry_count": 2, "entry_type_counts": {"message": 2}, "title": "Ledger chat", "insights": {"version": 1, "model": {"provider": "acme-cloud", "model": "acme-large", "reasoningEffort": "medium", "contextWindow": 200000, "maxOutputTokens": 32000}, "usage": {"totalMessages": 2, "userMessages": 1, "assistantMessages": 1, "assistantTurns": 1, "toolCalls": 1, "toolResults": 1, "estimatedCostUsd": 0.002, "tokens": {"input": 40, "output": 25, "cacheRead": 0, "cacheWrite": 0, "total": 65}}, "context": {"source": "runtime", "status": "measured", "tokens": 65, "contextWindow": 200000, "percentOfContextWindow": 0.0, "latestCompaction": null}}}"#;

    /// RU-30: the documented tau answer, normalized.
    #[test]
    fn insights_example() {
        let insights = parse_insights(INSIGHTS_EXAMPLE.as_bytes()).unwrap();
        assert!(insights.has_insights);
        assert_eq!(insights.harness.as_deref(), Some("tau"));
        let v = serde_json::to_value(&insights.value).unwrap();
        assert_eq!(v["hasInsights"], true);
        assert_eq!(v["agentSessionId"], "5b0c7e1e-1111-4a6e-9c6f-000000000a01");
        assert_eq!(v["harnessProtocol"], "tau-session-v1");
        assert_eq!(v["harnessVersion"], "0.4.2");
        assert_eq!(v["computedAt"], "2026-10-02T08:17:00Z");
        assert_eq!(v["reason"], "turn_completed");
        assert_eq!(v["entryCount"], 2);
        assert_eq!(v["activeBranchEntryCount"], 2);
        assert_eq!(v["entryTypeCounts"], json!({"message": 2}));
        assert_eq!(v["title"], "Ledger chat");
        assert!(
            v.get("checkpointVersion").is_none(),
            "tau has no checkpoint"
        );
        assert_eq!(v["model"]["reasoningEffort"], "medium");
        assert_eq!(v["model"]["maxOutputTokens"], 32000);
        assert_eq!(v["usage"]["tokens"]["total"], 65);
        assert_eq!(v["usage"]["estimatedCostUsd"], 0.002);
        assert_eq!(v["context"]["status"], "measured");
        assert_eq!(v["context"]["latestCompaction"], Value::Null);
        assert_eq!(v["lastTurn"], Value::Null);
        assert_eq!(v["info"], json!({}));
        assert_eq!(v["version"], 1);
        // The session section falls back on the answer's id and update time.
        assert_eq!(
            v["session"],
            json!({"agentId": null, "agentSessionId": "5b0c7e1e-1111-4a6e-9c6f-000000000a01",
                   "lastError": null, "sessionId": null, "startedAt": null, "status": "completed",
                   "threadId": null, "updatedAt": "2026-10-02T08:16:30Z"})
        );
    }

    /// RU-30: `pi` with `has_insights` false, `checkpoint_version` 4 and `insights` `{}`.
    #[test]
    fn pi_without_insights() {
        let body = br#"{"harness": "pi", "harness_protocol": "pi-checkpoint-v1", "has_insights": false, "checkpoint_version": 4, "insights": {}}"#;
        let v = serde_json::to_value(&parse_insights(body).unwrap().value).unwrap();
        assert_eq!(v["hasInsights"], false);
        assert_eq!(v["checkpointVersion"], 4);
        assert_eq!(v["bundleHash"], Value::Null);
        assert_eq!(v["harnessVersion"], "", "a known harness without a version");
        assert_eq!(v["info"], json!({}));
        for key in [
            "context", "model", "usage", "lastTurn", "config", "editable",
        ] {
            assert_eq!(v[key], Value::Null, "{key}");
        }
        assert!(v.get("entryCount").is_none());
        // The 404 stand-in names the session.
        let none = serde_json::to_value(&Insights::none("s-1").value).unwrap();
        assert_eq!(none["hasInsights"], false);
        assert_eq!(none["agentSessionId"], "s-1");
        assert_eq!(none["session"]["agentSessionId"], "s-1");
        assert_eq!(none["harness"], Value::Null);
        assert_eq!(none["checkpointVersion"], Value::Null);
    }

    /// The reference's reads: the first spelling present wins (camelCase first); a
    /// `hasInsights` that is not a boolean is whether any section is there; numbers may come
    /// as strings; `config` completes `model` and `context`; what does not fit is absent.
    #[test]
    fn field_by_field() {
        let has = |body: &[u8]| parse_insights(body).unwrap().has_insights;
        assert!(has(br#"{"has_insights": false, "hasInsights": true}"#));
        assert!(!has(br#"{"hasInsights": null, "has_insights": true}"#));
        assert!(has(br#"{"has_insights": 1, "usage": {"toolCalls": 2}}"#));
        assert!(!has(br#"{"has_insights": 1}"#));
        assert!(has(
            br#"{"insights": {"info": {"ctx": {"label": "Context"}}}}"#
        ));

        let body = json!({
            "harness": "tau", "harness_protocol": "tau-session-v1", "harness_version": 3,
            "entry_count": "4", "lastSequence": " 7 ", "entry_type_counts": {"message": 3, "x": "many", "session_info": "1"},
            "insights": {
                "version": "2",
                "config": {"compaction": {"enabled": true, "reserve_tokens": 1000}, "model": {"context_window": 128000, "provider": "acme"}},
                "model": {"model": "acme-large"},
                "context": {"tokens": 10},
                "session": {"status": "weird", "thread_id": "t-1", "agent_id": 9},
                "last_turn": {"finish_reason": "stop", "model": "not an object", "tokens": {"cache_read": 10}},
                "editable": {"config": {"compaction": {"enabled": {"type": "boolean", "editable": "yes"}, "reserveTokens": {"type": "integer", "editable": 0, "min": 0, "unit": " tokens "}}, "model": {"provider": {"type": "select"}}}},
                "info": {"ctx": {"label": " Context ", "source": [{"kind": "pi_doc", "package": "pi-ai", "path": "/a"}, {"kind": "web"}], "children": {"tokens": {"description": "d"}, "bad": 5}}, "junk": []}
            }
        });
        let v = serde_json::to_value(&parse_insights(body.to_string().as_bytes()).unwrap().value)
            .unwrap();
        assert_eq!(
            v["harnessVersion"], "",
            "not a string: the known harness's empty version"
        );
        assert_eq!(v["entryCount"], 4);
        assert_eq!(v["lastSequence"], 7);
        assert_eq!(
            v["entryTypeCounts"],
            json!({"message": 3, "session_info": 1})
        );
        assert_eq!(v["version"], 1, "a version that is not a number");
        assert_eq!(
            v["model"],
            json!({"contextWindow": 128000, "maxOutputTokens": null, "model": "acme-large", "provider": "acme", "reasoningEffort": null})
        );
        assert_eq!(v["context"]["tokens"], 10);
        assert_eq!(v["context"]["compactionEnabled"], true);
        assert_eq!(v["context"]["compactionReserveTokens"], 1000);
        assert_eq!(v["context"]["contextWindow"], 128000);
        assert_eq!(v["session"]["status"], "completed");
        assert_eq!(v["session"]["threadId"], "t-1");
        assert_eq!(v["session"]["agentId"], 9);
        assert_eq!(v["lastTurn"]["finishReason"], "stop");
        assert_eq!(
            v["lastTurn"]["model"],
            json!({"model": null, "provider": null})
        );
        assert_eq!(v["lastTurn"]["tokens"]["cacheRead"], 10);
        assert_eq!(
            v["editable"]["config"]["compaction"]["enabled"],
            json!({"type": "boolean", "editable": true})
        );
        assert_eq!(
            v["editable"]["config"]["compaction"]["reserveTokens"],
            json!({"type": "integer", "editable": false, "min": 0, "max": null, "step": null, "unit": "tokens"})
        );
        assert_eq!(
            v["editable"]["config"]["compaction"]["thresholdTokens"],
            Value::Null
        );
        assert_eq!(v["editable"]["config"]["model"]["provider"], Value::Null);
        assert_eq!(
            v["info"],
            json!({"ctx": {"label": "Context", "description": null,
                "source": [{"kind": "pi_doc", "package": "pi-ai", "path": "/a", "section": null}],
                "children": {"tokens": {"label": null, "description": "d", "source": [], "children": {}}}}})
        );
    }

    /// RU-31: each harness with its own protocol; another is refused, naming the expected.
    #[test]
    fn harness_and_protocol() {
        for (harness, protocol) in [("tau", "tau-session-v1"), ("pi", "pi-checkpoint-v1")] {
            let body = json!({"harness": harness, "harness_protocol": protocol}).to_string();
            let insights = parse_insights(body.as_bytes()).unwrap();
            assert_eq!(insights.harness_protocol.as_deref(), Some(protocol));
        }
        let refused =
            parse_insights(br#"{"harness": "tau", "harnessProtocol": "pi-checkpoint-v1"}"#)
                .unwrap_err()
                .to_string();
        assert_eq!(
            refused,
            "The session insights answer gives harness \"tau\" the protocol \"pi-checkpoint-v1\"; expected \"tau-session-v1\"."
        );
        let other = br#"{"harness": "custom", "harness_protocol": "custom-v9"}"#;
        assert!(
            parse_insights(other).is_ok(),
            "an unknown harness pairs freely"
        );
        let insights = parse_insights(br#"{"harness": 5}"#).unwrap();
        assert_eq!(insights.harness, None);
    }

    #[test]
    fn not_an_object_is_malformed() {
        let expected = Err(ApiError::Malformed {
            message: "The session insights answer is not a JSON object.".to_owned(),
        });
        for body in ["", "[]", "null", "true", r#""x""#, "{", "<html>"] {
            assert_eq!(parse_insights(body.as_bytes()), expected, "{body}");
        }
    }

    #[test]
    fn hostile_bodies_do_not_panic() {
        for body in hostile_bodies() {
            let _ = parse_insights(&body);
        }
    }
}
