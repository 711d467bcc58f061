use serde_json::json;

use super::*;
use crate::api::ModelChoice;
use crate::input::{
    AgentRecord, DefaultSession, LaunchTarget, Person, SessionSummary, SourceStatus,
};
use crate::source::LocalSource;

fn read_input(text: &str) -> Result<Input, serde_json::Error> {
    serde_json::from_str(text)
}

/// The name a command is written with. A new variant fails to compile here; it then needs a
/// name in `COMMANDS` and an arm in `wire.rs`, and a sample in `commands()` (with every
/// optional field set in one sample at least), which nothing here can force.
fn command_name(command: &Command) -> &'static str {
    match command {
        Command::RetryDefaultSession => "retry_default_session",
        Command::RestoreDefaultSessionSelection => "restore_default_session_selection",
        Command::StartAgentSession { .. } => "start_agent_session",
        Command::StartAgentSessionById { .. } => "start_agent_session_by_id",
        Command::OpenLatestOrStartAgentSessionById { .. } => {
            "open_latest_or_start_agent_session_by_id"
        }
        Command::CreateAgentSession => "create_agent_session",
        Command::ArchiveAgentSession { .. } => "archive_agent_session",
        Command::UnarchiveAgentSession { .. } => "unarchive_agent_session",
        Command::DeleteAgentSession { .. } => "delete_agent_session",
        Command::RefreshSessionDetail => "refresh_session_detail",
        Command::RefreshActiveSessionRuntimeAccess => "refresh_active_session_runtime_access",
        Command::RevalidateStaleRuntimeAccess => "revalidate_stale_runtime_access",
        Command::SendMessage { .. } => "send_message",
        Command::CancelActiveSession => "cancel_active_session",
        Command::EnqueueMessage { .. } => "enqueue_message",
        Command::RemoveQueuedMessage { .. } => "remove_queued_message",
        Command::EditQueuedMessage { .. } => "edit_queued_message",
        Command::ReorderQueuedMessage { .. } => "reorder_queued_message",
        Command::ClearMessageQueue => "clear_message_queue",
        Command::SendNextQueuedMessage => "send_next_queued_message",
        Command::SetSelectedReasoningEffortValue { .. } => "set_selected_reasoning_effort_value",
        Command::SetSelectedProviderValue { .. } => "set_selected_provider_value",
        Command::SetSelectedModelValue { .. } => "set_selected_model_value",
        Command::ResolveSessionModelSelection { .. } => "resolve_session_model_selection",
        Command::CancelSessionModelSelection => "cancel_session_model_selection",
        Command::RequestAvailableModels => "request_available_models",
        Command::InvalidateModelProviderCatalog => "invalidate_model_provider_catalog",
        Command::ClearThread => "clear_thread",
        Command::FetchArchivedAgentSessions { .. } => "fetch_archived_agent_sessions",
        Command::SearchAgentSessions { .. } => "search_agent_sessions",
        Command::RefreshLatestSessions => "refresh_latest_sessions",
        Command::ClearArchivedSessions => "clear_archived_sessions",
        Command::RequestAgentIcons { .. } => "request_agent_icons",
    }
}

/// The name an input is written with (as [`command_name`]).
fn input_name(input: &Input) -> &'static str {
    match input {
        Input::Person(_) => "person",
        Input::EnvironmentUid(_) => "environment_uid",
        Input::IsVisible(_) => "is_visible",
        Input::PageVisible(_) => "page_visible",
        Input::RequestedSessionId(_) => "requested_session_id",
        Input::DefaultSession(_) => "default_session",
        Input::ShowsDefaultSession(_) => "shows_default_session",
        Input::LaunchTarget(_) => "launch_target",
        Input::AvoidImplicitSessionSelection(_) => "avoid_implicit_session_selection",
        Input::ViewContext(_) => "view_context",
        Input::StoredSessionsLoaded { .. } => "stored_sessions_loaded",
        Input::StoredQueueLoaded { .. } => "stored_queue_loaded",
        Input::StoredSelectionLoaded { .. } => "stored_selection_loaded",
        Input::Source(_) => "source",
        Input::Command(_) => "command",
    }
}

