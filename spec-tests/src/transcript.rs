//! Compact, byte-stable text forms of intents, events and snapshot changes.

use engine_core::{ApiCall, Event, Intent, Snapshot, StorageRequest};
use serde_json::Value;

/// One line for an intent.
pub(crate) fn intent_line(intent: &Intent) -> String {
    match intent {
        Intent::Http { id, request, call } => {
            let body = request
                .body
                .as_ref()
                .map(|b| format!(" {}", body_text(b)))
                .unwrap_or_default();
            let _ = call;
            let path_and_query = match request.target {
                engine_core::Target::Platform => request
                    .url()
                    .trim_start_matches(request.base.as_str())
                    .to_owned(),
                engine_core::Target::AgentRuntime | engine_core::Target::Local => request.url(),
            };
            format!("-> {id} {} {path_and_query}{body}", request.method.as_str())
        }
        Intent::Abort { id } => format!("-> abort {id}"),
        Intent::Storage(StorageRequest::Load { key }) => format!("-> storage load {key}"),
        Intent::Storage(StorageRequest::Save { key, sessions }) => {
            let uids: Vec<&str> = sessions.iter().map(|s| s.uid.as_str()).collect();
            format!("-> storage save {key} [{}]", uids.join(", "))
        }
        Intent::Storage(StorageRequest::LoadQueue { key }) => format!("-> storage load {key}"),
        Intent::Storage(StorageRequest::SaveQueue { key, rows }) => {
            let texts: Vec<String> = rows.iter().map(|r| format!("{:?}", r.text)).collect();
            format!("-> storage save {key} [{}]", texts.join(", "))
        }
        Intent::Storage(StorageRequest::RemoveQueue { key }) => {
            format!("-> storage remove {key}")
        }
        Intent::Storage(StorageRequest::LoadSelection { key }) => format!("-> storage load {key}"),
        Intent::Storage(StorageRequest::SaveSelection { key, session_uid }) => {
            format!("-> storage save {key} {session_uid}")
        }
    }
}

fn body_text(b: &[u8]) -> String {
    serde_json::from_slice::<Value>(b)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| String::from_utf8_lossy(b).into_owned())
}

/// One line for an event.
pub(crate) fn event_line(event: &Event) -> String {
    match event {
        Event::Notify(n) => format!(
            "!! notify {:?} {:?}{}",
            n.variant,
            n.title,
            n.description
                .as_ref()
                .map(|d| format!(" {d:?}"))
                .unwrap_or_default()
        ),
        Event::RequestVisible => "!! onRequestVisible".to_owned(),
        Event::RequestedSessionRemoved { session_uid } => {
            format!("!! onRequestedSessionRemoved {session_uid:?}")
        }
        Event::Answer { session_uid, delta } => format!(
            "!! answer {session_uid:?} {}",
            serde_json::to_string(delta).unwrap_or_default()
        ),
        Event::MessageNotSent {
            session_uid,
            text,
            reason,
            code,
        } => format!("!! not sent {session_uid:?} {text:?} {reason:?} [{code}]"),
        Event::RunFailed {
            session_uid,
            failure,
            sent,
        } => format!(
            "!! run failed {session_uid:?} [{}] {:?}{}",
            failure.code,
            failure.message,
            if *sent { " (sent)" } else { "" }
        ),
        Event::QueuedMessageReturned {
            session_uid,
            id,
            text,
        } => format!("!! queued message returned {session_uid:?} {id:?} {text:?}"),
        // An event kind newer than this transcript: its JSON form.
        other => format!("!! {}", serde_json::to_string(other).unwrap_or_default()),
    }
}

/// The fields of a snapshot that changed, as `name=value` pairs (compact JSON values; the thread
/// and the session list are summarized).
pub fn snapshot_diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return vec!["<snapshot not serializable>".to_owned()];
    };
    let mut out = Vec::new();
    for (k, v) in &b {
        if a.get(k) != Some(v) {
            out.push(format!("{k}={}", compact(k, v)));
        }
    }
    out
}

fn compact(key: &str, v: &Value) -> String {
    match (key, v) {
        ("agentSessions", Value::Array(items)) => {
            let uids: Vec<String> = items
                .iter()
                .map(|s| {
                    s.get("uid")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned()
                })
                .collect();
            format!("[{}]", uids.join(","))
        }
        ("thread", Value::Array(items)) => {
            let ids: Vec<String> = items
                .iter()
                .map(|m| {
                    m.get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned()
                })
                .collect();
            format!("[{}]", ids.join(","))
        }
        ("activeSessionDetail", Value::Object(d)) => format!(
            "{{status:{},insightsError:{}}}",
            d.get("status").map(Value::to_string).unwrap_or_default(),
            d.get("insightsError")
                .map(Value::to_string)
                .unwrap_or_default()
        ),
        _ => v.to_string(),
    }
}

/// A short form of a call, for assertion messages.
pub(crate) fn call_name(call: &ApiCall) -> &'static str {
    match call {
        ApiCall::ListSessions { .. } => "list",
        ApiCall::GetSessionDetail { .. } => "detail",
        ApiCall::GetSessionHistory { .. } => "history",
        ApiCall::GetSessionInsights { .. } => "insights",
        ApiCall::StartNewSession { .. } => "start-new-session",
        ApiCall::GetOrCreateSession { .. } => "get-or-create",
        ApiCall::ArchiveSession { .. } => "archive",
        ApiCall::UnarchiveSession { .. } => "unarchive",
        ApiCall::DeleteSession { .. } => "delete",
        ApiCall::ResolveRuntimeAccess { .. } => "resolve-runtime-access",
        ApiCall::ConfirmAgent { .. } => "confirm-agent",
        ApiCall::ListModelProviders => "model-providers",
        ApiCall::UpdateSessionModel { .. } => "update-session-model",
        ApiCall::SendMessage { .. } => "send-message",
        ApiCall::CancelRun { .. } => "cancel-run",
        ApiCall::ListArchivedSessions { .. } => "archived-list",
        ApiCall::SearchSessions { .. } => "search",
        ApiCall::ListAgentIcons { .. } => "agent-icons",
        ApiCall::GetAgentIcon { .. } => "agent-icon",
        ApiCall::Local { .. } => "local",
    }
}
