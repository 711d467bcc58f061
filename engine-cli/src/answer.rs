//! What the person is shown of an answer besides its text (issue 24): one line per tool call,
//! naming the tool and its outcome, once the outcome is known (between the reasoning and the
//! text, where the Agent ran it); and, at the answer's end, a word on stderr when the answer
//! showed nothing while the Agent sent frames this chat does not read.

use std::collections::{BTreeMap, BTreeSet};

use engine_core::message::{Part, ToolPart, ToolState};
use engine_core::stream::{SkipReason, StreamDelta, StreamStats};

use crate::text::one_line;

/// The longest error text a tool line shows, in characters (longer ones end with `...`).
const MAX_ERROR_CHARS: usize = 120;

/// The line of a tool call whose outcome is known, or `None` while it runs: `· NAME: ok`,
/// `· NAME failed: ERROR` (one line, control characters stripped, at most
/// [`MAX_ERROR_CHARS`] of the error), `· NAME: denied[: REASON]`.
pub fn tool_line(tool: &ToolPart) -> Option<String> {
    let name = tool_name(tool);
    match tool.state {
        ToolState::OutputAvailable => Some(format!("· {name}: ok")),
        ToolState::OutputError => {
            let error = tool
                .error_text
                .as_deref()
                .map(|e| shorten(&one_line(e)))
                .filter(|e| !e.trim().is_empty());
            Some(match error {
                Some(error) => format!("· {name} failed: {}", error.trim()),
                None => format!("· {name} failed"),
            })
        }
        ToolState::OutputDenied => {
            let reason = tool
                .approval
                .as_ref()
                .and_then(|a| a.reason.as_deref())
                .map(|r| shorten(&one_line(r)))
                .filter(|r| !r.trim().is_empty());
            Some(match reason {
                Some(reason) => format!("· {name}: denied: {}", reason.trim()),
                None => format!("· {name}: denied"),
            })
        }
        _ => None,
    }
}

/// The line of a tool call the answer ended without an outcome for.
fn unfinished_line(tool: &ToolPart) -> String {
    format!("· {}: no result", tool_name(tool))
}

/// The tool's name as one line; "tool" when it has none.
fn tool_name(tool: &ToolPart) -> String {
    let name = one_line(&tool.tool_name);
    let name = name.trim();
    if name.is_empty() {
        "tool".to_owned()
    } else {
        shorten(name)
    }
}

/// `text` cut to [`MAX_ERROR_CHARS`] characters, `...` marking the cut.
fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_ERROR_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_ERROR_CHARS - 3).collect();
    cut.push_str("...");
    cut
}

/// Whether a part shows something: text or reasoning that is not blank, or a tool call.
fn visible(part: &Part) -> bool {
    match part {
        Part::Text(t) => !t.text.trim().is_empty(),
        Part::Reasoning(r) => !r.text.trim().is_empty(),
        Part::Tool(_) => true,
        _ => false,
    }
}

/// The note for an answer that showed nothing while frames were skipped: `skipped` names each
/// skipped type (`""`: payloads that were no frames) with its count when known; `None` when
/// nothing was skipped.
pub fn showed_nothing(skipped: &BTreeMap<String, Option<u64>>) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let total: Option<u64> = skipped.values().copied().sum();
    let names: Vec<String> = skipped
        .iter()
        .map(|(name, count)| {
            let name = if name.is_empty() {
                "(not frames)".to_owned()
            } else {
                one_line(name)
            };
            match count {
                Some(n) => format!("{name} ×{n}"),
                None => name,
            }
        })
        .collect();
    let frames = match total {
        Some(1) => "1 frame".to_owned(),
        Some(n) => format!("{n} frames"),
        None => "frames".to_owned(),
    };
    Some(format!(
        "(the answer showed nothing: the Agent sent {frames} this chat does not read: {})",
        names.join(", ")
    ))
}

/// [`showed_nothing`] from a decoded answer's stats (with the counts).
pub fn showed_nothing_in(parts: &[Part], stats: &StreamStats) -> Option<String> {
    if parts.iter().any(visible) {
        return None;
    }
    let skipped = stats
        .skipped_types
        .iter()
        .map(|(name, n)| (name.clone(), Some(*n)))
        .collect();
    showed_nothing(&skipped)
}

/// Follows one streamed answer at a time through its deltas: the lines to show, in order.
#[derive(Debug, Default)]
pub struct Follower {
    /// The tool calls of the answer by part index, and whether their line was shown.
    tools: BTreeMap<usize, (ToolPart, bool)>,
    /// The answer showed something.
    shown: bool,
    /// The types of the frames skipped (the engine reports the first of each type).
    skipped: BTreeSet<String>,
}

