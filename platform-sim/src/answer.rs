//! The simulated Agents' answers, in either [`Dialect`] (issue 24): what an answer holds is
//! decided once ([`Piece`]s), then spelled in the runtime's names (`json.dumps` style, RU-1) or
//! in the AI SDK's.

use serde_json::{Map, Value, json};

use crate::types::{AnswerStyle, Dialect, SIM_TOOL};
use crate::wire::Frame;

/// One piece of an answer, before it is spelled in a dialect.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    /// A model turn begins.
    StepStart,
    /// The runtime's lifecycle frame (the runtime dialect only: the AI SDK has no such frame).
    Lifecycle,
    /// Reasoning, in these deltas.
    Reasoning(Vec<String>),
    /// A call of [`SIM_TOOL`] with these arguments; its result text, or its error text.
    Tool {
        args: Value,
        outcome: Result<String, String>,
    },
    /// The model turn ends, for this reason.
    StepEnd(&'static str),
    /// Text, in these deltas.
    Text(Vec<String>),
    /// The run succeeded.
    Finish,
    /// The run failed with this text (instead of [`Piece::Finish`]).
    Error(String),
}

/// `text` cut after each space, so the pieces join back to `text`.
fn words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

/// The reasoning and the tool call every non-scripted answer starts with.
fn thinking(user_text: &str, outcome: Result<String, String>) -> Vec<Piece> {
    vec![
        Piece::StepStart,
        Piece::Lifecycle,
        Piece::Reasoning(vec![
            "The person wrote something; ".to_owned(),
            "I will count its words, then answer.".to_owned(),
        ]),
        Piece::Tool {
            args: json!({ "text": user_text }),
            outcome,
        },
        Piece::StepEnd("tool-calls"),
    ]
}

/// The tool's result text for `user_text`.
fn counted(user_text: &str) -> String {
    match user_text.split_whitespace().count() {
        1 => "1 word".to_owned(),
        n => format!("{n} words"),
    }
}

/// What an answer in `style` holds; `None` for a script, which is written as it is.
fn pieces(style: &AnswerStyle, user_text: &str) -> Option<Vec<Piece>> {
    let echo = || format!("You said: {user_text}");
    let (outcome, text) = match style {
        AnswerStyle::Echo => (Ok(counted(user_text)), echo()),
        AnswerStyle::Fixed(text) => (Ok(counted(user_text)), text.clone()),
        AnswerStyle::FailingTool(error) => (Err(error.clone()), echo()),
        AnswerStyle::FailedRun(error) => {
            return Some(vec![
                Piece::StepStart,
                Piece::Lifecycle,
                Piece::Text(words(&echo())),
                Piece::StepEnd("error"),
                Piece::Error(error.clone()),
            ]);
        }
        AnswerStyle::RefusedTurn(error) => return Some(vec![Piece::Error(error.clone())]),
        AnswerStyle::Script(_) => return None,
    };
    let mut pieces = thinking(user_text, outcome);
    pieces.extend([
        Piece::StepStart,
        Piece::Text(words(&text)),
        Piece::StepEnd("stop"),
        Piece::Finish,
    ]);
    Some(pieces)
}

/// The frames of one answer to `user_text` (message id `message_id`), `[DONE]` last.
pub(crate) fn answer_frames(
    dialect: Dialect,
    style: &AnswerStyle,
    user_text: &str,
    message_id: &str,
) -> Vec<Frame> {
    let Some(pieces) = pieces(style, user_text) else {
        let AnswerStyle::Script(chunks) = style else {
            return vec![Frame::done()];
        };
        let mut frames: Vec<Frame> = chunks
            .iter()
            .map(|chunk| match chunk {
                Value::String(text) => Frame::Raw(text.clone()),
                other => Frame::Chunk(other.clone()),
            })
            .collect();
        if !chunks.iter().any(|c| c.as_str() == Some("[DONE]")) {
            frames.push(Frame::done());
        }
        return frames;
    };
    let mut writer = Writer {
        dialect,
        message_id,
        frames: Vec::new(),
    };
    // The stand-in's refused turn opens with `start` in either dialect (RU-53).
    if dialect == Dialect::AiSdk || matches!(style, AnswerStyle::RefusedTurn(_)) {
        writer.push(&[("type", "start".into()), ("messageId", message_id.into())]);
    }
    for piece in pieces {
        writer.piece(piece);
    }
    writer.frames.push(Frame::done());
    writer.frames
}

