use serde_json::json;

use super::*;
use crate::api::error::hostile_bodies;

const PLATFORM: &str = "https://platform.example.test";

const READY_EXAMPLE: &str = r#"{
  "session_uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01",
  "mode": "token",
  "rpc_url": "https://rt.example.test/agents/ledger",
  "token": "rt-token-abc",
  "expires_at": "2026-10-02T09:15:00Z",
  "is_ready": true,
  "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
  "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "Running.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
}"#;

const TRANSIENT_EXAMPLE: &str = r#"{
  "mode": "unavailable",
  "rpc_url": null,
  "token": null,
  "is_ready": false,
  "detail": "Starting.",
  "runtime_interaction": {"state": "waking", "can_submit": false, "notice": {"code": "agent_waking", "severity": "info", "title": "Starting Ledger Helper", "message": "Ledger Helper is starting."}, "operation": null, "retry_after_ms": 2500},
  "runtime_presence": {"phase": "provisioning", "replicas": {"desired": 1, "actual": 0}, "detail": "Waiting for capacity.", "observed_at": "2026-10-02T08:20:00Z", "wake": {"operation_uid": "op-17", "state": "in_progress", "requested_at": "2026-10-02T08:19:50Z", "deadline_at": "2026-10-02T08:29:50Z"}}
}"#;

const TERMINAL_EXAMPLE: &str = r#"{
  "mode": "unavailable",
  "rpc_url": null,
  "token": null,
  "runtime_interaction": {"state": "update_failed", "can_submit": false, "notice": {"code": "agent_update_failed", "severity": "error", "title": "Update failed", "message": "Ledger Helper could not be updated."}, "operation": {"uid": "op-18", "status": "failed", "created_at": "2026-10-02T08:00:00Z", "started_at": "2026-10-02T08:00:05Z", "finished_at": "2026-10-02T08:03:00Z", "support_reference": "upd-op-18"}, "retry_after_ms": null},
  "runtime_presence": {"phase": "failed", "replicas": {"desired": 1, "actual": 0}, "detail": "Update failed.", "observed_at": "2026-10-02T08:03:00Z", "wake": null}
}"#;

