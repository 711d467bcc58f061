use serde_json::json;

use super::*;
use crate::api::error::hostile_bodies;

const HISTORY_EXAMPLE: &str = r#"{
  "version": 1,
  "session": {"sessionId": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "threadId": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "agentName": "Ledger Helper", "agentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01", "agentSessionUid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "status": "completed", "startedAt": "2026-10-02T08:15:00Z", "updatedAt": "2026-10-02T08:16:30Z", "error": null},
  "messages": [
    {"id": "m-1", "role": "user", "createdAt": "2026-10-02T08:16:00Z", "content": [{"type": "text", "text": "Total for Q3?"}], "provenance": {"origin": "user", "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"}},
    {"id": "m-2", "role": "assistant", "createdAt": "2026-10-02T08:16:30Z", "content": [{"type": "reasoning", "text": "Sum the ledger."}, {"type": "tool-call", "toolCallId": "c-1", "toolName": "ledger_sum", "args": {"quarter": 3}, "result": {"total": 4120}, "isError": false}, {"type": "text", "text": "Q3 totals 4120."}], "provenance": {"origin": "user", "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"}}
  ],
  "inProgressMessage": null
}"#;

fn history(value: Value) -> History {
    parse_history(value.to_string().as_bytes()).unwrap()
}

fn text(text: &str) -> Part {
    Part::done_text(text)
}

fn reasoning(text: &str) -> Part {
    Part::done_reasoning(text)
}

/// The parts of a single assistant message with the given content.
fn assistant_parts(content: Value) -> Vec<Part> {
    let loaded = history(json!({"messages": [{"role": "assistant", "content": content}]}));
    loaded
        .messages
        .into_iter()
        .next()
        .map(|message| message.parts)
        .unwrap_or_default()
}

/// The example's provenance, normalized.
fn example_provenance() -> Value {
    json!({
        "origin": "user", "channel": null, "actorKind": null, "actorUid": null,
        "actorName": null, "callerAgentName": null, "handleUniqueId": null,
        "callerAgentSessionUid": null,
        "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"
    })
}

fn provenance_part() -> Part {
    Part::Data(DataPart {
        data_type: PROVENANCE_PART_TYPE.to_owned(),
        id: None,
        data: example_provenance().into(),
    })
}

#[test]
fn history_example() {
    let loaded = parse_history(HISTORY_EXAMPLE.as_bytes()).unwrap();
    let provenance = example_provenance();
    let metadata = json!({"custom": {"mainSequenceAi": {"provenance": provenance}}});
    assert_eq!(
        loaded,
        History {
            runtime_session_id: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
            thread_id: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
            agent_name: Some("Ledger Helper".to_owned()),
            status: HistoryStatus::Completed,
            error: None,
            messages: vec![
                Message {
                    id: "m-1".to_owned(),
                    role: Role::User,
                    metadata: Some(metadata.clone().into()),
                    parts: vec![provenance_part(), text("Total for Q3?")],
                    status: MessageStatus::Complete,
                    created_at: Some("2026-10-02T08:16:00Z".to_owned()),
                    provenance: Some(provenance.clone().into()),
                },
                Message {
                    id: "m-2".to_owned(),
                    role: Role::Assistant,
                    metadata: Some(metadata.into()),
                    parts: vec![
                        provenance_part(),
                        reasoning("Sum the ledger."),
                        Part::Tool(Box::new(ToolPart {
                            tool_name: "ledger_sum".to_owned(),
                            tool_call_id: "c-1".to_owned(),
                            state: ToolState::OutputAvailable,
                            input: Some(json!({"quarter": 3}).into()),
                            output: Some(json!({"total": 4120}).into()),
                            ..ToolPart::default()
                        })),
                        text("Q3 totals 4120."),
                    ],
                    status: MessageStatus::Complete,
                    created_at: Some("2026-10-02T08:16:30Z".to_owned()),
                    provenance: Some(provenance.into()),
                },
            ],
            agent_uid: Some("7d2f0c4a-2222-4b1f-8e3a-000000000b01".to_owned()),
            agent_session_uid: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
        }
    );
}