impl Follower {
    /// The lines `delta` brings: a tool call's outcome line; at the answer's end, the lines
    /// of calls that got no outcome and the note of an answer that showed nothing while frames
    /// were skipped (then it follows the next answer).
    pub fn lines(&mut self, delta: &StreamDelta) -> Vec<String> {
        match delta {
            StreamDelta::PartAdded { index, part } | StreamDelta::PartUpdated { index, part } => {
                self.shown |= visible(part);
                let Part::Tool(tool) = part else {
                    return Vec::new();
                };
                let entry = self
                    .tools
                    .entry(*index)
                    .or_insert_with(|| (ToolPart::default(), false));
                entry.0 = (**tool).clone();
                match tool_line(tool) {
                    Some(line) if !entry.1 => {
                        entry.1 = true;
                        vec![line]
                    }
                    _ => Vec::new(),
                }
            }
            StreamDelta::TextDelta { delta, .. } | StreamDelta::ReasoningDelta { delta, .. } => {
                self.shown |= !delta.trim().is_empty();
                Vec::new()
            }
            StreamDelta::PartsRemoved { from } => {
                self.tools.retain(|index, _| index < from);
                Vec::new()
            }
            StreamDelta::FrameSkipped { frame_type, reason } => {
                let name = frame_type.clone().unwrap_or_default();
                let name = match reason {
                    SkipReason::InvalidField { field } => format!("{name} (invalid {field})"),
                    _ => name,
                };
                self.skipped.insert(name);
                Vec::new()
            }
            StreamDelta::Ended { .. } => {
                let done = std::mem::take(self);
                let mut lines: Vec<String> = done
                    .tools
                    .values()
                    .filter(|(_, shown)| !shown)
                    .map(|(tool, _)| unfinished_line(tool))
                    .collect();
                if !done.shown {
                    let skipped = done.skipped.into_iter().map(|n| (n, None)).collect();
                    lines.extend(showed_nothing(&skipped));
                }
                lines
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tool(name: &str, state: ToolState, error: Option<&str>) -> ToolPart {
        let mut tool = ToolPart::default();
        tool.tool_name = name.to_owned();
        tool.state = state;
        tool.error_text = error.map(str::to_owned);
        tool
    }

    /// Issue 24, point 4: one line per tool call, its outcome named; the error on one line,
    /// control characters stripped, long errors cut.
    #[test]
    fn tool_lines_read_well() {
        let line = |t: &ToolPart| tool_line(t).unwrap();
        assert_eq!(
            line(&tool("bash", ToolState::OutputAvailable, None)),
            "· bash: ok"
        );
        assert_eq!(
            line(&tool(
                "get_weather",
                ToolState::OutputError,
                Some("Weather service\nunavailable\u{1b}[31m")
            )),
            "· get_weather failed: Weather service unavailable"
        );
        assert_eq!(
            line(&tool("", ToolState::OutputError, None)),
            "· tool failed"
        );
        let long = line(&tool("x", ToolState::OutputError, Some(&"e".repeat(500))));
        assert!(long.ends_with("..."), "{long}");
        assert_eq!(
            long.chars().count(),
            "· x failed: ".len() - 1 + MAX_ERROR_CHARS
        );
        assert!(tool_line(&tool("x", ToolState::InputAvailable, None)).is_none());
    }

    /// Issue 24, point 5: an answer that showed nothing while frames were skipped says so, with
    /// the types (and counts when known); one that showed something says nothing.
    #[test]
    fn an_answer_that_showed_nothing_says_why() {
        let mut follower = Follower::default();
        let skipped = StreamDelta::FrameSkipped {
            frame_type: Some("x-future".into()),
            reason: SkipReason::UnknownType,
        };
        assert!(follower.lines(&skipped).is_empty());
        let ended = StreamDelta::Ended {
            outcome: engine_core::StreamOutcome::Finished {
                finish_reason: None,
            },
            status: engine_core::message::MessageStatus::Complete,
        };
        assert_eq!(
            follower.lines(&ended),
            [
                "(the answer showed nothing: the Agent sent frames this chat does not read: x-future)"
            ]
        );
        // Reset: the next answer shows text.
        follower.lines(&skipped);
        follower.lines(&StreamDelta::TextDelta {
            index: 0,
            delta: "hi".into(),
        });
        assert!(follower.lines(&ended).is_empty());
        let counted = BTreeMap::from([("x-future".to_owned(), Some(12)), (String::new(), Some(1))]);
        assert_eq!(
            showed_nothing(&counted).unwrap(),
            "(the answer showed nothing: the Agent sent 13 frames this chat does not read: (not frames) ×1, x-future ×12)"
        );
    }
}