fn commands() -> Vec<Command> {
    let some = |s: &str| Some(s.to_owned());
    vec![
        Command::RetryDefaultSession,
        Command::RestoreDefaultSessionSelection,
        Command::StartAgentSession {
            agent: AgentRecord {
                id: Some(7),
                uid: some("agent-1"),
                name: None,
            },
        },
        Command::StartAgentSessionById {
            agent_id: "42".into(),
            label: some("Ledger"),
        },
        Command::OpenLatestOrStartAgentSessionById {
            agent_id: "agent-1".into(),
            label: some("Ledger"),
        },
        Command::CreateAgentSession,
        Command::ArchiveAgentSession {
            session_uid: "s-1".into(),
        },
        Command::UnarchiveAgentSession {
            session_uid: "s-2".into(),
        },
        Command::DeleteAgentSession {
            session_uid: "s-3".into(),
        },
        Command::RefreshSessionDetail,
        Command::RefreshActiveSessionRuntimeAccess,
        Command::RevalidateStaleRuntimeAccess,
        Command::SendMessage {
            text: "Hi \"there\" \u{1F600}".into(),
        },
        Command::CancelActiveSession,
        Command::EnqueueMessage {
            text: "later".into(),
        },
        Command::RemoveQueuedMessage { id: "q-1".into() },
        Command::EditQueuedMessage { id: "q-2".into() },
        Command::ReorderQueuedMessage {
            id: "q-3".into(),
            to_index: 2,
        },
        Command::ClearMessageQueue,
        Command::SendNextQueuedMessage,
        Command::SetSelectedReasoningEffortValue {
            value: some("high"),
        },
        Command::SetSelectedProviderValue {
            value: some("openai"),
        },
        Command::SetSelectedModelValue {
            value: some("gpt-x"),
        },
        Command::ResolveSessionModelSelection {
            choice: ModelChoice {
                provider: "openai".into(),
                model: "gpt-x".into(),
                thinking: some("high"),
            },
        },
        Command::CancelSessionModelSelection,
        Command::RequestAvailableModels,
        Command::InvalidateModelProviderCatalog,
        Command::ClearThread,
        Command::FetchArchivedAgentSessions {
            agent_uid: some("agent-1"),
            limit: Some(5),
        },
        Command::SearchAgentSessions {
            query: "ledger".into(),
            limit: Some(20),
        },
        Command::RefreshLatestSessions,
        Command::ClearArchivedSessions,
        Command::RequestAgentIcons {
            agent_uids: vec!["a".into(), "b".into()],
        },
    ]
}

fn inputs() -> Vec<Input> {
    let some = |s: &str| Some(s.to_owned());
    let summary = SessionSummary {
        uid: "s-1".into(),
        agent_uid: some("agent-1"),
        agent_name: None,
        title: "A title".into(),
        status: some("active"),
        started_at: None,
        ended_at: None,
        handle_unique_id: None,
        llm_provider: None,
        llm_model: None,
    };
    let mut all = vec![
        Input::Person(Person::local(some("user-1"))),
        Input::EnvironmentUid(some("env-1")),
        Input::EnvironmentUid(None),
        Input::IsVisible(true),
        Input::PageVisible(false),
        Input::RequestedSessionId(some("s-9")),
        Input::DefaultSession(Some(DefaultSession {
            agent_uid: some("agent-1"),
            handle_unique_id: "handle".into(),
            name: "Main".into(),
            status: SourceStatus::Loading,
            unavailable_message: None,
        })),
        Input::ShowsDefaultSession(true),
        Input::LaunchTarget(Some(LaunchTarget {
            agent_id: "agent-1".into(),
            label: None,
            launch_key: 3,
        })),
        Input::AvoidImplicitSessionSelection(false),
        Input::ViewContext(Some(json!({"page": "ledger", "ids": [1, 2.5, null]}))),
        Input::StoredSessionsLoaded {
            key: "k".into(),
            sessions: Some(vec![summary]),
        },
        Input::StoredQueueLoaded {
            key: "q".into(),
            rows: Some(json!([{"id": "1", "text": "a", "createdAt": 5}])),
        },
        Input::StoredSelectionLoaded {
            key: "sel".into(),
            session_uid: some("s-4"),
        },
        Input::Source(LocalSource::new("http://127.0.0.1:8787", "Ledger Helper").ok()),
        Input::Source(None),
    ];
    all.extend(commands().into_iter().map(Input::Command));
    all
}