#[test]
fn history_parts_serialize_as_ui_message_parts() {
    let loaded = parse_history(HISTORY_EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        serde_json::to_value(&loaded.messages[1].parts).unwrap(),
        json!([
            {"type": "data-main_sequence_ai_provenance", "data": example_provenance()},
            {"type": "reasoning", "text": "Sum the ledger.", "state": "done"},
            {"type": "tool-ledger_sum", "toolCallId": "c-1", "state": "output-available",
             "input": {"quarter": 3}, "output": {"total": 4120}},
            {"type": "text", "text": "Q3 totals 4120.", "state": "done"}
        ])
    );
}

#[test]
fn legacy_session_names_read_as_uids() {
    let loaded = history(json!({"session": {"agentId": 25, "agentSessionId": "87"}}));
    assert_eq!(loaded.agent_uid.as_deref(), Some("25"));
    assert_eq!(loaded.agent_session_uid.as_deref(), Some("87"));
    let loaded = history(json!({"session": {
        "agentUid": "a-1", "agentId": 25, "agentSessionUid": " ", "agentSessionId": 87
    }}));
    assert_eq!(loaded.agent_uid.as_deref(), Some("a-1"));
    assert_eq!(loaded.agent_session_uid.as_deref(), Some("87"));
    let loaded = history(json!({"session": {"agentUid": true, "agentSessionUid": null}}));
    assert_eq!((loaded.agent_uid, loaded.agent_session_uid), (None, None));
}

#[test]
fn not_an_object_is_malformed() {
    let expected = Err(ApiError::Malformed {
        message: "The session history answer is not a JSON object.".to_owned(),
    });
    for body in ["", "[]", "null", r#""x""#, "{", "<html></html>"] {
        assert_eq!(parse_history(body.as_bytes()), expected, "{body}");
    }
}

#[test]
fn empty_object_is_an_empty_transcript() {
    assert_eq!(history(json!({})), History::empty());
    assert_eq!(
        history(json!({"session": null, "messages": null, "inProgressMessage": null})),
        History::empty()
    );
}

#[test]
fn session_status_values() {
    let status = |value: Value| history(json!({"session": {"status": value}})).status;
    assert_eq!(status(json!("running")), HistoryStatus::Running);
    assert_eq!(status(json!("completed")), HistoryStatus::Completed);
    assert_eq!(status(json!("error")), HistoryStatus::Error);
    assert_eq!(status(json!("paused")), HistoryStatus::Completed);
    assert_eq!(status(json!(3)), HistoryStatus::Completed);
    assert_eq!(status(Value::Null), HistoryStatus::Completed);
}

