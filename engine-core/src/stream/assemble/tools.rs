//! Tool parts (ui-message-stream §5, "Tools").
//!
//! Input chunks create or update the part with their call id in the current step (static and
//! dynamic parts apart). Output, approval and denial chunks find the part by call id in the
//! current step first, then anywhere in the message (latest first); with none it is a protocol
//! error and the chunk is skipped. Every update sets `input`, `output`, `errorText`,
//! `rawInput` and `preliminary` as the AI SDK does; `title` and `toolMetadata` change only when
//! given; `providerExecuted`, once set, stays unless a chunk gives it; `providerMetadata`
//! becomes `callProviderMetadata` (input, approval) or `resultProviderMetadata` (output).

use serde_json::{Map, Value};

use super::{Assembler, PartialTool};
use crate::Json;
use crate::message::{Part, ToolApproval, ToolPart, ToolState};
use crate::stream::chunk::{InputEncoding, ToolCall, ToolResult};
use crate::stream::delta::StreamDelta;
use crate::stream::partial_json::PartialJson;
use crate::stream::surrogates::{self, SplitSurrogates};

/// The values an update gives the part's progress fields.
struct Progress {
    state: ToolState,
    input: Option<Json>,
    output: Option<Json>,
    error_text: Option<String>,
    raw_input: Option<Value>,
    preliminary: Option<bool>,
}

impl Progress {
    fn apply(self, part: &mut ToolPart) {
        part.state = self.state;
        part.input = self.input;
        part.output = self.output;
        part.error_text = self.error_text;
        part.raw_input = self.raw_input;
        part.preliminary = self.preliminary;
    }
}

impl Assembler {
    /// The first tool part of `call_id` in the current step (of the given kind, when given).
    fn current_step_tool(&self, call_id: &str, dynamic: Option<bool>) -> Option<usize> {
        let step_begin = self.step_start.map_or(0, |index| index + 1);
        self.tool_parts
            .get(call_id)?
            .iter()
            .copied()
            .filter(|&index| index >= step_begin)
            .find(|&index| match self.message.parts.get(index) {
                Some(Part::Tool(tool)) => {
                    tool.tool_call_id == call_id && dynamic.is_none_or(|d| tool.dynamic == d)
                }
                _ => false,
            })
    }

    /// The part an output chunk addresses: current step first, then the latest anywhere.
    fn tool_for_result(&self, call_id: &str) -> Option<usize> {
        self.current_step_tool(call_id, None).or_else(|| {
            let index = *self.tool_parts.get(call_id)?.last()?;
            match self.message.parts.get(index) {
                Some(Part::Tool(tool)) if tool.tool_call_id == call_id => Some(index),
                _ => None,
            }
        })
    }

    fn tool_mut(&mut self, index: usize) -> Option<&mut ToolPart> {
        match self.message.parts.get_mut(index) {
            Some(Part::Tool(tool)) => Some(tool),
            _ => None,
        }
    }

    /// Creates or updates the current step's part for an input chunk; returns its index.
    fn upsert_call(
        &mut self,
        call: ToolCall,
        dynamic: bool,
        progress: Progress,
        out: &mut Vec<StreamDelta>,
    ) -> usize {
        let result_metadata = matches!(
            progress.state,
            ToolState::OutputAvailable | ToolState::OutputError
        );
        let existing = self.current_step_tool(&call.tool_call_id, Some(dynamic));
        if let Some(index) = existing
            && let Some(part) = self.tool_mut(index)
        {
            progress.apply(part);
            if call.title.is_some() {
                part.title = call.title;
            }
            if call.tool_metadata.is_some() {
                part.tool_metadata = call.tool_metadata;
            }
            if call.provider_executed.is_some() {
                part.provider_executed = call.provider_executed;
            }
            if call.provider_metadata.is_some() {
                if result_metadata {
                    part.result_provider_metadata = call.provider_metadata;
                } else {
                    part.call_provider_metadata = call.provider_metadata;
                }
            }
            self.updated(index, out);
            return index;
        }
        let mut part = ToolPart {
            tool_name: call.tool_name,
            dynamic,
            tool_call_id: call.tool_call_id.clone(),
            title: call.title,
            provider_executed: call.provider_executed,
            tool_metadata: call.tool_metadata,
            ..ToolPart::default()
        };
        if result_metadata {
            part.result_provider_metadata = call.provider_metadata;
        } else {
            part.call_provider_metadata = call.provider_metadata;
        }
        progress.apply(&mut part);
        let index = self.push_part(Part::Tool(Box::new(part)), out);
        self.tool_parts
            .entry(call.tool_call_id)
            .or_default()
            .push(index);
        index
    }