/// A named change to an example answer.
type Edit = (&'static str, fn(&mut Value));

const CONTRACT: &str =
    "Runtime access response is missing the runtime interaction or presence contract.";

fn ready() -> Value {
    serde_json::from_str(READY_EXAMPLE).unwrap()
}

fn transient() -> Value {
    serde_json::from_str(TRANSIENT_EXAMPLE).unwrap()
}

fn parse(value: &Value) -> Result<RuntimeAccess, ApiError> {
    parse_runtime_access(value.to_string().as_bytes(), PLATFORM)
}

fn access(value: &Value) -> RuntimeAccess {
    parse(value).unwrap()
}

fn malformed_message(result: Result<RuntimeAccess, ApiError>) -> String {
    match result {
        Err(ApiError::Malformed { message }) => message,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

fn endpoint(access: &RuntimeAccess) -> &RuntimeEndpoint {
    match &access.mode {
        AccessMode::Token(endpoint) => endpoint,
        other => panic!("expected a token mode, got {other:?}"),
    }
}

/// The ready example with its `rpc_url` replaced.
fn with_rpc_url(rpc_url: &str) -> Value {
    let mut value = ready();
    value["rpc_url"] = json!(rpc_url);
    value
}

fn resolve(rpc_url: &str) -> Option<String> {
    resolve_rpc_url(rpc_url, PLATFORM)
}

#[test]
fn ready_example() {
    let access = parse_runtime_access(READY_EXAMPLE.as_bytes(), PLATFORM).unwrap();
    assert_eq!(
        access.interaction,
        RuntimeInteraction {
            state: InteractionState::Ready,
            can_submit: true,
            notice: None,
            support_reference: None,
            retry_after_ms: None,
        }
    );
    assert_eq!(
        access.presence,
        RuntimePresence {
            phase: PresencePhase::Serving,
            detail: "Running.".to_owned(),
            desired_replicas: Some(1),
            actual_replicas: Some(1),
            observed_at: Some("2026-10-02T08:20:00Z".to_owned()),
            wake: None,
        }
    );
    let endpoint = endpoint(&access);
    assert_eq!(endpoint.rpc_url, "https://rt.example.test/agents/ledger");
    assert_eq!(endpoint.token.expose(), "rt-token-abc");
    assert!(!format!("{access:?}").contains("rt-token-abc"));
    assert!(!format!("{access:#?}").contains("rt-token-abc"));
}

#[test]
fn transient_example() {
    let access = parse_runtime_access(TRANSIENT_EXAMPLE.as_bytes(), PLATFORM).unwrap();
    assert_eq!(
        access.interaction,
        RuntimeInteraction {
            state: InteractionState::Waking,
            can_submit: false,
            notice: Some(RuntimeNotice {
                code: "agent_waking".to_owned(),
                severity: Severity::Info,
                title: "Starting Ledger Helper".to_owned(),
                message: "Ledger Helper is starting.".to_owned(),
            }),
            support_reference: None,
            retry_after_ms: Some(2500),
        }
    );
    assert!(access.interaction.state.is_transient());
    assert_eq!(
        access.presence,
        RuntimePresence {
            phase: PresencePhase::Provisioning,
            detail: "Waiting for capacity.".to_owned(),
            desired_replicas: Some(1),
            actual_replicas: Some(0),
            observed_at: Some("2026-10-02T08:20:00Z".to_owned()),
            wake: Some(Wake {
                operation_uid: "op-17".to_owned(),
                state: "in_progress".to_owned(),
                requested_at: "2026-10-02T08:19:50Z".to_owned(),
                deadline_at: "2026-10-02T08:29:50Z".to_owned(),
            }),
        }
    );
    assert_eq!(
        access.mode,
        AccessMode::Unavailable {
            detail: Some("Starting.".to_owned())
        }
    );
}

#[test]
fn terminal_example() {
    let access = parse_runtime_access(TERMINAL_EXAMPLE.as_bytes(), PLATFORM).unwrap();
    assert_eq!(access.interaction.state, InteractionState::UpdateFailed);
    assert!(!access.interaction.state.is_transient());
    assert!(!access.interaction.can_submit);
    assert_eq!(
        access.interaction.notice,
        Some(RuntimeNotice {
            code: "agent_update_failed".to_owned(),
            severity: Severity::Error,
            title: "Update failed".to_owned(),
            message: "Ledger Helper could not be updated.".to_owned(),
        })
    );
    assert_eq!(
        access.interaction.support_reference.as_deref(),
        Some("upd-op-18")
    );
    assert_eq!(access.interaction.retry_after_ms, None);
    assert_eq!(access.presence.phase, PresencePhase::Failed);
    assert_eq!(access.presence.detail, "Update failed.");
    assert_eq!(access.presence.wake, None);
    assert_eq!(access.mode, AccessMode::Unavailable { detail: None });
}

#[test]
fn every_state_and_phase_is_read() {
    let states = [
        ("ready", InteractionState::Ready),
        ("warning", InteractionState::Warning),
        ("checking", InteractionState::Checking),
        ("starting", InteractionState::Starting),
        ("waking", InteractionState::Waking),
        ("update_required", InteractionState::UpdateRequired),
        ("updating", InteractionState::Updating),
        ("update_failed", InteractionState::UpdateFailed),
        ("unavailable", InteractionState::Unavailable),
    ];
    for (name, state) in states {
        let mut value = ready();
        value["runtime_interaction"]["state"] = json!(name);
        assert_eq!(access(&value).interaction.state, state, "{name}");
    }
    let phases = [
        ("not_deployed", PresencePhase::NotDeployed),
        ("observing", PresencePhase::Observing),
        ("idle", PresencePhase::Idle),
        ("provisioning", PresencePhase::Provisioning),
        ("pulling_image", PresencePhase::PullingImage),
        ("starting", PresencePhase::Starting),
        ("serving", PresencePhase::Serving),
        ("redeploying", PresencePhase::Redeploying),
        ("failed", PresencePhase::Failed),
    ];
    for (name, phase) in phases {
        let mut value = ready();
        value["runtime_presence"]["phase"] = json!(name);
        assert_eq!(access(&value).presence.phase, phase, "{name}");
    }
}

#[test]
fn camel_case_spellings() {
    let value = json!({
        "mode": "token",
        "rpcUrl": "https://rt.example.test/agents/ledger/",
        "token": "rt-token-camel",
        "runtimeInteraction": {
            "state": "warning",
            "canSubmit": true,
            "notice": {"code": "c", "severity": "warning", "title": "T", "message": "M"},
            "operation": {"uid": "op-1", "status": "succeeded", "createdAt": "2026-10-02T08:00:00Z", "supportReference": "ref-1"},
            "retryAfterMs": 1200
        },
        "runtimePresence": {
            "phase": "serving",
            "detail": "Running.",
            "replicas": {"desired": 2, "actual": 1},
            "observedAt": "2026-10-02T08:20:00Z",
            "wake": {"operationUid": "op-2", "state": "serving", "requestedAt": "a", "deadlineAt": "b"}
        }
    });
    let access = access(&value);
    assert_eq!(access.interaction.state, InteractionState::Warning);
    assert!(access.interaction.can_submit);
    assert_eq!(
        access.interaction.notice.as_ref().map(|n| n.severity),
        Some(Severity::Warning)
    );
    assert_eq!(
        access.interaction.support_reference.as_deref(),
        Some("ref-1")
    );
    assert_eq!(access.interaction.retry_after_ms, Some(1200));
    assert_eq!(access.presence.desired_replicas, Some(2));
    assert_eq!(access.presence.actual_replicas, Some(1));
    assert_eq!(
        access.presence.observed_at.as_deref(),
        Some("2026-10-02T08:20:00Z")
    );
    assert_eq!(
        access.presence.wake,
        Some(Wake {
            operation_uid: "op-2".to_owned(),
            state: "serving".to_owned(),
            requested_at: "a".to_owned(),
            deadline_at: "b".to_owned(),
        })
    );
    let endpoint = endpoint(&access);
    assert_eq!(endpoint.rpc_url, "https://rt.example.test/agents/ledger");
    assert_eq!(endpoint.token.expose(), "rt-token-camel");
}

#[test]
fn snake_case_wins_over_camel_case() {
    let mut value = ready();
    value["rpcUrl"] = json!("https://camel.example.test/x");
    value["runtimeInteraction"] = json!({"state": "unavailable", "canSubmit": false});
    value["runtimePresence"] = json!({"phase": "failed", "detail": "Camel."});
    value["runtime_interaction"]["canSubmit"] = json!(false);
    value["runtime_interaction"]["retry_after_ms"] = json!(100);
    value["runtime_interaction"]["retryAfterMs"] = json!(900);
    value["runtime_presence"]["observedAt"] = json!("camel");
    let access = access(&value);
    assert_eq!(access.interaction.state, InteractionState::Ready);
    assert!(access.interaction.can_submit);
    assert_eq!(access.interaction.retry_after_ms, Some(100));
    assert_eq!(access.presence.detail, "Running.");
    assert_eq!(
        access.presence.observed_at.as_deref(),
        Some("2026-10-02T08:20:00Z")
    );
    assert_eq!(
        endpoint(&access).rpc_url,
        "https://rt.example.test/agents/ledger"
    );

    // A snake_case value of the wrong type still wins (and is judged on its own).
    let mut value = ready();
    value["runtime_interaction"]["can_submit"] = json!("yes");
    value["runtime_interaction"]["canSubmit"] = json!(true);
    assert_eq!(malformed_message(parse(&value)), CONTRACT);
}

#[test]
fn null_snake_case_falls_back_to_camel_case() {
    let mut value = ready();
    value["rpc_url"] = Value::Null;
    value["rpcUrl"] = json!("https://camel.example.test/x");
    value["runtime_interaction"]["retry_after_ms"] = Value::Null;
    value["runtime_interaction"]["retryAfterMs"] = json!(700);
    let access = access(&value);
    assert_eq!(endpoint(&access).rpc_url, "https://camel.example.test/x");
    assert_eq!(access.interaction.retry_after_ms, Some(700));
}

#[test]
fn not_an_object_is_malformed() {
    let bodies: [&[u8]; 12] = [
        b"",
        b" ",
        b"null",
        b"[]",
        b"[{}]",
        b"\"x\"",
        b"5",
        b"true",
        b"{",
        b"{\"mode\": }",
        b"\xFF\xFE",
        b"<html>",
    ];
    for body in bodies {
        assert_eq!(
            malformed_message(parse_runtime_access(body, PLATFORM)),
            "The runtime access answer is not a JSON object.",
            "{body:?}"
        );
    }
    // A leading byte order mark is tolerated.
    let mut with_bom = b"\xEF\xBB\xBF".to_vec();
    with_bom.extend_from_slice(READY_EXAMPLE.as_bytes());
    assert!(parse_runtime_access(&with_bom, PLATFORM).is_ok());
}

#[test]
fn missing_or_malformed_contract_is_malformed() {
    let edits: Vec<Edit> = vec![
        ("no interaction", |v| {
            v.as_object_mut().unwrap().remove("runtime_interaction");
        }),
        ("null interaction", |v| {
            v["runtime_interaction"] = Value::Null
        }),
        ("interaction array", |v| {
            v["runtime_interaction"] = json!([])
        }),
        ("interaction string", |v| {
            v["runtime_interaction"] = json!("ready")
        }),
        ("no state", |v| {
            v["runtime_interaction"]
                .as_object_mut()
                .unwrap()
                .remove("state");
        }),
        ("unknown state", |v| {
            v["runtime_interaction"]["state"] = json!("sleeping")
        }),
        ("state wrong case", |v| {
            v["runtime_interaction"]["state"] = json!("READY")
        }),
        ("state number", |v| {
            v["runtime_interaction"]["state"] = json!(1)
        }),
        ("no can_submit", |v| {
            v["runtime_interaction"]
                .as_object_mut()
                .unwrap()
                .remove("can_submit");
        }),
        ("can_submit null", |v| {
            v["runtime_interaction"]["can_submit"] = Value::Null
        }),
        ("can_submit string", |v| {
            v["runtime_interaction"]["can_submit"] = json!("true")
        }),
        ("can_submit number", |v| {
            v["runtime_interaction"]["can_submit"] = json!(1)
        }),
        ("no presence", |v| {
            v.as_object_mut().unwrap().remove("runtime_presence");
        }),
        ("presence null", |v| v["runtime_presence"] = Value::Null),
        ("presence number", |v| v["runtime_presence"] = json!(3)),
        ("presence array", |v| v["runtime_presence"] = json!([{}])),
        ("no phase", |v| {
            v["runtime_presence"]
                .as_object_mut()
                .unwrap()
                .remove("phase");
        }),
        ("unknown phase", |v| {
            v["runtime_presence"]["phase"] = json!("napping")
        }),
        ("phase object", |v| {
            v["runtime_presence"]["phase"] = json!({})
        }),
        ("no detail", |v| {
            v["runtime_presence"]
                .as_object_mut()
                .unwrap()
                .remove("detail");
        }),
        ("empty detail", |v| {
            v["runtime_presence"]["detail"] = json!("")
        }),
        ("blank detail", |v| {
            v["runtime_presence"]["detail"] = json!("  \t ")
        }),
        ("detail number", |v| {
            v["runtime_presence"]["detail"] = json!(5)
        }),
        ("detail null", |v| {
            v["runtime_presence"]["detail"] = Value::Null
        }),
    ];
    for (name, edit) in edits {
        let mut value = ready();
        edit(&mut value);
        assert_eq!(malformed_message(parse(&value)), CONTRACT, "{name}");
        // The same with can_submit false (where it still exists) and an unavailable mode.
        let mut value = transient();
        edit(&mut value);
        assert_eq!(
            malformed_message(parse(&value)),
            CONTRACT,
            "{name} (transient)"
        );
    }
    assert_eq!(malformed_message(parse(&json!({}))), CONTRACT);
}

#[test]
fn notice_is_lenient() {
    let complete = json!({"code": "c", "severity": "success", "title": "T", "message": "M"});
    let mut value = transient();
    value["runtime_interaction"]["notice"] = complete.clone();
    assert_eq!(
        access(&value).interaction.notice,
        Some(RuntimeNotice {
            code: "c".to_owned(),
            severity: Severity::Success,
            title: "T".to_owned(),
            message: "M".to_owned(),
        })
    );
    let incomplete = [
        json!(null),
        json!("notice"),
        json!([complete.clone()]),
        json!({}),
        json!({"severity": "info", "title": "T", "message": "M"}),
        json!({"code": "", "severity": "info", "title": "T", "message": "M"}),
        json!({"code": "c", "severity": "info", "title": " ", "message": "M"}),
        json!({"code": "c", "severity": "info", "title": "T"}),
        json!({"code": "c", "severity": "info", "title": "T", "message": 5}),
        json!({"code": "c", "severity": "fatal", "title": "T", "message": "M"}),
        json!({"code": "c", "severity": "INFO", "title": "T", "message": "M"}),
        json!({"code": "c", "severity": null, "title": "T", "message": "M"}),
        json!({"code": "c", "title": "T", "message": "M"}),
    ];
    for notice in incomplete {
        let mut value = transient();
        value["runtime_interaction"]["notice"] = notice.clone();
        let access = access(&value);
        assert_eq!(access.interaction.notice, None, "{notice}");
        assert_eq!(access.interaction.state, InteractionState::Waking);
    }
}

#[test]
fn operation_is_lenient() {
    let complete = json!({"uid": "op-18", "status": "failed", "created_at": "2026-10-02T08:00:00Z", "support_reference": "upd-op-18"});
    for status in OPERATION_STATUSES {
        let mut operation = complete.clone();
        operation["status"] = json!(status);
        let mut value = transient();
        value["runtime_interaction"]["operation"] = operation;
        assert_eq!(
            access(&value).interaction.support_reference.as_deref(),
            Some("upd-op-18"),
            "{status}"
        );
    }
    let incomplete = [
        json!(null),
        json!("upd-op-18"),
        json!([complete.clone()]),
        json!({"status": "failed", "created_at": "t", "support_reference": "r"}),
        json!({"uid": "", "status": "failed", "created_at": "t", "support_reference": "r"}),
        json!({"uid": "op", "status": "exploded", "created_at": "t", "support_reference": "r"}),
        json!({"uid": "op", "created_at": "t", "support_reference": "r"}),
        json!({"uid": "op", "status": "failed", "support_reference": "r"}),
        json!({"uid": "op", "status": "failed", "created_at": 5, "support_reference": "r"}),
        json!({"uid": "op", "status": "failed", "created_at": "t"}),
        json!({"uid": "op", "status": "failed", "created_at": "t", "support_reference": ""}),
        json!({"uid": "op", "status": "failed", "created_at": "t", "support_reference": 18}),
    ];
    for operation in incomplete {
        let mut value = transient();
        value["runtime_interaction"]["operation"] = operation.clone();
        assert_eq!(
            access(&value).interaction.support_reference,
            None,
            "{operation}"
        );
    }
}

#[test]
fn retry_after_ms_edge_cases() {
    let cases = [
        (json!(2500), Some(2500)),
        (json!(0), Some(0)),
        (json!(-5), Some(0)),
        (json!(-0.0), Some(0)),
        (json!(-1.5), Some(0)),
        (json!(2500.7), Some(2500)),
        (json!(0.9), Some(0)),
        (json!(1e30), Some(u64::MAX)),
        (json!(u64::MAX), Some(u64::MAX)),
        (json!(i64::MIN), Some(0)),
        (json!("300"), None),
        (json!(true), None),
        (json!(null), None),
        (json!([300]), None),
        (json!({"ms": 300}), None),
    ];
    for (raw, expected) in cases {
        let mut value = transient();
        value["runtime_interaction"]["retry_after_ms"] = raw.clone();
        assert_eq!(access(&value).interaction.retry_after_ms, expected, "{raw}");
    }
    // Beyond u64 and i64 in the raw text.
    for (raw, expected) in [
        ("18446744073709551616", u64::MAX),
        ("-9223372036854775809", 0),
        ("1e300", u64::MAX),
    ] {
        let body = TRANSIENT_EXAMPLE.replace(
            r#""retry_after_ms": 2500"#,
            &format!(r#""retry_after_ms": {raw}"#),
        );
        let access = parse_runtime_access(body.as_bytes(), PLATFORM).unwrap();
        assert_eq!(access.interaction.retry_after_ms, Some(expected), "{raw}");
    }
    // Absent.
    let mut value = transient();
    value["runtime_interaction"]
        .as_object_mut()
        .unwrap()
        .remove("retry_after_ms");
    assert_eq!(access(&value).interaction.retry_after_ms, None);
}

#[test]
fn replicas_and_observed_at_are_lenient() {
    let cases = [
        (json!({"desired": 3, "actual": 0}), (Some(3), Some(0))),
        (json!({"desired": null, "actual": 2}), (None, Some(2))),
        (json!({"actual": 2}), (None, Some(2))),
        (json!({}), (None, None)),
        (json!({"desired": -1, "actual": 1.5}), (None, None)),
        (json!({"desired": "1", "actual": true}), (None, None)),
        (json!({"desired": [1], "actual": {"n": 1}}), (None, None)),
        (json!([1, 1]), (None, None)),
        (json!("1/1"), (None, None)),
        (json!(null), (None, None)),
    ];
    for (replicas, (desired, actual)) in cases {
        let mut value = ready();
        value["runtime_presence"]["replicas"] = replicas.clone();
        let presence = access(&value).presence;
        assert_eq!(presence.desired_replicas, desired, "{replicas}");
        assert_eq!(presence.actual_replicas, actual, "{replicas}");
    }
    let mut value = ready();
    value["runtime_presence"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    let presence = access(&value).presence;
    assert_eq!(
        (presence.desired_replicas, presence.actual_replicas),
        (None, None)
    );

    for observed_at in [json!(null), json!(5), json!(""), json!({})] {
        let mut value = ready();
        value["runtime_presence"]["observed_at"] = observed_at.clone();
        assert_eq!(access(&value).presence.observed_at, None, "{observed_at}");
    }
}

#[test]
fn wake_is_lenient() {
    let complete = json!({"operation_uid": "op-17", "state": "requested", "requested_at": "r", "deadline_at": "d"});
    for state in WAKE_STATES {
        let mut wake = complete.clone();
        wake["state"] = json!(state);
        let mut value = transient();
        value["runtime_presence"]["wake"] = wake;
        assert_eq!(
            access(&value).presence.wake.map(|wake| wake.state),
            Some(state.to_owned())
        );
    }
    let incomplete = [
        json!(null),
        json!("op-17"),
        json!([complete.clone()]),
        json!({}),
        json!({"state": "requested", "requested_at": "r", "deadline_at": "d"}),
        json!({"operation_uid": "", "state": "requested", "requested_at": "r", "deadline_at": "d"}),
        json!({"operation_uid": "op", "state": "asleep", "requested_at": "r", "deadline_at": "d"}),
        json!({"operation_uid": "op", "state": 1, "requested_at": "r", "deadline_at": "d"}),
        json!({"operation_uid": "op", "state": "requested", "deadline_at": "d"}),
        json!({"operation_uid": "op", "state": "requested", "requested_at": " ", "deadline_at": "d"}),
        json!({"operation_uid": "op", "state": "requested", "requested_at": "r"}),
        json!({"operation_uid": "op", "state": "requested", "requested_at": "r", "deadline_at": 0}),
    ];
    for wake in incomplete {
        let mut value = transient();
        value["runtime_presence"]["wake"] = wake.clone();
        let access = access(&value);
        assert_eq!(access.presence.wake, None, "{wake}");
        assert_eq!(access.presence.phase, PresencePhase::Provisioning);
    }
}

#[test]
fn unavailable_mode_detail() {
    let cases = [
        (json!({"detail": "Top."}), Some("Top.")),
        (
            json!({"detail": "Top.", "ready": {"ready": false, "detail": "Nested."}}),
            Some("Top."),
        ),
        (
            json!({"ready": {"ready": false, "detail": "Nested."}}),
            Some("Nested."),
        ),
        (
            json!({"detail": "  ", "ready": {"detail": " Nested. "}}),
            Some("Nested."),
        ),
        (
            json!({"detail": null, "ready": {"detail": "Nested."}}),
            Some("Nested."),
        ),
        (json!({"detail": 5, "ready": {"detail": ""}}), None),
        (json!({"ready": true}), None),
        (json!({"ready": "Nested."}), None),
        (json!({}), None),
    ];
    for (extra, expected) in cases {
        for can_submit in [false, true] {
            let mut value = transient();
            let map = value.as_object_mut().unwrap();
            map.remove("detail");
            for (key, field) in extra.as_object().unwrap() {
                map.insert(key.clone(), field.clone());
            }
            value["runtime_interaction"]["can_submit"] = json!(can_submit);
            assert_eq!(
                access(&value).mode,
                AccessMode::Unavailable {
                    detail: expected.map(str::to_owned)
                },
                "{extra} can_submit={can_submit}"
            );
        }
    }
    // An unavailable mode may carry an rpc_url and token; they are not read.
    let mut value = ready();
    value["mode"] = json!("unavailable");
    assert_eq!(
        access(&value).mode,
        AccessMode::Unavailable { detail: None }
    );
}

#[test]
fn other_modes() {
    let modes = [
        json!(null),
        json!("direct"),
        json!("TOKEN"),
        json!(" token"),
        json!(""),
        json!(1),
        json!(["token"]),
    ];
    for mode in modes {
        let mut value = ready();
        value["mode"] = mode.clone();
        assert_eq!(
            malformed_message(parse(&value)),
            "The runtime access answer can submit but names no runtime.",
            "{mode}"
        );
        value["runtime_interaction"]["can_submit"] = json!(false);
        assert_eq!(access(&value).mode, AccessMode::Other, "{mode}");
    }
    let mut value = ready();
    value.as_object_mut().unwrap().remove("mode");
    assert_eq!(
        malformed_message(parse(&value)),
        "The runtime access answer can submit but names no runtime."
    );
    value["runtime_interaction"]["can_submit"] = json!(false);
    assert_eq!(access(&value).mode, AccessMode::Other);
}

#[test]
fn token_mode_needs_rpc_url_and_token() {
    let edits: Vec<Edit> = vec![
        ("no token", |v| {
            v.as_object_mut().unwrap().remove("token");
        }),
        ("null token", |v| v["token"] = Value::Null),
        ("empty token", |v| v["token"] = json!("")),
        ("blank token", |v| v["token"] = json!(" \t\n ")),
        ("numeric token", |v| v["token"] = json!(12345)),
        ("object token", |v| v["token"] = json!({"value": "t"})),
        ("no rpc_url", |v| {
            v.as_object_mut().unwrap().remove("rpc_url");
        }),
        ("null rpc_url", |v| v["rpc_url"] = Value::Null),
        ("empty rpc_url", |v| v["rpc_url"] = json!("")),
        ("numeric rpc_url", |v| v["rpc_url"] = json!(8080)),
        ("javascript rpc_url", |v| {
            v["rpc_url"] = json!("javascript:alert(1)")
        }),
        ("rpc_url with query", |v| {
            v["rpc_url"] = json!("https://rt.example.test/a?x=1")
        }),
    ];
    for (name, edit) in edits {
        let mut value = ready();
        edit(&mut value);
        assert_eq!(
            malformed_message(parse(&value)),
            "The runtime access answer has no usable rpc_url or token.",
            "{name}"
        );
        value["runtime_interaction"]["can_submit"] = json!(false);
        value["runtime_interaction"]["state"] = json!("waking");
        assert_eq!(access(&value).mode, AccessMode::Other, "{name}");
    }
}

#[test]
fn token_mode_with_can_submit_false_keeps_the_endpoint() {
    let mut value = ready();
    value["runtime_interaction"]["state"] = json!("update_required");
    value["runtime_interaction"]["can_submit"] = json!(false);
    let access = access(&value);
    assert_eq!(
        endpoint(&access).rpc_url,
        "https://rt.example.test/agents/ledger"
    );
}

#[test]
fn token_is_trimmed_and_never_shown() {
    let mut value = ready();
    value["token"] = json!("  secret-runtime-token-XYZ \n");
    let access = access(&value);
    assert_eq!(endpoint(&access).token.expose(), "secret-runtime-token-XYZ");
    for shown in [
        format!("{access:?}"),
        format!("{access:#?}"),
        format!("{:?}", access.mode),
        format!("{:?}", endpoint(&access)),
    ] {
        assert!(!shown.contains("secret-runtime-token-XYZ"), "{shown}");
        assert!(!shown.contains("runtime-token"), "{shown}");
    }
    let serialized = serde_json::to_string(&endpoint(&access).token).unwrap();
    assert!(!serialized.contains("secret-runtime-token-XYZ"));
}

#[test]
fn errors_never_show_the_token() {
    let mut value = ready();
    value["token"] = json!("leaky-token-123");
    value["rpc_url"] = json!("ftp://rt.example.test/a");
    let error = parse(&value).unwrap_err();
    assert!(!format!("{error:?}").contains("leaky-token-123"));
    assert!(!error.to_string().contains("leaky-token-123"));
}

#[test]
fn rpc_url_absolute_forms() {
    let cases = [
        (
            "https://rt.example.test/agents/ledger",
            "https://rt.example.test/agents/ledger",
        ),
        (
            "https://rt.example/agents/a1/",
            "https://rt.example/agents/a1",
        ),
        (
            "https://rt.example/agents/a1///",
            "https://rt.example/agents/a1",
        ),
        ("https://rt.example/", "https://rt.example"),
        ("https://rt.example", "https://rt.example"),
        ("http://rt.example:8080/a1", "http://rt.example:8080/a1"),
        ("HTTPS://RT.example/A1", "https://RT.example/A1"),
        ("  https://rt.example/a1  ", "https://rt.example/a1"),
        ("https://[::1]:8443/a1", "https://[::1]:8443/a1"),
        ("http://127.0.0.1/a1", "http://127.0.0.1/a1"),
        (
            "https://rt-1.internal_svc.example/a%20b",
            "https://rt-1.internal_svc.example/a%20b",
        ),
    ];
    for (rpc_url, expected) in cases {
        assert_eq!(resolve(rpc_url).as_deref(), Some(expected), "{rpc_url}");
        assert_eq!(
            endpoint(&access(&with_rpc_url(rpc_url))).rpc_url,
            expected,
            "{rpc_url}"
        );
    }
}

#[test]
fn rpc_url_relative_forms() {
    let cases = [
        ("//rt.example/agents/a1", "https://rt.example/agents/a1"),
        ("//rt.example/agents/a1/", "https://rt.example/agents/a1"),
        ("/rt/a1", "https://platform.example.test/rt/a1"),
        ("/rt/a1/", "https://platform.example.test/rt/a1"),
        ("/", "https://platform.example.test"),
        ("rt.example/a1", "https://rt.example/a1"),
        ("rt.example", "https://rt.example"),
        ("rt.example:8443/a1", "https://rt.example:8443/a1"),
        ("localhost:3000", "https://localhost:3000"),
    ];
    for (rpc_url, expected) in cases {
        assert_eq!(resolve(rpc_url).as_deref(), Some(expected), "{rpc_url}");
    }
    // The platform's scheme and origin are used, never its path.
    let base = "http://platform.example.test:8000/prefix/api";
    assert_eq!(
        resolve_rpc_url("/rt/a1", base).as_deref(),
        Some("http://platform.example.test:8000/rt/a1")
    );
    assert_eq!(
        resolve_rpc_url("//rt.example/a1", base).as_deref(),
        Some("http://rt.example/a1")
    );
    assert_eq!(
        resolve_rpc_url("rt.example/a1", base).as_deref(),
        Some("http://rt.example/a1")
    );
    // Through the parser, with a platform base that has a path prefix.
    let body = with_rpc_url("/rt/a1/").to_string();
    let access =
        parse_runtime_access(body.as_bytes(), "https://platform.example.test/prefix").unwrap();
    assert_eq!(
        endpoint(&access).rpc_url,
        "https://platform.example.test/rt/a1"
    );
    // A platform base with a trailing slash works too.
    assert_eq!(
        resolve_rpc_url("/rt/a1", "https://platform.example.test/").as_deref(),
        Some("https://platform.example.test/rt/a1")
    );
}

#[test]
fn relative_rpc_url_needs_a_usable_platform_base() {
    for base in [
        "",
        "platform.example.test",
        "ftp://platform.example.test",
        "https://",
        "/api",
    ] {
        for rpc_url in ["/rt/a1", "//rt.example/a1", "rt.example/a1"] {
            assert_eq!(resolve_rpc_url(rpc_url, base), None, "{rpc_url} on {base}");
        }
        // An absolute rpc_url needs no base.
        assert_eq!(
            resolve_rpc_url("https://rt.example/a1", base).as_deref(),
            Some("https://rt.example/a1")
        );
    }
}

#[test]
fn rpc_url_refusals() {
    let refused = [
        "",
        "   ",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,hi",
        "ftp://rt.example/a1",
        "file:///etc/passwd",
        "mailto:a@b.example",
        "ws://rt.example/a1",
        "http:rt.example/a1",
        "https:/rt.example/a1",
        "https://",
        "https:///a1",
        "//",
        "///a1",
        "https://rt.example/a1?x=1",
        "https://rt.example/a1#frag",
        "/rt/a1?token=1",
        "rt.example/a1#x",
        "https://rt.example/a 1",
        "https://rt .example/a1",
        "https://rt.example/a\t1",
        "https://rt.example/a\n1",
        "https://rt.example/a\u{0}1",
        "https://rt.example/a\u{7f}1",
        "https://rt.example\\a1",
        "https:\\\\rt.example/a1",
        "https://rt.ex\u{e4}mple/a1",
        "https://rt.example:port/a1",
        "https://rt.example:/a1",
        "https://rt.example:123456/a1",
        "https://:8080/a1",
        "https://user@/a1",
        "https://[/a1",
        "https://[]/a1",
        "https://[::1/a1",
        "https://[::1]x/a1",
        "https://[a[b]/a1",
        "https://[a[b]:8443/a1",
        "https://rt]example/a1",
        "https://.../a1",
        "https://rt.example,evil/a1",
    ];
    for rpc_url in refused {
        assert_eq!(resolve(rpc_url), None, "{rpc_url:?}");
        assert_eq!(
            malformed_message(parse(&with_rpc_url(rpc_url))),
            "The runtime access answer has no usable rpc_url or token.",
            "{rpc_url:?}"
        );
    }
}

#[test]
fn hostile_bodies_do_not_panic() {
    for body in hostile_bodies() {
        let _ = parse_runtime_access(&body, PLATFORM);
        let _ = parse_runtime_access(&body, "");
    }
    let huge = "x".repeat(1_000_000);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut bodies = vec![
        String::new(),
        "null".to_owned(),
        "[]".to_owned(),
        r#""x""#.to_owned(),
        deep.clone(),
        format!(r#""{huge}""#),
        format!(r#"{{"mode": "{huge}", "runtime_interaction": {deep}}}"#),
    ];
    for (path, replacement) in [
        ("token", json!(huge)),
        ("rpc_url", json!(huge)),
        ("rpc_url", json!(format!("https://{huge}"))),
        ("rpc_url", json!(format!("/{}", "/".repeat(1_000_000)))),
        (
            "rpc_url",
            json!(format!("https://rt.example/{}", "/".repeat(1_000_000))),
        ),
        ("rpc_url", json!(format!("{}:{}", huge, huge))),
        ("rpc_url", json!(":".repeat(10_000))),
        ("rpc_url", json!("[".repeat(10_000))),
        ("rpc_url", json!("@".repeat(10_000))),
        ("rpc_url", json!("\u{1F600}".repeat(10_000))),
        ("detail", json!(huge)),
        ("ready", json!({"detail": huge})),
        (
            "runtime_interaction",
            json!({"state": huge, "can_submit": true}),
        ),
        (
            "runtime_presence",
            json!({"phase": "idle", "detail": huge, "wake": {"operation_uid": huge}}),
        ),
    ] {
        for can_submit in [true, false] {
            let mut value = ready();
            if path != "runtime_interaction" {
                value["runtime_interaction"]["can_submit"] = json!(can_submit);
            }
            value[path] = replacement.clone();
            bodies.push(value.to_string());
        }
    }
    for body in &bodies {
        for base in [PLATFORM, "", "https://", huge.as_str(), "\u{1F600}://x"] {
            let _ = parse_runtime_access(body.as_bytes(), base);
        }
    }
    // A 1 MB string inside an otherwise ready answer: the token is never shown.
    let mut value = ready();
    value["token"] = json!(format!("tok-{huge}"));
    let access = access(&value);
    assert!(!format!("{access:?}").contains("tok-xxx"));
}