#[test]
fn in_progress_message_is_appended_and_running() {
    let loaded = history(json!({
        "session": {"status": "running"},
        "messages": [{"id": "m-1", "role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "inProgressMessage": {"id": "m-2", "role": "assistant", "content": [{"type": "text", "text": "Wor"}]}
    }));
    assert_eq!(loaded.messages.len(), 2);
    assert_eq!(loaded.messages[0].status, MessageStatus::Complete);
    assert_eq!(loaded.messages[1].id, "m-2");
    assert_eq!(loaded.messages[1].status, MessageStatus::Running);
}

#[test]
fn in_progress_message_fails_with_the_session_error() {
    let in_progress = json!({"role": "assistant", "content": [{"type": "text", "text": "Part"}]});
    let loaded = history(json!({
        "session": {"status": "error", "error": "Runtime crashed."},
        "inProgressMessage": in_progress
    }));
    assert_eq!(loaded.status, HistoryStatus::Error);
    assert_eq!(loaded.error.as_deref(), Some("Runtime crashed."));
    assert_eq!(
        loaded.messages[0].status,
        MessageStatus::Failed {
            error: "Runtime crashed.".to_owned()
        }
    );

    let loaded = history(
        json!({"session": {"status": "error", "error": null}, "inProgressMessage": in_progress}),
    );
    assert_eq!(loaded.error, None);
    assert_eq!(
        loaded.messages[0].status,
        MessageStatus::Failed {
            error: "The previous run failed.".to_owned()
        }
    );
}

#[test]
fn ids_default_to_the_combined_position() {
    let part = json!([{"type": "text", "text": "t"}]);
    let loaded = history(json!({
        "messages": [
            {"role": "user", "content": part},
            {"role": "robot", "content": part},
            {"id": "", "role": "assistant", "content": part},
            {"id": 17, "role": "assistant", "content": part}
        ],
        "inProgressMessage": {"role": "assistant", "content": part}
    }));
    let ids: Vec<&str> = loaded.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["history-0", "history-2", "17", "history-4"]);
}

#[test]
fn unknown_roles_and_empty_messages_are_dropped() {
    let loaded = history(json!({
        "messages": [
            {"id": "a", "role": "tool", "content": [{"type": "text", "text": "x"}]},
            {"id": "b", "role": "user", "content": []},
            {"id": "c", "role": "user", "content": [{"type": "text", "text": "  "}]},
            {"id": "d", "role": "user", "content": [{"type": "reasoning", "text": "hidden"}]},
            {"id": "e", "role": "user", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t"}]},
            {"id": "f", "content": [{"type": "text", "text": "no role"}]},
            {"id": "g", "role": "assistant", "content": [{"type": "image", "url": "x"}]},
            {"id": "h", "role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"id": "i", "role": "assistant"}
        ]
    }));
    let ids: Vec<&str> = loaded.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["h"]);
    assert_eq!(loaded.messages[0].role, Role::System);
}

#[test]
fn think_spans_split_into_reasoning() {
    assert_eq!(
        assistant_parts(
            json!([{"type": "text", "text": "<think>Plan it.</think>\n\nThe answer."}])
        ),
        vec![reasoning("Plan it."), text("The answer.")]
    );
    assert_eq!(
        assistant_parts(
            json!([{"type": "text", "text": "A <think>one</think> B <think>two</think> C"}])
        ),
        vec![
            text("A"),
            reasoning("one"),
            text("B"),
            reasoning("two"),
            text("C")
        ]
    );
    assert_eq!(
        assistant_parts(json!([{"type": "text", "text": "Before <think>still thinking"}])),
        vec![text("Before"), reasoning("still thinking")]
    );
    assert_eq!(
        assistant_parts(
            json!([{"type": "text", "text": "<think></think>  <think> </think>Only text"}])
        ),
        vec![text("Only text")]
    );
    assert_eq!(
        assistant_parts(json!([{"type": "text", "text": "<think>only reasoning</think>"}])),
        vec![reasoning("only reasoning")]
    );
    // Text without a span is kept verbatim.
    assert_eq!(
        assistant_parts(json!([{"type": "text", "text": "  a </think> b\n"}])),
        vec![text("  a </think> b\n")]
    );
}

#[test]
fn think_spans_stay_in_user_text() {
    let loaded = history(
        json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "<think>x</think>"}]}]}),
    );
    assert_eq!(loaded.messages[0].parts, vec![text("<think>x</think>")]);
}

#[test]
fn reasoning_parts() {
    assert_eq!(
        assistant_parts(json!([
            {"type": "reasoning", "text": "a"},
            {"type": "thinking", "content": "b"},
            {"type": "thinking", "text": "", "content": "c"},
            {"type": "reasoning", "text": 5},
            {"type": "reasoning"}
        ])),
        vec![reasoning("a"), reasoning("b"), reasoning("c")]
    );
}