/// The body of one answer, as the simulator streams it (without its pacing).
pub fn answer_body(
    dialect: Dialect,
    style: &AnswerStyle,
    user_text: &str,
    message_id: &str,
) -> Vec<u8> {
    answer_frames(dialect, style, user_text, message_id)
        .iter()
        .flat_map(|frame| frame.bytes())
        .collect()
}

/// One SSE event (`data: {json}\n\n`) of a chunk with these fields, written as the simulator
/// writes it in `dialect`: in the runtime's, as Python's `json.dumps` in the fields' order,
/// non-ASCII escaped; in the AI SDK's, by serde_json. For tests that write answers of their
/// own in either dialect.
pub fn event(dialect: Dialect, fields: &[(&str, Value)]) -> String {
    let bytes = frame(dialect, fields).bytes();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// How many frames come before the first text delta of an echo.
pub(crate) fn frames_before_text(dialect: Dialect) -> usize {
    answer_frames(dialect, &AnswerStyle::Echo, "x", "m")
        .iter()
        .position(|f| {
            f.chunk()
                .and_then(|c| c.get("type"))
                .and_then(Value::as_str)
                == Some("text-delta")
        })
        .unwrap_or(0)
}

/// Spells pieces in a dialect.
struct Writer<'a> {
    dialect: Dialect,
    message_id: &'a str,
    frames: Vec<Frame>,
}

impl Writer<'_> {
    fn push(&mut self, fields: &[(&str, Value)]) {
        self.frames.push(frame(self.dialect, fields));
    }

    fn runtime(&self) -> bool {
        self.dialect == Dialect::Runtime
    }

    fn piece(&mut self, piece: Piece) {
        let id = |runtime: &str, ai_sdk: &str| -> Value {
            if self.runtime() {
                runtime.into()
            } else {
                format!("{ai_sdk}-{}", self.message_id).into()
            }
        };
        match piece {
            Piece::StepStart => self.push(&[("type", "start-step".into())]),
            Piece::Lifecycle if self.runtime() => self.push(&[
                ("type", "data-runtime-lifecycle".into()),
                ("data", json!({"phase": "running"})),
            ]),
            Piece::Lifecycle => {}
            Piece::Reasoning(deltas) => {
                let id = id("reasoning-0", "rsn");
                self.push(&[("type", "reasoning-start".into()), ("id", id.clone())]);
                for delta in deltas {
                    self.push(&[
                        ("type", "reasoning-delta".into()),
                        ("id", id.clone()),
                        ("delta", delta.into()),
                    ]);
                }
                self.push(&[("type", "reasoning-end".into()), ("id", id)]);
            }
            Piece::Tool { args, outcome } => self.tool(&args, outcome),
            Piece::StepEnd(reason) if self.runtime() => self.push(&[
                ("type", "finish-step".into()),
                ("finishReason", reason.into()),
            ]),
            Piece::StepEnd(_) => self.push(&[("type", "finish-step".into())]),
            Piece::Text(deltas) => {
                let id = id("text-0", "txt");
                let key = if self.runtime() { "textDelta" } else { "delta" };
                self.push(&[("type", "text-start".into()), ("id", id.clone())]);
                for delta in deltas {
                    self.push(&[
                        ("type", "text-delta".into()),
                        ("id", id.clone()),
                        (key, delta.into()),
                    ]);
                }
                self.push(&[("type", "text-end".into()), ("id", id)]);
            }
            Piece::Finish => {
                self.push(&[("type", "finish".into()), ("finishReason", "stop".into())])
            }
            Piece::Error(text) => {
                self.push(&[("type", "error".into()), ("errorText", text.into())])
            }
        }
    }

    fn tool(&mut self, args: &Value, outcome: Result<String, String>) {
        let call: Value = format!("call-{}", self.message_id).into();
        let name: Value = SIM_TOOL.into();
        let result_text = match &outcome {
            Ok(text) | Err(text) => text.clone(),
        };
        let result = json!({"content": [{"type": "text", "text": result_text}], "details": {}});
        if self.runtime() {
            // The arguments as the runtime writes them: `json.dumps` of the object, compact.
            let args_text = ascii_escaped(&args.to_string());
            self.push(&[
                ("type", "tool-call-start".into()),
                ("toolCallId", call.clone()),
                ("toolName", name),
            ]);
            self.push(&[
                ("type", "tool-call-delta".into()),
                ("toolCallId", call.clone()),
                ("argsText", args_text.into()),
            ]);
            self.push(&[
                ("type", "tool-call-end".into()),
                ("toolCallId", call.clone()),
            ]);
            self.push(&[
                ("type", "tool-result".into()),
                ("toolCallId", call),
                ("result", result),
                ("isError", outcome.is_err().into()),
            ]);
            return;
        }
        self.push(&[
            ("type", "tool-input-start".into()),
            ("toolCallId", call.clone()),
            ("toolName", name.clone()),
        ]);
        self.push(&[
            ("type", "tool-input-delta".into()),
            ("toolCallId", call.clone()),
            ("inputTextDelta", args.to_string().into()),
        ]);
        self.push(&[
            ("type", "tool-input-available".into()),
            ("toolCallId", call.clone()),
            ("toolName", name),
            ("input", args.clone()),
        ]);
        match outcome {
            Ok(_) => self.push(&[
                ("type", "tool-output-available".into()),
                ("toolCallId", call),
                ("output", result),
            ]),
            Err(error) => self.push(&[
                ("type", "tool-output-error".into()),
                ("toolCallId", call),
                ("errorText", error.into()),
            ]),
        }
    }
}