    pub(super) fn tool_input_start(
        &mut self,
        call: ToolCall,
        encoding: InputEncoding,
        out: &mut Vec<StreamDelta>,
    ) {
        let call_id = call.tool_call_id.clone();
        let dynamic = call.dynamic;
        let progress = Progress {
            state: ToolState::InputStreaming,
            input: None,
            output: None,
            error_text: None,
            raw_input: None,
            preliminary: None,
        };
        let index = self.upsert_call(call, dynamic, progress, out);
        self.partial_tools.insert(
            call_id,
            PartialTool {
                index,
                encoding,
                pending: None,
                parser: PartialJson::default(),
            },
        );
    }

    /// Appends to the call's raw input; `input` becomes its best-effort parse (or the raw text
    /// itself with `inputEncoding: "text"`), updated in place: work is proportional to the
    /// delta (reported as a `ToolInputDelta`; a `PartUpdated` when more than the input changed).
    pub(super) fn tool_input_delta(
        &mut self,
        call_id: &str,
        delta: &str,
        split: SplitSurrogates,
        out: &mut Vec<StreamDelta>,
    ) {
        let Some(partial) = self.partial_tools.get_mut(call_id) else {
            self.protocol_errors += 1;
            return;
        };
        if partial.pending.is_none() && split == SplitSurrogates::default() {
            // Nothing to join: the delta is appended as it is.
            self.append_tool_input(call_id, delta, out);
            return;
        }
        let delta = surrogates::join(&mut partial.pending, delta.to_owned(), split);
        self.append_tool_input(call_id, &delta, out);
    }

    /// A half a streaming input still waits on becomes U+FFFD (the stream ends).
    pub(super) fn flush_tool_inputs(&mut self, out: &mut Vec<StreamDelta>) {
        let mut waiting: Vec<(usize, String, String)> = Vec::new();
        for (call_id, partial) in &mut self.partial_tools {
            if let Some(text) = surrogates::flush(&mut partial.pending) {
                waiting.push((partial.index, call_id.clone(), text));
            }
        }
        waiting.sort_unstable_by_key(|(index, _, _)| *index);
        for (_, call_id, text) in waiting {
            self.append_tool_input(&call_id, &text, out);
        }
    }

    /// Appends `delta` to the call's raw input and brings the input up to date.
    fn append_tool_input(&mut self, call_id: &str, delta: &str, out: &mut Vec<StreamDelta>) {
        let Some(partial) = self.partial_tools.get_mut(call_id) else {
            return;
        };
        let index = partial.index;
        let Some(Part::Tool(part)) = self.message.parts.get_mut(index) else {
            self.protocol_errors += 1;
            self.partial_tools.remove(call_id);
            return;
        };
        let part = &mut **part;
        // An output chunk dropped the raw text: it starts again from this delta.
        let restart = !matches!(part.raw_input, Some(Value::String(_)));
        // Only the input grows (from nothing, on the first delta): reported as the appended
        // text, not the whole part.
        let first = part.raw_input.is_none() && part.input.is_none();
        let grows_only = (!restart || first)
            && part.state == ToolState::InputStreaming
            && part.output.is_none()
            && part.error_text.is_none()
            && part.preliminary.is_none();
        crate::stream::delta::append_raw(part, delta);
        let raw = match &part.raw_input {
            Some(Value::String(raw)) => raw.as_str(),
            _ => "",
        };
        match partial.encoding {
            InputEncoding::Json => {
                if restart {
                    partial.parser = PartialJson::default();
                    part.input = None;
                }
                partial.parser.update_json(raw, &mut part.input);
            }
            InputEncoding::Text => match part.input.as_mut().map(Json::get_mut) {
                Some(Value::String(input)) if !restart => input.push_str(delta),
                _ => part.input = Some(Json::from(Value::String(raw.to_owned()))),
            },
        }
        if grows_only {
            let how = super::Append::ToolInput {
                text: partial.encoding == InputEncoding::Text,
            };
            self.appended(out, how, index, std::borrow::Cow::Borrowed(delta));
            return;
        }
        part.state = ToolState::InputStreaming;
        part.output = None;
        part.error_text = None;
        part.preliminary = None;
        self.updated(index, out);
    }

