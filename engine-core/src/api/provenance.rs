//! A history message's provenance (P9): who wrote a turn and through which channel, normalized
//! the reference's way and kept twice on the message, as its leading
//! `data-main_sequence_ai_provenance` part and as its metadata (`custom.mainSequenceAi`).

use serde_json::{Map, Value, json};

/// The type of the data part that carries a message's provenance.
pub const PROVENANCE_PART_TYPE: &str = "data-main_sequence_ai_provenance";

/// The trimmed string, unless not a string or blank.
fn text(value: Option<&Value>) -> Option<String> {
    let text = value?.as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A string or a finite number as an id (`25` reads as `"25"`), else `None`.
pub(crate) fn id_like(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            // A whole float reads as the integer it is (as the reference's `String(25.0)`).
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{f:.0}"),
            _ => n.to_string(),
        }),
        other => text(Some(other)),
    }
}

/// The normalized provenance, or `None` without a non-blank string `origin`.
///
/// Every field is present (`null` when absent or invalid): `origin`, `channel`, `actorKind`
/// (`user` or `agent`, any letter case, else `null`), `actorUid` (only with a known
/// `actorKind`), `actorName` (only with an `actorUid`), `callerAgentName`, `handleUniqueId`,
/// `callerAgentSessionUid` (legacy `callerAgentSessionId`) and `targetAgentUid` (legacy
/// `targetAgentId`). Unknown fields are dropped.
pub fn normalize_provenance(raw: &Value) -> Option<Value> {
    let map = raw.as_object()?;
    let origin = text(map.get("origin"))?;
    let actor_kind = text(map.get("actorKind"))
        .map(|kind| kind.to_lowercase())
        .filter(|kind| kind == "user" || kind == "agent");
    let actor_uid = actor_kind
        .as_ref()
        .and_then(|_| id_like(map.get("actorUid")));
    let actor_name = actor_uid.as_ref().and_then(|_| text(map.get("actorName")));
    let either =
        |key: &str, legacy: &str| id_like(map.get(key)).or_else(|| id_like(map.get(legacy)));
    Some(json!({
        "origin": origin,
        "channel": text(map.get("channel")),
        "actorKind": actor_kind,
        "actorUid": actor_uid,
        "actorName": actor_name,
        "callerAgentName": text(map.get("callerAgentName")),
        "handleUniqueId": text(map.get("handleUniqueId")),
        "callerAgentSessionUid": either("callerAgentSessionUid", "callerAgentSessionId"),
        "targetAgentUid": either("targetAgentUid", "targetAgentId"),
    }))
}

/// The message metadata that carries a normalized provenance.
pub fn provenance_metadata(provenance: &Value) -> Value {
    let mut namespace = Map::new();
    namespace.insert("provenance".to_owned(), provenance.clone());
    json!({"custom": {"mainSequenceAi": namespace}})
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn verified_actor_fields_are_kept() {
        let p = normalize_provenance(&json!({
            "origin": "agent", "channel": "a2a", "actorKind": "agent",
            "actorUid": "7a1b", "actorName": "Code Repository Executor",
            "callerAgentSessionUid": "session-uid-52", "targetAgentUid": "agent-uid-25",
            "unknown": [1]
        }));
        assert_eq!(
            p,
            Some(json!({
                "origin": "agent", "channel": "a2a", "actorKind": "agent", "actorUid": "7a1b",
                "actorName": "Code Repository Executor", "callerAgentName": null,
                "handleUniqueId": null, "callerAgentSessionUid": "session-uid-52",
                "targetAgentUid": "agent-uid-25"
            }))
        );
    }

    #[test]
    fn actor_fields_need_a_known_kind_and_a_uid() {
        let p = normalize_provenance(
            &json!({"origin": "user", "actorKind": "service", "actorUid": "u", "actorName": "N"}),
        )
        .unwrap();
        assert_eq!(
            (&p["actorKind"], &p["actorUid"], &p["actorName"]),
            (&Value::Null, &Value::Null, &Value::Null)
        );
        let p = normalize_provenance(
            &json!({"origin": "user", "actorKind": " User ", "actorName": "ada@example.com"}),
        )
        .unwrap();
        assert_eq!(p["actorKind"], json!("user"));
        assert_eq!(
            (&p["actorUid"], &p["actorName"]),
            (&Value::Null, &Value::Null)
        );
        let p =
            normalize_provenance(&json!({"origin": "user", "actorKind": "agent", "actorUid": 7}))
                .unwrap();
        assert_eq!(p["actorUid"], json!("7"));
    }

    #[test]
    fn legacy_names_are_fallbacks() {
        let p = normalize_provenance(&json!({
            "origin": "agent", "callerAgentSessionId": 52, "targetAgentId": "a-25",
            "targetAgentUid": "  "
        }))
        .unwrap();
        assert_eq!(p["callerAgentSessionUid"], json!("52"));
        assert_eq!(p["targetAgentUid"], json!("a-25"));
    }

    /// RU-30: a message without `origin` has no provenance.
    #[test]
    fn no_origin_no_provenance() {
        for raw in [
            json!({"actorKind": "user"}),
            json!({"origin": ""}),
            json!({"origin": 5}),
            json!("user"),
            Value::Null,
        ] {
            assert_eq!(normalize_provenance(&raw), None, "{raw}");
        }
    }

    #[test]
    fn id_like_values() {
        assert_eq!(id_like(Some(&json!(25))), Some("25".to_owned()));
        assert_eq!(id_like(Some(&json!(25.0))), Some("25".to_owned()));
        assert_eq!(id_like(Some(&json!(2.5))), Some("2.5".to_owned()));
        assert_eq!(id_like(Some(&json!(" a "))), Some("a".to_owned()));
        assert_eq!(id_like(Some(&json!(""))), None);
        assert_eq!(id_like(Some(&json!(true))), None);
        assert_eq!(id_like(None), None);
    }
}
