//! The JSON form of [`Input`] and [`Command`] read by hand.
//!
//! The form is serde's for the attributes on the two enums (and what their derived
//! `Serialize` writes): an input is `{"input": <name>, "value": <payload>}`, a command
//! `{"command": <name>, <field>: ...}`. serde's derive reads such tagged enums through its
//! private `Content` buffer, and in the WebAssembly package that buffer and every payload type
//! read through it were a sixth of the module (issue 28: 43 KB of 342 KB gzipped). Here the
//! object is read into a `serde_json` map and each payload is read from its `Value`.
//!
//! What serde's derive accepts, this accepts, with the same meaning: the keys in any order,
//! unknown keys ignored, a missing `Option` payload or field read as `None`, the same texts for
//! an unknown name (`unknown variant`) and a missing key (`missing field`). The differences:
//! the array forms serde also reads (`["person", {...}]`) are refused; a key given twice, which
//! the derive refused (`duplicate field`), is read with its last value, at any depth of the
//! payload (the payload is read from a `Value`); a payload's error names its key (`value:
//! invalid type: ...`); and every refusal is placed at the end of the object, not where the
//! derive stopped.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::{Command, Input};

/// The input names, as serde's `unknown variant` text lists them.
const INPUTS: &[&str] = &[
    "person",
    "environment_uid",
    "is_visible",
    "page_visible",
    "requested_session_id",
    "default_session",
    "shows_default_session",
    "launch_target",
    "avoid_implicit_session_selection",
    "view_context",
    "stored_sessions_loaded",
    "stored_queue_loaded",
    "stored_selection_loaded",
    "source",
    "command",
];

/// The command names, as serde's `unknown variant` text lists them.
const COMMANDS: &[&str] = &[
    "retry_default_session",
    "restore_default_session_selection",
    "start_agent_session",
    "start_agent_session_by_id",
    "open_latest_or_start_agent_session_by_id",
    "create_agent_session",
    "archive_agent_session",
    "unarchive_agent_session",
    "delete_agent_session",
    "refresh_session_detail",
    "refresh_active_session_runtime_access",
    "revalidate_stale_runtime_access",
    "send_message",
    "cancel_active_session",
    "enqueue_message",
    "remove_queued_message",
    "edit_queued_message",
    "reorder_queued_message",
    "clear_message_queue",
    "send_next_queued_message",
    "set_selected_reasoning_effort_value",
    "set_selected_provider_value",
    "set_selected_model_value",
    "resolve_session_model_selection",
    "cancel_session_model_selection",
    "request_available_models",
    "invalidate_model_provider_catalog",
    "clear_thread",
    "fetch_archived_agent_sessions",
    "search_agent_sessions",
    "refresh_latest_sessions",
    "clear_archived_sessions",
    "request_agent_icons",
];

/// Reads `T` from a payload given under `key`; a missing one reads as serde's derive reads a
/// missing field (`None` for an `Option`, else `missing field`). A missing payload is tried as
/// `null`: right for every payload and field type of the two enums, but a type that reads
/// `null` (a bare `Value`, `()`) would read as given where the derive said `missing field`, and
/// a `#[serde(default)]` field would need its default here.
fn read<T: DeserializeOwned, E: de::Error>(
    key: &'static str,
    value: Option<Value>,
) -> Result<T, E> {
    match value {
        Some(value) => T::deserialize(value).map_err(|e| E::custom(format_args!("{key}: {e}"))),
        None => T::deserialize(Value::Null).map_err(|_| E::missing_field(key)),
    }
}

/// The fields of an object, taken one by one.
struct Fields(Map<String, Value>);

impl Fields {
    fn take<T: DeserializeOwned, E: de::Error>(&mut self, key: &'static str) -> Result<T, E> {
        read(key, self.0.remove(key))
    }
}

/// The payload of a struct input: an object.
fn fields<E: de::Error>(value: Option<Value>) -> Result<Fields, E> {
    match value {
        Some(Value::Object(map)) => Ok(Fields(map)),
        Some(_) => Err(E::custom("value: expected an object")),
        None => Err(E::missing_field("value")),
    }
}

fn input<E: de::Error>(name: &str, value: Option<Value>) -> Result<Input, E> {
    Ok(match name {
        "person" => Input::Person(read("value", value)?),
        "environment_uid" => Input::EnvironmentUid(read("value", value)?),
        "is_visible" => Input::IsVisible(read("value", value)?),
        "page_visible" => Input::PageVisible(read("value", value)?),
        "requested_session_id" => Input::RequestedSessionId(read("value", value)?),
        "default_session" => Input::DefaultSession(read("value", value)?),
        "shows_default_session" => Input::ShowsDefaultSession(read("value", value)?),
        "launch_target" => Input::LaunchTarget(read("value", value)?),
        "avoid_implicit_session_selection" => {
            Input::AvoidImplicitSessionSelection(read("value", value)?)
        }
        "view_context" => Input::ViewContext(read("value", value)?),
        "stored_sessions_loaded" => {
            let mut f = fields(value)?;
            Input::StoredSessionsLoaded {
                key: f.take("key")?,
                sessions: f.take("sessions")?,
            }
        }
        "stored_queue_loaded" => {
            let mut f = fields(value)?;
            Input::StoredQueueLoaded {
                key: f.take("key")?,
                rows: f.take("rows")?,
            }
        }
        "stored_selection_loaded" => {
            let mut f = fields(value)?;
            Input::StoredSelectionLoaded {
                key: f.take("key")?,
                session_uid: f.take("session_uid")?,
            }
        }
        "source" => Input::Source(read("value", value)?),
        "command" => Input::Command(read("value", value)?),
        other => return Err(E::unknown_variant(other, INPUTS)),
    })
}