    pub(super) fn tool_input_available(
        &mut self,
        call: ToolCall,
        mut input: Value,
        out: &mut Vec<StreamDelta>,
    ) {
        // RU-2: a call announced whole (older runtimes: no `tool-input-start` before it) whose
        // input is not an object has the arguments `{}`.
        let announced = self.current_step_tool(&call.tool_call_id, None).is_some();
        if !announced && !input.is_object() {
            input = Value::Object(Map::new());
        }
        self.partial_tools.remove(&call.tool_call_id);
        let dynamic = call.dynamic;
        let progress = Progress {
            state: ToolState::InputAvailable,
            input: Some(Json::from(input)),
            output: None,
            error_text: None,
            raw_input: None,
            preliminary: None,
        };
        self.upsert_call(call, dynamic, progress, out);
    }

    /// `tool-input-error`: an existing part of the call in the current step keeps its kind.
    pub(super) fn tool_input_error(
        &mut self,
        call: ToolCall,
        input: Value,
        error_text: String,
        out: &mut Vec<StreamDelta>,
    ) {
        self.partial_tools.remove(&call.tool_call_id);
        let dynamic = match self.current_step_tool(&call.tool_call_id, None) {
            Some(index) => match self.message.parts.get(index) {
                Some(Part::Tool(tool)) => tool.dynamic,
                _ => call.dynamic,
            },
            None => call.dynamic,
        };
        let progress = Progress {
            state: ToolState::OutputError,
            input: Some(Json::from(input)),
            output: None,
            error_text: Some(error_text),
            raw_input: None,
            preliminary: None,
        };
        self.upsert_call(call, dynamic, progress, out);
    }

    /// `tool-call-start` (RU-1, RU-3): a new tool part whose arguments stream; a call id
    /// already started in this answer breaks the stream (RU-5). The runtime's tools are not
    /// known to the client: the part is a dynamic one (`dynamic-tool`).
    pub(super) fn tool_call_start(
        &mut self,
        call_id: String,
        tool_name: Option<String>,
        out: &mut Vec<StreamDelta>,
    ) {
        if self.tool_parts.contains_key(&call_id) {
            let text = format!("{DUPLICATE_CALL_TEXT} {call_id}");
            self.break_stream(text, out);
            return;
        }
        let call = ToolCall {
            tool_call_id: call_id.clone(),
            tool_name: tool_name.unwrap_or_else(|| UNKNOWN_TOOL.to_owned()),
            dynamic: true,
            ..ToolCall::default()
        };
        self.tool_input_start(call, InputEncoding::Json, out);
        self.runtime_call = Some(call_id);
    }

    /// `tool-call-delta`: appends to the call started last and not yet ended, whatever id the
    /// chunk names (RU-3); without such a call, or without a string `argsText`, it is skipped.
    pub(super) fn tool_call_delta(
        &mut self,
        args_text: Option<String>,
        split: SplitSurrogates,
        out: &mut Vec<StreamDelta>,
    ) {
        // The id is lent out for the append and put back: no copy per delta.
        match (self.runtime_call.take(), args_text) {
            (Some(call_id), Some(args)) => {
                self.tool_input_delta(&call_id, &args, split, out);
                self.runtime_call = Some(call_id);
            }
            (call_id, _) => {
                self.runtime_call = call_id;
                self.protocol_errors += 1;
            }
        }
    }

    /// `tool-call-end`: the call started last has its arguments (`input-available`).
    pub(super) fn tool_call_end(&mut self, out: &mut Vec<StreamDelta>) {
        match self.runtime_call.take() {
            Some(call_id) => self.close_call_input(&call_id, out),
            None => self.protocol_errors += 1,
        }
    }