/// What the derived `Serialize` writes is read back as the same value, for every input and
/// command; the name lists of the `unknown variant` texts hold exactly the names written. Each
/// optional field is set in a sample (a misspelled key would read as `None` and pass
/// otherwise; the absent ones are `a_missing_optional_payload_or_field_reads_as_none`).
#[test]
fn every_input_and_command_reads_back_as_written() {
    let mut input_names = Vec::new();
    let mut command_names = Vec::new();
    for input in inputs() {
        let text = serde_json::to_string(&input).unwrap();
        assert_eq!(read_input(&text).unwrap(), input, "{text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["input"], input_name(&input), "{text}");
        input_names.push(input_name(&input));
        if let Input::Command(command) = &input {
            assert_eq!(value["value"]["command"], command_name(command), "{text}");
            command_names.push(command_name(command));
            let alone: Command = serde_json::from_value(value["value"].clone()).unwrap();
            assert_eq!(&alone, command);
        }
    }
    input_names.dedup();
    assert_eq!(input_names, INPUTS);
    assert_eq!(command_names, COMMANDS);
}

#[test]
fn keys_come_in_any_order_and_unknown_ones_are_ignored() {
    let input = read_input(
        r#"{"value": {"text": "Hi", "extra": 1, "command": "send_message"}, "input": "command", "note": [1]}"#,
    )
    .unwrap();
    assert_eq!(
        input,
        Input::Command(Command::SendMessage { text: "Hi".into() })
    );
    let unit = read_input(r#"{"input": "command", "value": {"command": "clear_thread", "x": {}}}"#);
    assert_eq!(unit.unwrap(), Input::Command(Command::ClearThread));
}

#[test]
fn a_missing_optional_payload_or_field_reads_as_none() {
    assert_eq!(
        read_input(r#"{"input": "environment_uid"}"#).unwrap(),
        Input::EnvironmentUid(None)
    );
    assert_eq!(
        read_input(r#"{"input": "view_context", "value": null}"#).unwrap(),
        Input::ViewContext(None)
    );
    assert_eq!(
        read_input(
            r#"{"input": "command", "value": {"command": "start_agent_session_by_id", "agent_id": "7"}}"#
        )
        .unwrap(),
        Input::Command(Command::StartAgentSessionById {
            agent_id: "7".into(),
            label: None,
        })
    );
    assert_eq!(
        read_input(r#"{"input": "stored_selection_loaded", "value": {"key": "k"}}"#).unwrap(),
        Input::StoredSelectionLoaded {
            key: "k".into(),
            session_uid: None,
        }
    );
}

#[test]
fn a_token_is_read_though_never_written() {
    let input = read_input(
        r#"{"input": "person", "value": {"userUid": "u", "token": "secret-1", "tokenType": "Token"}}"#,
    )
    .unwrap();
    let Input::Person(person) = input else {
        unreachable!("not a person: {input:?}");
    };
    assert_eq!(person.token.as_ref().map(|t| t.expose()), Some("secret-1"));
    assert_eq!(person.token_type.as_deref(), Some("Token"));
}

/// Refusals say what serde's derive says (`unknown variant`, `missing field`), or name the key
/// whose payload is wrong; `serde_json` places them (a line and a column).
#[test]
fn refusals_name_what_is_wrong() {
    let refused = |text: &str| read_input(text).unwrap_err();
    let unknown = refused(r#"{"input": "no_such_input", "value": 1}"#);
    assert!(
        unknown
            .to_string()
            .starts_with("unknown variant `no_such_input`, expected one of `person`, "),
        "{unknown}"
    );
    assert!(unknown.line() == 1 && unknown.column() > 0, "{unknown}");
    let text = refused(r#"{"input": "command", "value": {"command": "nope"}}"#).to_string();
    assert!(
        text.contains("unknown variant `nope`, expected one of `retry_default_session`"),
        "{text}"
    );
    let text = refused(r#"{"value": true}"#).to_string();
    assert!(text.starts_with("missing field `input`"), "{text}");
    let text = refused(r#"{"input": "is_visible"}"#).to_string();
    assert!(text.starts_with("missing field `value`"), "{text}");
    let text = refused(r#"{"input": "command", "value": {"text": "Hi"}}"#).to_string();
    assert!(text.contains("missing field `command`"), "{text}");
    let text = refused(r#"{"input": "command", "value": {"command": "send_message"}}"#).to_string();
    assert!(text.contains("missing field `text`"), "{text}");
    let text = refused(r#"{"input": "is_visible", "value": "yes"}"#).to_string();
    assert!(text.starts_with("value: invalid type: string"), "{text}");
    let text = refused(
        r#"{"input": "command", "value": {"command": "reorder_queued_message", "id": "q", "to_index": -1}}"#,
    )
    .to_string();
    assert!(text.contains("to_index: invalid value"), "{text}");
    let text = refused(r#"{"input": "stored_queue_loaded", "value": [1]}"#).to_string();
    assert!(text.starts_with("value: expected an object"), "{text}");
    let text = refused(r#"{"input": "command", "value": {"command": 5}}"#).to_string();
    assert!(text.contains("command: expected a string"), "{text}");
    for not_an_object in [r#""person""#, "[]", "null", r#"["person", {}]"#] {
        let e = refused(not_an_object);
        assert!(
            e.to_string().contains("expected an input"),
            "{not_an_object}: {e}"
        );
    }
}
