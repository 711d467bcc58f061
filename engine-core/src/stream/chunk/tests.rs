use serde_json::json;

use super::*;

fn chunk(value: Value) -> Result<Chunk, ChunkError> {
    parse_frame(&value.to_string()).chunk
}

#[test]
fn payloads_that_are_not_chunks() {
    for payload in [
        "",
        "x",
        "[DONE]",
        "[]",
        "1",
        "null",
        r#"{"type":1}"#,
        "{}",
        "{",
    ] {
        assert_eq!(
            parse_frame(payload).chunk,
            Err(ChunkError::NotAChunk),
            "{payload}"
        );
    }
}

/// The hot path gives the chunk `parse_frame` gives, or leaves the payload to it.
#[test]
fn delta_chunks_parse_alike_on_both_paths() {
    let hot = [
        r#"{"type":"text-delta","id":"t","delta":"a \" \u00e9 🌍"}"#,
        r#"{"delta":"x","type":"reasoning-delta","id":"r"}"#,
        r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"a\":"}"#,
        r#"{"type":"text-delta","id":"t","delta":"","agent_id":" ag-1 "}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","agent_id":7}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","agent_id":null}"#,
        // RU-4: the runtime's `textDelta`, which wins over `delta`.
        r#"{"type":"text-delta","id":"text-0","textDelta":"Hello "}"#,
        r#"{"type":"text-delta","id":"t","textDelta":"a","delta":"b"}"#,
        r#" {"type":"text-delta","id":"t","delta":"\ud83d\ude80"} "#,
    ];
    for payload in hot {
        let (agent_id, delta) = parse_delta(payload).expect(payload);
        let frame = parse_frame(payload);
        assert_eq!(agent_id, frame.agent_id, "{payload}");
        let split = SplitSurrogates::default();
        let expected = match delta {
            DeltaChunk::Text { id, delta } => Chunk::TextDelta {
                id: id.into_owned(),
                delta: delta.into_owned(),
                provider_metadata: None,
                split,
            },
            DeltaChunk::Reasoning { id, delta } => Chunk::ReasoningDelta {
                id: id.into_owned(),
                delta: delta.into_owned(),
                provider_metadata: None,
                split,
            },
            DeltaChunk::ToolInput {
                tool_call_id,
                input_text_delta,
            } => Chunk::ToolInputDelta {
                tool_call_id: tool_call_id.into_owned(),
                input_text_delta: input_text_delta.into_owned(),
                split,
            },
        };
        assert_eq!(frame.chunk, Ok(expected), "{payload}");
    }
    let general = [
        r#"{"type":"text-delta","id":"t","delta":"\ud83d"}"#,
        r#"{"type":"text-delta","id":"t","delta":"\ude80a"}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","x":"\ud83d"}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","x":1e400}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","providerMetadata":{"p":1}}"#,
        r#"{"type":"text-delta","id":null,"delta":"a"}"#,
        r#"{"type":"text-delta","id":1,"delta":"a"}"#,
        r#"{"type":"text-delta","id":"t"}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","delta":"b"}"#,
        r#"{"type":"text-delta","id":"t","delta":"a","toolCallId":"c"}"#,
        r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"a","id":"t"}"#,
        r#"{"type":"text-start","id":"t"}"#,
        r#"{"type":"text-delta","id":"t","delta":"a"} x"#,
        // `textDelta` belongs to text deltas only.
        r#"{"type":"reasoning-delta","id":"r","delta":"a","textDelta":"b"}"#,
        r#"{"type":"text-delta","id":"t","textDelta":1,"delta":"b"}"#,
        r#"["text-delta"]"#,
        // An array is no chunk on the general path, so not on the hot one either.
        r#"["text-delta","t","x"]"#,
    ];
    for payload in general {
        assert_eq!(parse_delta(payload), None, "{payload}");
    }
}