    /// A runtime call's arguments are complete: a half surrogate still waiting becomes
    /// U+FFFD, the text is parsed once whole (its raw text is dropped when it parses, kept
    /// beside the best-effort parse when it does not), and the part is `input-available`.
    /// Nothing happens to a call whose input no longer streams.
    fn close_call_input(&mut self, call_id: &str, out: &mut Vec<StreamDelta>) {
        if let Some(partial) = self.partial_tools.get_mut(call_id)
            && let Some(text) = surrogates::flush(&mut partial.pending)
        {
            self.append_tool_input(call_id, &text, out);
        }
        let Some(partial) = self.partial_tools.remove(call_id) else {
            return;
        };
        let index = partial.index;
        let Some(part) = self.tool_mut(index) else {
            return;
        };
        if part.state != ToolState::InputStreaming {
            return;
        }
        let parsed = match &part.raw_input {
            Some(Value::String(raw)) => serde_json::from_str::<Value>(raw).ok(),
            _ => None,
        };
        match parsed {
            Some(input) => {
                part.input = Some(Json::from(input));
                part.raw_input = None;
            }
            None if part.input.is_none() => {
                part.input = Some(Json::from(Value::Object(Map::new())))
            }
            None => {}
        }
        part.state = ToolState::InputAvailable;
        self.updated(index, out);
    }

    /// `tool-result` (RU-1): the call's output, failed with `isError`. A result for a call
    /// never started breaks the stream (RU-5).
    pub(super) fn tool_call_result(
        &mut self,
        call_id: &str,
        result: Value,
        is_error: bool,
        out: &mut Vec<StreamDelta>,
    ) {
        let Some(index) = self.tool_for_result(call_id) else {
            self.break_stream(format!("{UNKNOWN_RESULT_TEXT} {call_id}"), out);
            return;
        };
        if self.runtime_call.as_deref() == Some(call_id) {
            self.runtime_call = None;
        }
        self.close_call_input(call_id, out);
        let Some(part) = self.tool_mut(index) else {
            return;
        };
        set_result(part, result, is_error);
        self.updated(index, out);
    }

    /// Finds the part of an output chunk, or counts a protocol error.
    fn result_part(&mut self, call_id: &str) -> Option<(usize, &mut ToolPart)> {
        let Some(index) = self.tool_for_result(call_id) else {
            self.protocol_errors += 1;
            return None;
        };
        Some((index, self.tool_mut(index)?))
    }

    pub(super) fn tool_output_available(
        &mut self,
        result: ToolResult,
        output: Value,
        preliminary: Option<bool>,
        is_error: bool,
        out: &mut Vec<StreamDelta>,
    ) {
        // RU-5: as the reference reads it (a `tool-result`), a result for a call never started
        // breaks the stream.
        if self.tool_for_result(&result.tool_call_id).is_none() {
            let text = format!("{UNKNOWN_RESULT_TEXT} {}", result.tool_call_id);
            self.break_stream(text, out);
            return;
        }
        let Some((index, part)) = self.result_part(&result.tool_call_id) else {
            return;
        };
        if is_error {
            // RU-2: an older runtime's failed tool: the output is kept, the call failed.
            part.raw_input = None;
            part.preliminary = None;
            set_result(part, output, true);
            apply_result_fields(part, result);
            self.updated(index, out);
            return;
        }
        let progress = Progress {
            state: ToolState::OutputAvailable,
            input: part.input.take(),
            output: Some(Json::from(output)),
            error_text: None,
            raw_input: None,
            preliminary,
        };
        progress.apply(part);
        apply_result_fields(part, result);
        self.updated(index, out);
    }

    pub(super) fn tool_output_error(
        &mut self,
        result: ToolResult,
        error_text: String,
        out: &mut Vec<StreamDelta>,
    ) {
        let Some((index, part)) = self.result_part(&result.tool_call_id) else {
            return;
        };
        let progress = Progress {
            state: ToolState::OutputError,
            input: part.input.take(),
            output: None,
            error_text: Some(error_text),
            raw_input: part.raw_input.take(),
            preliminary: None,
        };
        progress.apply(part);
        apply_result_fields(part, result);
        self.updated(index, out);
    }

