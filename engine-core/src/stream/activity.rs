//! The run status line of a running tool (RU-7 to RU-12, the reference's 0.0.12), read from the
//! answer's frames as they arrive.
//!
//! One call is followed at a time: `tool-call-start` (or an older runtime's
//! `tool-input-available`, which the reference turns into a start and one delta) starts
//! following it; a `tool-call-delta` naming it appends to its argument text and the line is
//! computed again; any other `tool-call-delta` stops following. The arguments count only once
//! they parse as complete JSON (no repair), and only an application's `call_tool` reads them,
//! so only then are they kept and parsed (and only when the text can end a JSON object). A
//! tool's result brings the status back to "Thinking..." ([`StreamDelta::ToolStatus`] with no
//! line). The AI SDK's `tool-input-start` and `tool-input-delta`, and `tool-input-error` and
//! `tool-output-error`, set no line (RU-7).

use serde_json::Value;

use super::chunk::Chunk;
use super::delta::StreamDelta;

/// The prefix under which an Agent runtime registers the tools of the Main Sequence MCP gateway.
const MCP_TOOL_PREFIX: &str = "mainsequence__";
/// An application's MCP tools (RU-10): `{app}__call_tool` and `{app}__list_tools`.
const CALL_TOOL: &str = "__call_tool";
const LIST_TOOLS: &str = "__list_tools";

/// The call being followed.
#[derive(Debug, Clone, Default)]
struct Followed {
    id: String,
    name: String,
    /// The argument text, kept only for an application's `call_tool`.
    args: String,
}

/// Follows the tool frames of one answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolActivity {
    followed: Option<Followed>,
}

impl ToolActivity {
    /// The status change `chunk` brings, if any: computed before the chunk is applied, pushed
    /// by the caller after the chunk's own deltas.
    pub(crate) fn status(&mut self, chunk: &Chunk) -> Option<StreamDelta> {
        match chunk {
            Chunk::ToolCallStart {
                tool_call_id,
                tool_name,
            } => {
                let name = tool_name.as_deref().unwrap_or_default();
                Some(self.follow(tool_call_id, name, String::new()))
            }
            // RU-2, RU-7: a start and one delta holding the complete input (`{}` when it is not
            // an object), named at once.
            Chunk::ToolInputAvailable { call, input } if !call.tool_call_id.is_empty() => {
                let args = if input.is_object() {
                    input.to_string()
                } else {
                    "{}".to_owned()
                };
                Some(self.follow(&call.tool_call_id, &call.tool_name, args))
            }
            Chunk::ToolCallDelta {
                tool_call_id,
                args_text,
                ..
            } => {
                let followed = self.followed.as_mut()?;
                match (tool_call_id, args_text) {
                    (Some(id), Some(args)) if *id == followed.id => {
                        if is_call_tool(&followed.name) {
                            followed.args.push_str(args);
                        }
                        Some(line_of(followed))
                    }
                    _ => {
                        self.followed = None;
                        None
                    }
                }
            }
            // RU-12: back to "Thinking...".
            Chunk::ToolCallResult { .. } | Chunk::ToolOutputAvailable { .. } => {
                Some(StreamDelta::ToolStatus { line: None })
            }
            _ => None,
        }
    }

    fn follow(&mut self, id: &str, name: &str, args: String) -> StreamDelta {
        let followed = Followed {
            id: id.to_owned(),
            name: name.trim().to_owned(),
            args: if is_call_tool(name.trim()) {
                args
            } else {
                String::new()
            },
        };
        let line = line_of(&followed);
        self.followed = Some(followed);
        line
    }
}

fn line_of(followed: &Followed) -> StreamDelta {
    // A JSON text that is an object ends with `}`: anything else cannot count yet.
    let args = if followed.args.trim_end().ends_with('}') {
        serde_json::from_str::<Value>(&followed.args).ok()
    } else {
        None
    };
    StreamDelta::ToolStatus {
        line: Some(tool_status_line(&followed.name, args.as_ref())),
    }
}

/// `{app}` when `name` is an application's MCP tool with this suffix (RU-10): `app` matches
/// `[a-z][a-z0-9_]{0,39}` and the name does not start with `mainsequence__`.
fn app_of<'a>(name: &'a str, suffix: &str) -> Option<&'a str> {
    if name.starts_with(MCP_TOOL_PREFIX) {
        return None;
    }
    let app = name.strip_suffix(suffix)?;
    let mut bytes = app.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_lowercase());
    let rest_ok = bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    (first_ok && rest_ok && app.len() <= 40).then_some(app)
}

fn is_call_tool(name: &str) -> bool {
    app_of(name, CALL_TOOL).is_some()
}

/// RU-10: the status line of a running tool, from its name (trimmed) and, for an application's
/// `call_tool`, its parsed arguments.
///
/// ```
/// use engine_core::stream::activity::tool_status_line;
/// use serde_json::json;
///
/// assert_eq!(tool_status_line("bash", None), "Running bash");
/// assert_eq!(tool_status_line("mainsequence__a2a_send_message", None), "Using MCP tool a2a_send_message");
/// assert_eq!(tool_status_line("my_app__list_tools", None), "Listing my_app MCP tools");
/// let args = json!({"tool": "list_namespaces", "arguments": {"limit": 500}});
/// assert_eq!(
///     tool_status_line("metatables__call_tool", Some(&args)),
///     "Using metatables MCP tool list_namespaces"
/// );
/// assert_eq!(tool_status_line("metatables__call_tool", None), "Using a metatables MCP tool");
/// ```
pub fn tool_status_line(tool_name: &str, args: Option<&Value>) -> String {
    let name = tool_name.trim();
    if let Some(app) = app_of(name, LIST_TOOLS) {
        return format!("Listing {app} MCP tools");
    }
    if let Some(app) = app_of(name, CALL_TOOL) {
        let tool = args
            .and_then(|args| args.get("tool"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|tool| !tool.is_empty());
        return match tool {
            Some(tool) => format!("Using {app} MCP tool {tool}"),
            None => format!("Using a {app} MCP tool"),
        };
    }
    match name.strip_prefix(MCP_TOOL_PREFIX).filter(|x| !x.is_empty()) {
        Some(mcp) => format!("Using MCP tool {mcp}"),
        None if name.is_empty() => "Running tool".to_owned(),
        None => format!("Running {name}"),
    }
}
