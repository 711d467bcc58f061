//! Text and reasoning parts (ui-message-stream §5, "Text", "Reasoning"): opened by their
//! start, appended to by their deltas (a high surrogate half at a delta's end waiting for the
//! next), ended by their end; and how appended text is handed on: one delta per part and run
//! of frames of one `feed` call ([`Assembler::appended`]).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::Assembler;
use crate::Json;
use crate::message::{Part, PartState, ReasoningPart, TextPart};
use crate::stream::delta::StreamDelta;
use crate::stream::surrogates::{self, SplitSurrogates};

/// A text-like part: text or reasoning (separate id namespaces, mirrored rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextKind {
    Text,
    Reasoning,
}

impl TextKind {
    fn append(self) -> Append {
        match self {
            TextKind::Text => Append::Text,
            TextKind::Reasoning => Append::Reasoning,
        }
    }
}

/// What appended text is appended to (see [`Assembler::appended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Append {
    Text,
    Reasoning,
    /// A tool call's streaming input; `text`: the input is the raw text itself.
    ToolInput {
        text: bool,
    },
}

impl Assembler {
    /// The open parts of `kind`, to change: the part found last is forgotten.
    pub(super) fn open_parts(&mut self, kind: TextKind) -> &mut HashMap<String, usize> {
        self.last_open = None;
        match kind {
            TextKind::Text => &mut self.open_text,
            TextKind::Reasoning => &mut self.open_reasoning,
        }
    }

    pub(super) fn pending_halves(&mut self, kind: TextKind) -> &mut HashMap<String, u16> {
        match kind {
            TextKind::Text => &mut self.pending_text,
            TextKind::Reasoning => &mut self.pending_reasoning,
        }
    }

