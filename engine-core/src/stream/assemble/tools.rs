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
            out.push(StreamDelta::ToolInputDelta {
                index,
                delta: delta.to_owned(),
                input_is_text: partial.encoding == InputEncoding::Text,
            });
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
        input: Value,
        out: &mut Vec<StreamDelta>,
    ) {
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
        out: &mut Vec<StreamDelta>,
    ) {
        let Some((index, part)) = self.result_part(&result.tool_call_id) else {
            return;
        };
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
