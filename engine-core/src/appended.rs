//! Text appended to a part of an answer, with the appends that follow it merged: what a binding
//! hands its host for the text, reasoning and tool-input deltas of a streamed answer. The
//! engine already hands on one delta per part for the frames of one piece of the body
//! (`AnswerStream::feed`); [`AppendMerger`] merges across the pieces a host hands in one call
//! (the Python binding's `feed_body_chunks`). Appending the merged text is appending each
//! delta's, in order.

use crate::event::Event;
use crate::stream::StreamDelta;

/// Which text of the part grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AppendKind {
    /// A text part's text.
    Text,
    /// A reasoning part's text.
    Reasoning,
    /// A tool call's raw input, JSON text: its input is the parse of the raw text.
    ToolInput,
    /// A tool call's raw input, plain text (`inputEncoding: "text"`): its input is the text.
    ToolInputText,
}

/// Text appended to part `index` of the answer streaming for session `session_uid`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppendedText {
    /// The session whose answer it is.
    pub session_uid: String,
    /// Which text grows.
    pub kind: AppendKind,
    /// The part's index in the message.
    pub index: usize,
    /// The text appended.
    pub text: String,
}

impl AppendedText {
    /// The append an event carries, or the event itself when it is not one.
    #[allow(
        clippy::result_large_err,
        reason = "moved once on its way out; boxing would allocate for every event"
    )]
    pub fn from_event(event: Event) -> Result<AppendedText, Event> {
        let Event::Answer { session_uid, delta } = event else {
            return Err(event);
        };
        let (kind, index, text) = match delta {
            StreamDelta::TextDelta { index, delta } => (AppendKind::Text, index, delta),
            StreamDelta::ReasoningDelta { index, delta } => (AppendKind::Reasoning, index, delta),
            StreamDelta::ToolInputDelta {
                index,
                delta,
                input_is_text,
                ..
            } => {
                let kind = if input_is_text {
                    AppendKind::ToolInputText
                } else {
                    AppendKind::ToolInput
                };
                (kind, index, delta)
            }
            delta => return Err(Event::Answer { session_uid, delta }),
        };
        Ok(AppendedText {
            session_uid,
            kind,
            index,
            text,
        })
    }

    /// Whether `next` appends to the same text of the same part of the same answer.
    pub fn continues(&self, next: &AppendedText) -> bool {
        self.kind == next.kind && self.index == next.index && self.session_uid == next.session_uid
    }
}

/// A value to hand on: merged appended text, or any other event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Merged {
    /// Appended text (one delta, or several that followed one another).
    Text(AppendedText),
    /// Any other event, as the engine gave it.
    Other(Event),
}

/// Merges the appends that follow one another; any other event ends a merge, so the order of
/// everything handed on is the engine's.
///
/// ```
/// use engine_core::{AppendMerger, Event, Merged};
/// use engine_core::stream::StreamDelta;
///
/// let delta = |text: &str| Event::Answer {
///     session_uid: "s".to_owned(),
///     delta: StreamDelta::TextDelta { index: 0, delta: text.to_owned() },
/// };
/// let mut merger = AppendMerger::default();
/// let mut out = Vec::new();
/// for event in [delta("Hel"), delta("lo")] {
///     merger.push(event, |m| Ok::<_, ()>(out.push(m))).unwrap();
/// }
/// merger.finish(|m| Ok::<_, ()>(out.push(m))).unwrap();
/// let [Merged::Text(text)] = out.as_slice() else { panic!() };
/// assert_eq!(text.text, "Hello");
/// ```
#[derive(Debug, Default)]
pub struct AppendMerger {
    pending: Option<AppendedText>,
}

impl AppendMerger {
    /// Takes the next event, handing on (to `out`) what it completes.
    pub fn push<E>(
        &mut self,
        event: Event,
        mut out: impl FnMut(Merged) -> Result<(), E>,
    ) -> Result<(), E> {
        match (AppendedText::from_event(event), self.pending.as_mut()) {
            (Ok(next), Some(p)) if p.continues(&next) => {
                p.text.push_str(&next.text);
                Ok(())
            }
            (Ok(next), _) => {
                if let Some(p) = self.pending.replace(next) {
                    out(Merged::Text(p))?;
                }
                Ok(())
            }
            (Err(other), _) => {
                if let Some(p) = self.pending.take() {
                    out(Merged::Text(p))?;
                }
                out(Merged::Other(other))
            }
        }
    }

    /// Hands on the append still held, if any.
    pub fn finish<E>(&mut self, mut out: impl FnMut(Merged) -> Result<(), E>) -> Result<(), E> {
        match self.pending.take() {
            Some(p) => out(Merged::Text(p)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::stream::StreamDelta;

    fn answer(session: &str, delta: StreamDelta) -> Event {
        Event::Answer {
            session_uid: session.to_owned(),
            delta,
        }
    }

    fn text(session: &str, index: usize, t: &str) -> Event {
        answer(
            session,
            StreamDelta::TextDelta {
                index,
                delta: t.to_owned(),
            },
        )
    }

    fn run(events: Vec<Event>) -> Vec<Merged> {
        let mut merger = AppendMerger::default();
        let mut out = Vec::new();
        for event in events {
            merger
                .push(event, |m| {
                    out.push(m);
                    Ok::<_, ()>(())
                })
                .unwrap();
        }
        merger
            .finish(|m| {
                out.push(m);
                Ok::<_, ()>(())
            })
            .unwrap();
        out
    }

    fn merged(session: &str, kind: AppendKind, index: usize, t: &str) -> Merged {
        Merged::Text(AppendedText {
            session_uid: session.to_owned(),
            kind,
            index,
            text: t.to_owned(),
        })
    }

    /// Runs of one part merge; another part, kind or session, or any other event, ends a run,
    /// and the order is kept.
    #[test]
    fn merges_runs_and_keeps_the_order() {
        let reasoning = |t: &str| {
            answer(
                "s",
                StreamDelta::ReasoningDelta {
                    index: 0,
                    delta: t.to_owned(),
                },
            )
        };
        let tool = |t: &str, input_is_text| {
            answer(
                "s",
                StreamDelta::ToolInputDelta {
                    index: 2,
                    delta: t.to_owned(),
                    input_is_text,
                },
            )
        };
        let status = answer("s", StreamDelta::ToolStatus { line: None });
        let out = run(vec![
            reasoning("a"),
            reasoning("b"),
            text("s", 1, "c"),
            text("s", 1, "d"),
            text("t", 1, "e"),
            text("s", 3, "f"),
            status.clone(),
            text("s", 3, "g"),
            tool("{\"a\"", false),
            tool(":1}", false),
            tool("x", true),
        ]);
        assert_eq!(
            out,
            vec![
                merged("s", AppendKind::Reasoning, 0, "ab"),
                merged("s", AppendKind::Text, 1, "cd"),
                merged("t", AppendKind::Text, 1, "e"),
                merged("s", AppendKind::Text, 3, "f"),
                Merged::Other(status),
                merged("s", AppendKind::Text, 3, "g"),
                merged("s", AppendKind::ToolInput, 2, "{\"a\":1}"),
                merged("s", AppendKind::ToolInputText, 2, "x"),
            ]
        );
    }

    #[test]
    fn other_events_pass_as_they_are() {
        let event = Event::RequestedSessionRemoved {
            session_uid: "s".to_owned(),
        };
        assert_eq!(run(vec![event.clone()]), vec![Merged::Other(event)]);
        assert_eq!(run(vec![]), vec![]);
    }
}