#[test]
fn tool_call_states() {
    let parts = assistant_parts(json!([
        {"type": "tool_call", "toolCallId": "c-1", "toolName": "t", "input": {"a": 1}},
        {"type": "tool-call", "toolCallId": "c-2", "toolName": "t", "args": {"a": 2}, "input": {"ignored": true}, "result": "done"},
        {"type": "tool-call", "toolCallId": "c-3", "toolName": "t", "args": null, "result": "boom", "isError": true},
        {"type": "tool-call", "toolCallId": "c-4", "toolName": "t", "result": {"code": 7}, "isError": true},
        {"type": "tool-call", "toolCallId": "c-5", "toolName": "t", "isError": true},
        {"type": "tool-call", "toolCallId": "c-6", "toolName": "t", "result": null, "isError": "no"},
        {"type": "tool-call", "toolName": "t"},
        {"type": "tool-call", "toolCallId": "c-8"},
        {"type": "tool-call", "toolCallId": 9, "toolName": "t"}
    ]));
    let tool = |id: &str, state, input: Value, output: Option<Value>, error: Option<&str>| {
        Part::Tool(Box::new(ToolPart {
            tool_name: "t".to_owned(),
            tool_call_id: id.to_owned(),
            state,
            input: Some(input.into()),
            output: output.map(Json::from),
            error_text: error.map(str::to_owned),
            ..ToolPart::default()
        }))
    };
    assert_eq!(
        parts,
        vec![
            tool(
                "c-1",
                ToolState::InputAvailable,
                json!({"a": 1}),
                None,
                None
            ),
            tool(
                "c-2",
                ToolState::OutputAvailable,
                json!({"a": 2}),
                Some(json!("done")),
                None
            ),
            tool("c-3", ToolState::OutputError, json!({}), None, Some("boom")),
            tool(
                "c-4",
                ToolState::OutputError,
                json!({}),
                None,
                Some(r#"{"code":7}"#)
            ),
            tool(
                "c-5",
                ToolState::OutputError,
                json!({}),
                None,
                Some("The tool call failed.")
            ),
            tool("c-6", ToolState::InputAvailable, json!({}), None, None),
        ]
    );
}

#[test]
fn provenance_needs_a_string_origin() {
    let message = |value: Value| {
        history(json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "t"}], "provenance": value}]}))
            .messages[0]
            .clone()
    };
    let valid =
        message(json!({"origin": "agent", "channel": "api", "actorKind": "agent", "unknown": [1]}));
    let normalized =
        normalize_provenance(&json!({"origin": "agent", "channel": "api", "actorKind": "agent"}));
    assert_eq!(valid.provenance, normalized.map(Json::from));
    assert_eq!(valid.parts.len(), 2);
    for invalid in [
        json!({"origin": 5}),
        json!({"origin": ""}),
        json!({"channel": "api"}),
        json!("user"),
        Value::Null,
    ] {
        let m = message(invalid.clone());
        assert_eq!(m.provenance, None, "{invalid}");
        assert_eq!(m.metadata, None, "{invalid}");
        assert_eq!(m.parts, vec![text("t")], "{invalid}");
    }
}

#[test]
fn a_provenance_alone_does_not_keep_a_message() {
    let loaded = history(json!({"messages": [
        {"role": "user", "content": [], "provenance": {"origin": "user"}}
    ]}));
    assert!(loaded.messages.is_empty());
}

#[test]
fn created_at_and_session_fields_tolerate_wrong_types() {
    let loaded = history(json!({
        "session": {"sessionId": 5, "threadId": null, "agentName": [], "error": {"m": 1}},
        "messages": [{"role": "user", "createdAt": 17, "content": [{"type": "text", "text": "t"}]}]
    }));
    assert_eq!(loaded.runtime_session_id, None);
    assert_eq!(loaded.thread_id, None);
    assert_eq!(loaded.agent_name, None);
    assert_eq!(loaded.error, None);
    assert_eq!(loaded.messages[0].created_at, None);
    assert_eq!(loaded.messages.len(), 1);
}

#[test]
fn hostile_bodies_do_not_panic() {
    for body in hostile_bodies() {
        let _ = parse_history(&body);
    }
}