    /// `delta` joined to the pending half of the part `id` (see [`surrogates::join`]).
    pub(super) fn joined<'a>(
        &mut self,
        kind: TextKind,
        id: &str,
        delta: Cow<'a, str>,
        split: SplitSurrogates,
    ) -> Cow<'a, str> {
        let halves = self.pending_halves(kind);
        if halves.is_empty() && split == SplitSurrogates::default() {
            return delta;
        }
        let mut pending = halves.remove(id);
        let text = surrogates::join(&mut pending, delta.into_owned(), split);
        if let Some(high) = pending {
            halves.insert(id.to_owned(), high);
        }
        Cow::Owned(text)
    }

    /// Hands on `text`, appended to the part at `index`: joined to the last delta of `out`
    /// when that one appends to the same part the same way, else as a new delta. The deltas a
    /// piece of the body gives for one part go out as one, and a delta's text is not made a
    /// string of its own each. The last reasoning text that is not blank is kept, trimmed
    /// ([`Assembler::last_reasoning`]).
    pub(super) fn appended(
        &mut self,
        out: &mut Vec<StreamDelta>,
        how: Append,
        index: usize,
        text: Cow<'_, str>,
    ) {
        if how == Append::Reasoning {
            let trimmed = text.trim();
            if !trimmed.is_empty() {
                self.last_reasoning.clear();
                self.last_reasoning.push_str(trimmed);
            }
        }
        let mine = out.len() > self.joins_from;
        let last = match (out.last_mut().filter(|_| mine), how) {
            (Some(StreamDelta::TextDelta { index: i, delta }), Append::Text)
            | (Some(StreamDelta::ReasoningDelta { index: i, delta }), Append::Reasoning)
                if *i == index =>
            {
                Some(delta)
            }
            (
                Some(StreamDelta::ToolInputDelta {
                    index: i,
                    delta,
                    input_is_text,
                }),
                Append::ToolInput { text: t },
            ) if *i == index && *input_is_text == t => Some(delta),
            _ => None,
        };
        match last {
            Some(delta) => delta.push_str(&text),
            None => {
                let delta = text.into_owned();
                out.push(match how {
                    Append::Text => StreamDelta::TextDelta { index, delta },
                    Append::Reasoning => StreamDelta::ReasoningDelta { index, delta },
                    Append::ToolInput { text } => StreamDelta::ToolInputDelta {
                        index,
                        delta,
                        input_is_text: text,
                    },
                });
            }
        }
    }

    /// Appended text may be joined to the deltas of `out` from `len` on (the caller has not
    /// read them yet: they are its current call's), none before. Without this call nothing
    /// is joined: each append is a delta of its own.
    pub(crate) fn joins_from(&mut self, len: usize) {
        self.joins_from = len;
    }

    /// The trimmed text of the last reasoning frame's append that was not blank (a frame's
    /// delta, or the U+FFFD a waiting surrogate half became): what the run shows as its
    /// thinking summary (a delta handed on may join several, see [`Assembler::appended`]);
    /// empty before any.
    pub(crate) fn last_reasoning(&self) -> &str {
        &self.last_reasoning
    }

    /// A half the part `id` still waits on becomes U+FFFD: the part is ending, or its id opens
    /// another part.
    pub(super) fn flush_text(&mut self, kind: TextKind, id: &str, out: &mut Vec<StreamDelta>) {
        let mut pending = self.pending_halves(kind).remove(id);
        let Some(text) = surrogates::flush(&mut pending) else {
            return;
        };
        if let Some((index, fields)) = self.open_text_part(kind, id) {
            fields.text.push_str(&text);
            self.appended(out, kind.append(), index, Cow::Owned(text));
        }
    }

    /// Every pending half becomes U+FFFD, in part order.
    pub(super) fn flush_pending(&mut self, out: &mut Vec<StreamDelta>) {
        let mut waiting: Vec<(usize, TextKind, String)> = Vec::new();
        for kind in [TextKind::Text, TextKind::Reasoning] {
            let ids: Vec<String> = self.pending_halves(kind).keys().cloned().collect();
            for id in ids {
                let index = self
                    .open_parts(kind)
                    .get(&id)
                    .copied()
                    .unwrap_or(usize::MAX);
                waiting.push((index, kind, id));
            }
        }
        waiting.sort_unstable_by_key(|(index, _, _)| *index);
        for (_, kind, id) in waiting {
            self.flush_text(kind, &id, out);
        }
        self.flush_tool_inputs(out);
    }

    pub(super) fn new_text_part(
        kind: TextKind,
        id: &str,
        text: String,
        provider_metadata: Option<Json>,
    ) -> Part {
        match kind {
            TextKind::Text => Part::Text(TextPart {
                text,
                state: PartState::Streaming,
                provider_metadata,
                citations: None,
            }),
            TextKind::Reasoning => Part::Reasoning(ReasoningPart {
                id: Some(id.to_owned()),
                text,
                state: PartState::Streaming,
                provider_metadata,
            }),
        }
    }

    pub(super) fn start_text(
        &mut self,
        kind: TextKind,
        id: String,
        provider_metadata: Option<Json>,
        out: &mut Vec<StreamDelta>,
    ) {
        self.flush_text(kind, &id, out);
        let part = Self::new_text_part(kind, &id, String::new(), provider_metadata);
        let index = self.push_part(part, out);
        self.open_parts(kind).insert(id, index);
    }

    /// The open part of `kind` for `id`: its index and fields.
    pub(super) fn open_text_part(
        &mut self,
        kind: TextKind,
        id: &str,
    ) -> Option<(usize, TextFields<'_>)> {
        let index = match &mut self.last_open {
            Some((k, index, last)) if *k == kind && last == id => *index,
            _ => {
                let open = match kind {
                    TextKind::Text => &self.open_text,
                    TextKind::Reasoning => &self.open_reasoning,
                };
                let index = *open.get(id)?;
                let mut last = self.last_open.take().map(|(_, _, s)| s).unwrap_or_default();
                last.clear();
                last.push_str(id);
                self.last_open = Some((kind, index, last));
                index
            }
        };
        let fields = text_fields(self.message.parts.get_mut(index)?, kind)?;
        Some((index, fields))
    }

    pub(super) fn text_delta(
        &mut self,
        kind: TextKind,
        id: &str,
        (delta, split): (Cow<'_, str>, SplitSurrogates),
        provider_metadata: Option<Json>,
        out: &mut Vec<StreamDelta>,
    ) {
        let delta = self.joined(kind, id, delta, split);
        let Some((index, fields)) = self.open_text_part(kind, id) else {
            // Lenient: a delta for an id with no open part opens one.
            self.protocol_errors += 1;
            let part = Self::new_text_part(kind, id, delta.into_owned(), provider_metadata);
            let index = self.push_part(part, out);
            self.open_parts(kind).insert(id.to_owned(), index);
            return;
        };
        fields.text.push_str(&delta);
        if provider_metadata.is_some() {
            *fields.provider_metadata = provider_metadata;
            self.updated(index, out);
            return;
        }
        self.appended(out, kind.append(), index, delta);
    }

    pub(super) fn end_text(
        &mut self,
        kind: TextKind,
        id: &str,
        provider_metadata: Option<Json>,
        citations: Option<Value>,
        out: &mut Vec<StreamDelta>,
    ) {
        self.flush_text(kind, id, out);
        let Some((index, fields)) = self.open_text_part(kind, id) else {
            self.protocol_errors += 1;
            return;
        };
        *fields.state = PartState::Done;
        // The text is final: give back what growing it reserved.
        fields.text.shrink_to_fit();
        if provider_metadata.is_some() {
            *fields.provider_metadata = provider_metadata;
        }
        if let (Some(citations), Some(slot)) = (citations, fields.citations) {
            *slot = Some(Json::from(citations));
        }
        self.open_parts(kind).remove(id);
        self.updated(index, out);
    }
}

/// The mutable fields of a text or reasoning part.
pub(super) struct TextFields<'a> {
    text: &'a mut String,
    state: &'a mut PartState,
    provider_metadata: &'a mut Option<Json>,
    /// Text parts only.
    citations: Option<&'a mut Option<Json>>,
}

pub(super) fn text_fields(part: &mut Part, kind: TextKind) -> Option<TextFields<'_>> {
    match (part, kind) {
        (Part::Text(text), TextKind::Text) => Some(TextFields {
            text: &mut text.text,
            state: &mut text.state,
            provider_metadata: &mut text.provider_metadata,
            citations: Some(&mut text.citations),
        }),
        (Part::Reasoning(reasoning), TextKind::Reasoning) => Some(TextFields {
            text: &mut reasoning.text,
            state: &mut reasoning.state,
            provider_metadata: &mut reasoning.provider_metadata,
            citations: None,
        }),
        _ => None,
    }
}
