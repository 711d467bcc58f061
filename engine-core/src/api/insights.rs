//! P10 insights answers.

use serde::Serialize;
use serde_json::Value;

use super::ApiError;
use super::error::parse_json;
use crate::Json;

/// Session insights: a few normalized fields, and the object as received.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Insights {
    /// `has_insights` / `hasInsights`; false when absent.
    pub has_insights: bool,
    /// `harness`, when known.
    pub harness: Option<String>,
    /// `harness_protocol` / `harnessProtocol`, when given (RU-31: it must be the harness's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_protocol: Option<String>,
    /// The whole answer, kept compact.
    pub raw: Json,
}

impl Insights {
    /// What a 404 stands for: no insights, shown as the empty answer `{"has_insights": false}`
    /// (RU-31: the reference's empty snapshot).
    pub fn none() -> Insights {
        Insights {
            has_insights: false,
            harness: None,
            harness_protocol: None,
            raw: Json::compact_of(serde_json::json!({"has_insights": false})),
        }
    }
}

/// Parses a 2xx insights body (snake_case or camelCase). Not a JSON object: malformed.
///
/// `has_insights` wins over `hasInsights`; a value that is not a boolean reads as absent. A
/// `harness` that is not a non-blank string stays unknown.
pub fn parse_insights(body: &[u8]) -> Result<Insights, ApiError> {
    let Some(raw @ Value::Object(_)) = parse_json(body) else {
        return Err(ApiError::Malformed {
            message: "The session insights answer is not a JSON object.".to_owned(),
        });
    };
    let has_insights = ["has_insights", "hasInsights"]
        .iter()
        .find_map(|key| raw.get(*key).and_then(Value::as_bool))
        .unwrap_or(false);
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|key| raw.get(*key).and_then(Value::as_str))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let harness = text(&["harness"]);
    let harness_protocol = text(&["harness_protocol", "harnessProtocol"]);
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
    Ok(Insights {
        has_insights,
        harness,
        harness_protocol,
        raw: Json::compact_of(raw),
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

    #[test]
    fn insights_example() {
        let insights = parse_insights(INSIGHTS_EXAMPLE.as_bytes()).unwrap();
        assert!(insights.has_insights);
        assert_eq!(insights.harness.as_deref(), Some("tau"));
        let raw: Value = serde_json::from_str(INSIGHTS_EXAMPLE).unwrap();
        assert_eq!(insights.raw, raw);
        assert_eq!(
            insights.raw.value()["insights"]["usage"]["tokens"]["total"],
            65
        );
    }

    #[test]
    fn camel_case_and_defaults() {
        let insights = parse_insights(br#"{"hasInsights": true, "harness": "pi"}"#).unwrap();
        assert!(insights.has_insights);
        assert_eq!(insights.harness.as_deref(), Some("pi"));

        // RU-31: each harness with its own protocol; another is refused, naming the expected.
        for (harness, protocol) in [("tau", "tau-session-v1"), ("pi", "pi-checkpoint-v1")] {
            let body = json!({"harness": harness, "harness_protocol": protocol}).to_string();
            let insights = parse_insights(body.as_bytes()).unwrap();
            assert_eq!(insights.harness_protocol.as_deref(), Some(protocol));
        }
        let refused =
            parse_insights(br#"{"harness": "tau", "harnessProtocol": "pi-checkpoint-v1"}"#)
                .unwrap_err()
                .to_string();
        assert!(refused.contains("\"tau-session-v1\""), "{refused}");
        assert_eq!(
            refused,
            "The session insights answer gives harness \"tau\" the protocol \"pi-checkpoint-v1\"; expected \"tau-session-v1\"."
        );
        let other = br#"{"harness": "custom", "harness_protocol": "custom-v9"}"#;
        assert!(
            parse_insights(other).is_ok(),
            "an unknown harness pairs freely"
        );

        let insights = parse_insights(b"{}").unwrap();
        assert_eq!(
            insights,
            Insights {
                has_insights: false,
                harness: None,
                harness_protocol: None,
                raw: Json::compact_of(json!({}))
            }
        );

        // snake_case wins; a non-boolean reads as absent.
        let insights = parse_insights(br#"{"has_insights": false, "hasInsights": true}"#).unwrap();
        assert!(!insights.has_insights);
        let insights = parse_insights(br#"{"has_insights": "true", "hasInsights": true}"#).unwrap();
        assert!(insights.has_insights);
        let insights = parse_insights(br#"{"has_insights": 1, "harness": null}"#).unwrap();
        assert!(!insights.has_insights);
        assert_eq!(insights.harness, None);
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