/// One chunk with these fields, in `dialect`: the runtime's written in `json.dumps` style in
/// the fields' order, the AI SDK's by serde_json.
pub(crate) fn frame(dialect: Dialect, fields: &[(&str, Value)]) -> Frame {
    let chunk: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    match dialect {
        Dialect::AiSdk => Frame::Chunk(Value::Object(chunk)),
        Dialect::Runtime => Frame::Written {
            text: dumps(fields),
            chunk: Value::Object(chunk),
        },
    }
}

/// The fields as one JSON object written as Python's `json.dumps(frame, separators=(",",
/// ":"))` writes it: compact, in the fields' order (nested objects in serde_json's order, by
/// key), every non-ASCII character escaped.
fn dumps(fields: &[(&str, Value)]) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(*key).to_string());
        out.push(':');
        out.push_str(&value.to_string());
    }
    out.push('}');
    ascii_escaped(&out)
}

/// JSON text with every non-ASCII character written as `\uXXXX` (lower-case hex; a surrogate
/// pair past U+FFFF), as Python's `json.dumps` does by default (`ensure_ascii`). Non-ASCII
/// characters occur only inside strings, where the escape means the same character. serde_json
/// already escapes the other characters as Python does (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`,
/// `\f`, `\u00XX` for the other controls; `/` as it is), but for DEL, escaped here.
pub(crate) fn ascii_escaped(json: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(json.len());
    let mut units = [0u16; 2];
    for c in json.chars() {
        // Python escapes all but the printable ASCII characters, DEL included (serde_json
        // writes DEL as it is).
        if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// RU-1: non-ASCII, astral characters (a surrogate pair) and the characters JSON escapes
    /// are written as `json.dumps` writes them; the first delta is byte for byte the vector
    /// `mstau-unicode`'s (written by Python).
    #[test]
    fn dumps_escapes_as_python_does() {
        let fields = [
            ("type", Value::from("text-delta")),
            ("id", "text-0".into()),
            ("textDelta", "Grüße aus 中国 🌍, ".into()),
        ];
        assert_eq!(
            dumps(&fields),
            r#"{"type":"text-delta","id":"text-0","textDelta":"Gr\u00fc\u00dfe aus \u4e2d\u56fd \ud83c\udf0d, "}"#
        );
        // Python: json.dumps("q\" b\\ n\n t\t c\x01 d\x7f / é\x08\x0c")
        assert_eq!(
            ascii_escaped(&Value::from("q\" b\\ n\n t\t c\u{1} d\u{7f} / é\u{8}\u{c}").to_string()),
            r#""q\" b\\ n\n t\t c\u0001 d\u007f / \u00e9\b\f""#
        );
        assert_eq!(ascii_escaped("\"\u{10FFFF}\""), r#""\udbff\udfff""#);
        // What it writes reads back as the same text.
        let text = "naïve café ✓ 🚀 \u{1F600}";
        let written = ascii_escaped(&Value::from(text).to_string());
        assert!(written.is_ascii());
        assert_eq!(serde_json::from_str::<String>(&written).unwrap(), text);
    }

    fn types(dialect: Dialect, style: &AnswerStyle) -> Vec<String> {
        answer_frames(dialect, style, "hi there", "m1")
            .iter()
            .map(|f| match f.chunk() {
                Some(c) => c["type"].as_str().unwrap().to_owned(),
                None => "[DONE]".to_owned(),
            })
            .collect()
    }

    /// RU-1: an echo in the runtime dialect: no `start`; lifecycle, reasoning, one tool call
    /// with its whole arguments in one delta and its result, `finish-step` "tool-calls", a
    /// second step with the text in `textDelta`s, `finish`, `[DONE]`.
    #[test]
    fn the_runtime_dialect_speaks_like_a_real_agent() {
        assert_eq!(
            types(Dialect::Runtime, &AnswerStyle::Echo),
            [
                "start-step",
                "data-runtime-lifecycle",
                "reasoning-start",
                "reasoning-delta",
                "reasoning-delta",
                "reasoning-end",
                "tool-call-start",
                "tool-call-delta",
                "tool-call-end",
                "tool-result",
                "finish-step",
                "start-step",
                "text-start",
                "text-delta",
                "text-delta",
                "text-delta",
                "text-delta",
                "text-end",
                "finish-step",
                "finish",
                "[DONE]"
            ]
        );
        let body = String::from_utf8(answer_body(
            Dialect::Runtime,
            &AnswerStyle::Echo,
            "grüß 🌍",
            "m1",
        ))
        .unwrap();
        assert!(body.is_ascii(), "{body}");
        assert!(body.contains(r#"data: {"type":"tool-call-delta","toolCallId":"call-m1","argsText":"{\"text\":\"gr\\u00fc\\u00df \\ud83c\\udf0d\"}"}"#), "{body}");
        assert!(
            body.contains(r#"{"type":"text-delta","id":"text-0","textDelta":"gr\u00fc\u00df "}"#),
            "{body}"
        );
        assert!(body.contains(r#"{"type":"tool-result","toolCallId":"call-m1","result":{"content":[{"text":"2 words","type":"text"}],"details":{}},"isError":false}"#), "{body}");
        assert!(body.contains(r#"{"type":"finish-step","finishReason":"tool-calls"}"#));
        assert_eq!(frames_before_text(Dialect::Runtime), 13);
    }

    /// RU-1: a failed run ends with a terminal `error` instead of `finish`; a failed tool has
    /// `isError` true.
    #[test]
    fn failures_in_the_runtime_dialect() {
        let failed = types(Dialect::Runtime, &AnswerStyle::FailedRun("boom".into()));
        assert_eq!(failed[failed.len() - 2..], ["error", "[DONE]"]);
        assert!(!failed.contains(&"finish".to_owned()));
        let body = String::from_utf8(answer_body(
            Dialect::Runtime,
            &AnswerStyle::FailingTool("No service".into()),
            "hi",
            "m1",
        ))
        .unwrap();
        assert!(body.contains(r#""isError":true"#), "{body}");
    }

    /// The AI SDK dialect carries the same answer in its own names.
    #[test]
    fn the_ai_sdk_dialect_carries_the_same_answer() {
        let t = types(Dialect::AiSdk, &AnswerStyle::Echo);
        assert_eq!(t[0], "start");
        for name in [
            "reasoning-delta",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-available",
            "tool-output-available",
            "text-delta",
            "finish",
        ] {
            assert!(t.contains(&name.to_owned()), "{name}: {t:?}");
        }
        assert!(
            !t.iter()
                .any(|t| t.starts_with("tool-call") || t.starts_with("data-"))
        );
        let failing = types(Dialect::AiSdk, &AnswerStyle::FailingTool("x".into()));
        assert!(failing.contains(&"tool-output-error".to_owned()));
        let body = String::from_utf8(answer_body(
            Dialect::AiSdk,
            &AnswerStyle::Echo,
            "grüß",
            "m1",
        ))
        .unwrap();
        assert!(body.contains(r#""delta":"grüß""#), "{body}");
        assert_eq!(frames_before_text(Dialect::AiSdk), 13);
    }
}