#[test]
fn unknown_types_and_invalid_fields() {
    assert_eq!(
        chunk(json!({"type": "x-future"})),
        Err(ChunkError::UnknownType {
            chunk_type: "x-future".to_owned()
        })
    );
    assert_eq!(
        chunk(json!({"type": "text-delta", "id": 1, "delta": "a"})),
        Err(ChunkError::Invalid {
            chunk_type: "text-delta".to_owned(),
            field: "id"
        })
    );
    assert!(chunk(json!({"type": "text-delta", "id": "t"})).is_err());
    assert!(
        chunk(json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t"})).is_err()
    );
    assert!(
        chunk(json!({"type": "tool-approval-response", "approvalId": "a", "approved": "yes"}))
            .is_err()
    );
    assert!(chunk(json!({"type": "source-url", "sourceId": "s"})).is_err());
    assert!(chunk(json!({"type": "data-x"})).is_err());
}

#[test]
fn extra_fields_are_ignored_and_mistyped_optionals_are_absent() {
    assert_eq!(
        chunk(json!({"type": "text-start", "id": "t", "providerMetadata": 5, "extra": [1]})),
        Ok(Chunk::TextStart {
            id: "t".to_owned(),
            provider_metadata: None
        })
    );
    assert_eq!(
        chunk(json!({"type": "start", "messageId": 7, "messageMetadata": null})),
        Ok(Chunk::Start {
            message_id: None,
            message_metadata: None
        })
    );
}

#[test]
fn error_text_fallbacks() {
    let text = |value: Value| match chunk(value) {
        Ok(Chunk::Error(error)) => error.error_text,
        other => format!("{other:?}"),
    };
    assert_eq!(text(json!({"type": "error", "errorText": "a"})), "a");
    assert_eq!(
        text(json!({"type": "error", "errorText": " ", "error": "b"})),
        "b"
    );
    assert_eq!(
        text(json!({"type": "error", "message": "c", "error_detail": "d"})),
        "c"
    );
    assert_eq!(text(json!({"type": "error", "error_detail": "d"})), "d");
    assert_eq!(
        text(json!({"type": "error", "error": {"m": 1}})),
        "The agent reported an error."
    );
    let Ok(Chunk::Error(error)) = chunk(
        json!({"type": "error", "errorText": "x", "status": 502, "error_code": "E", "source": "llm"}),
    ) else {
        unreachable!()
    };
    assert_eq!(error.status, Some(json!(502)));
    assert_eq!(error.error_code.as_deref(), Some("E"));
    assert_eq!(error.error_source.as_deref(), Some("llm"));
}

#[test]
fn new_session_id_fallbacks_and_agent_id() {
    let frame = parse_frame(
        &json!({"type": "new_session", "agent_id": " ag-1 ", "new_session": {"agent_session_uid": "s-2", "uid": "s-3", "thread_id": "t"}}).to_string(),
    );
    assert_eq!(frame.agent_id.as_deref(), Some("ag-1"));
    assert_eq!(
        frame.chunk,
        Ok(Chunk::NewSession(NewSession {
            session_uid: "s-2".to_owned(),
            agent_id: None,
            agent_unique_id: None,
            session_key: None,
            thread_id: Some("t".to_owned()),
        }))
    );
    for key in [
        "runtime_session_uid",
        "agent_session_uid",
        "session_uid",
        "uid",
    ] {
        let Ok(Chunk::NewSession(session)) =
            chunk(json!({"type": "new_session", "new_session": {key: "s"}}))
        else {
            unreachable!()
        };
        assert_eq!(session.session_uid, "s");
    }
    assert!(chunk(json!({"type": "new_session", "new_session": {"uid": ""}})).is_err());
    // A frame of an unknown type still carries its agent id.
    let frame = parse_frame(r#"{"type":"x","agent_id":"ag-2"}"#);
    assert_eq!(frame.agent_id.as_deref(), Some("ag-2"));
}

#[test]
fn data_and_other_parts() {
    assert_eq!(
        chunk(json!({"type": "data-w", "id": "1", "data": null, "transient": true})),
        Ok(Chunk::Data {
            data_type: "data-w".to_owned(),
            id: Some("1".to_owned()),
            data: Value::Null,
            transient: true
        })
    );
    let Ok(Chunk::Part(part)) =
        chunk(json!({"type": "source-url", "sourceId": "s", "url": "u", "title": null, "junk": 1}))
    else {
        unreachable!()
    };
    assert_eq!(part.fields, json!({"sourceId": "s", "url": "u"}));
}