fn command<E: de::Error>(name: &str, mut f: Fields) -> Result<Command, E> {
    Ok(match name {
        "retry_default_session" => Command::RetryDefaultSession,
        "restore_default_session_selection" => Command::RestoreDefaultSessionSelection,
        "start_agent_session" => Command::StartAgentSession {
            agent: f.take("agent")?,
        },
        "start_agent_session_by_id" => Command::StartAgentSessionById {
            agent_id: f.take("agent_id")?,
            label: f.take("label")?,
        },
        "open_latest_or_start_agent_session_by_id" => Command::OpenLatestOrStartAgentSessionById {
            agent_id: f.take("agent_id")?,
            label: f.take("label")?,
        },
        "create_agent_session" => Command::CreateAgentSession,
        "archive_agent_session" => Command::ArchiveAgentSession {
            session_uid: f.take("session_uid")?,
        },
        "unarchive_agent_session" => Command::UnarchiveAgentSession {
            session_uid: f.take("session_uid")?,
        },
        "delete_agent_session" => Command::DeleteAgentSession {
            session_uid: f.take("session_uid")?,
        },
        "refresh_session_detail" => Command::RefreshSessionDetail,
        "refresh_active_session_runtime_access" => Command::RefreshActiveSessionRuntimeAccess,
        "revalidate_stale_runtime_access" => Command::RevalidateStaleRuntimeAccess,
        "send_message" => Command::SendMessage {
            text: f.take("text")?,
        },
        "cancel_active_session" => Command::CancelActiveSession,
        "enqueue_message" => Command::EnqueueMessage {
            text: f.take("text")?,
        },
        "remove_queued_message" => Command::RemoveQueuedMessage { id: f.take("id")? },
        "edit_queued_message" => Command::EditQueuedMessage { id: f.take("id")? },
        "reorder_queued_message" => Command::ReorderQueuedMessage {
            id: f.take("id")?,
            to_index: f.take("to_index")?,
        },
        "clear_message_queue" => Command::ClearMessageQueue,
        "send_next_queued_message" => Command::SendNextQueuedMessage,
        "set_selected_reasoning_effort_value" => Command::SetSelectedReasoningEffortValue {
            value: f.take("value")?,
        },
        "set_selected_provider_value" => Command::SetSelectedProviderValue {
            value: f.take("value")?,
        },
        "set_selected_model_value" => Command::SetSelectedModelValue {
            value: f.take("value")?,
        },
        "resolve_session_model_selection" => Command::ResolveSessionModelSelection {
            choice: f.take("choice")?,
        },
        "cancel_session_model_selection" => Command::CancelSessionModelSelection,
        "request_available_models" => Command::RequestAvailableModels,
        "invalidate_model_provider_catalog" => Command::InvalidateModelProviderCatalog,
        "clear_thread" => Command::ClearThread,
        "fetch_archived_agent_sessions" => Command::FetchArchivedAgentSessions {
            agent_uid: f.take("agent_uid")?,
            limit: f.take("limit")?,
        },
        "search_agent_sessions" => Command::SearchAgentSessions {
            query: f.take("query")?,
            limit: f.take("limit")?,
        },
        "refresh_latest_sessions" => Command::RefreshLatestSessions,
        "clear_archived_sessions" => Command::ClearArchivedSessions,
        "request_agent_icons" => Command::RequestAgentIcons {
            agent_uids: f.take("agent_uids")?,
        },
        other => return Err(E::unknown_variant(other, COMMANDS)),
    })
}

/// Reads an input's object: its name under `input`, its payload under `value`. The payload is
/// read once the object is (the keys may come in any order); an error is raised inside the
/// object, where `serde_json` gives it a position.
struct InputVisitor;

impl<'de> Visitor<'de> for InputVisitor {
    type Value = Input;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an input: an object with `input` and `value`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Input, A::Error> {
        let mut name: Option<String> = None;
        let mut value: Option<Value> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "input" => name = Some(map.next_value()?),
                "value" => value = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field("input"))?;
        input(&name, value)
    }
}

/// Reads a command's object: its name under `command`, its fields beside it.
struct CommandVisitor;

impl<'de> Visitor<'de> for CommandVisitor {
    type Value = Command;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a command: an object with `command`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Command, A::Error> {
        let mut fields = Map::new();
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            fields.insert(key, value);
        }
        let name = match fields.remove("command") {
            Some(Value::String(name)) => name,
            Some(_) => return Err(de::Error::custom("command: expected a string")),
            None => return Err(de::Error::missing_field("command")),
        };
        command(&name, Fields(fields))
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Input, D::Error> {
        deserializer.deserialize_map(InputVisitor)
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Command, D::Error> {
        deserializer.deserialize_map(CommandVisitor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