    pub(super) fn tool_approval_request(
        &mut self,
        approval_id: String,
        call_id: &str,
        reason: Option<String>,
        extra: Map<String, Value>,
        out: &mut Vec<StreamDelta>,
    ) {
        let Some((index, part)) = self.result_part(call_id) else {
            return;
        };
        part.state = ToolState::ApprovalRequested;
        part.approval = Some(ToolApproval {
            id: approval_id.clone(),
            approved: None,
            reason,
            extra,
        });
        self.approvals.insert(approval_id, index);
        self.updated(index, out);
    }

    /// `tool-approval-response`: the part is found by its approval id.
    pub(super) fn tool_approval_response(
        &mut self,
        approval_id: &str,
        approved: bool,
        reason: Option<String>,
        provider_executed: Option<bool>,
        provider_metadata: Option<Json>,
        out: &mut Vec<StreamDelta>,
    ) {
        let found = self.approvals.get(approval_id).copied().and_then(|index| {
            let part = self.tool_mut(index)?;
            let approval = part.approval.as_mut().filter(|a| a.id == approval_id)?;
            approval.approved = Some(approved);
            if reason.is_some() {
                approval.reason = reason;
            }
            part.state = ToolState::ApprovalResponded;
            if provider_executed.is_some() {
                part.provider_executed = provider_executed;
            }
            if provider_metadata.is_some() {
                part.call_provider_metadata = provider_metadata;
            }
            Some(index)
        });
        match found {
            Some(index) => self.updated(index, out),
            None => self.protocol_errors += 1,
        }
    }

    pub(super) fn tool_output_denied(&mut self, call_id: &str, out: &mut Vec<StreamDelta>) {
        let Some((index, part)) = self.result_part(call_id) else {
            return;
        };
        part.state = ToolState::OutputDenied;
        self.updated(index, out);
    }
}

/// RU-5: the text of a stream that names a result's call it never started (the reference's
/// decoder's words), followed by the id.
pub const UNKNOWN_RESULT_TEXT: &str = "Encountered tool result with unknown id:";
/// RU-5: the text of a stream that starts a call id twice, followed by the id.
pub const DUPLICATE_CALL_TEXT: &str = "Encountered duplicate tool call id:";
/// RU-1: the name of a runtime call whose `toolName` is not a string.
const UNKNOWN_TOOL: &str = "unknown";

/// A tool's result (`tool-result`, or `tool-output-available` with `isError`): the output is
/// kept either way; a failed call also gets an `errorText` read from it
/// ([`result_error_text`]).
fn set_result(part: &mut ToolPart, result: Value, is_error: bool) {
    if is_error {
        part.state = ToolState::OutputError;
        part.error_text = Some(result_error_text(&result));
    } else {
        part.state = ToolState::OutputAvailable;
        part.error_text = None;
    }
    part.output = Some(Json::from(result));
    part.preliminary = None;
}

/// The text a failed tool's result stands for, for a host that shows one line: a string
/// result itself; the `text` items of an MCP-style `content` list, joined by newlines; a
/// string `error` field; else the result's compact JSON.
pub fn result_error_text(result: &Value) -> String {
    match result {
        Value::String(text) => return text.clone(),
        Value::Object(map) => {
            if let Some(Value::Array(content)) = map.get("content") {
                let texts: Vec<&str> = content
                    .iter()
                    .filter_map(|item| item.get("text").and_then(Value::as_str))
                    .collect();
                if !texts.is_empty() {
                    return texts.join("\n");
                }
            }
            if let Some(Value::String(error)) = map.get("error") {
                return error.clone();
            }
        }
        _ => {}
    }
    result.to_string()
}

/// The optional fields of an output chunk.
fn apply_result_fields(part: &mut ToolPart, result: ToolResult) {
    if result.provider_executed.is_some() {
        part.provider_executed = result.provider_executed;
    }
    if result.provider_metadata.is_some() {
        part.result_provider_metadata = result.provider_metadata;
    }
    if result.tool_metadata.is_some() {
        part.tool_metadata = result.tool_metadata;
    }
}
