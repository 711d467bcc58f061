//! Best-effort parsing of an incomplete JSON text: a tool call's input while it streams
//! (ui-message-stream §5, `tool-input-delta`).
//!
//! The text is scanned once. Where it stops, the repair keeps the longest prefix that can be
//! closed: an open string value is closed (an incomplete escape at its end is dropped), a
//! number is cut back to its last digit, a partial `true`/`false`/`null` is completed, a
//! dangling key (with or without its colon) and a trailing comma are dropped, and the open
//! arrays and objects are closed. `{"city":"Ber` gives `{"city":"Ber"}`, `{"a":1,"b"` gives
//! `{"a":1}`. Text that is not the start of a JSON value gives `None`.

use serde_json::Value;

/// The value `text` stands for, repairing an incomplete end; `None` for blank or invalid text.
pub fn parse_partial_json(text: &str) -> Option<Value> {
    if text.trim().is_empty() {
        return None;
    }
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    serde_json::from_str(&repair(text)?).ok()
}

/// What the scanner expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (top level, after `:`, after `,` in an array).
    Value,
    /// A value or `]` (right after `[`).
    ValueOrClose,
    /// A key or `}` (right after `{`).
    KeyOrClose,
    /// A key (after `,` in an object).
    Key,
    /// The `:` after a key.
    Colon,
    /// `,` or the close of the container, after a value.
    AfterValue,
}

/// A prefix that closes cleanly: its length and how many containers are open at its end.
#[derive(Clone, Copy)]
struct Checkpoint {
    len: usize,
    depth: usize,
}

/// The repaired text, or `None` when `text` is not the start of a JSON value.
fn repair(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // The closers of the open containers, innermost last.
    let mut closers: Vec<u8> = Vec::new();
    let mut checkpoint: Option<Checkpoint> = None;
    let mut expect = Expect::Value;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        match expect {
            Expect::AfterValue => match byte {
                b',' => {
                    expect = match closers.last() {
                        Some(b'}') => Expect::Key,
                        Some(_) => Expect::Value,
                        None => return None,
                    };
                    at += 1;
                }
                b'}' | b']' if closers.last() == Some(&byte) => {
                    closers.pop();
                    at += 1;
                    checkpoint = Some(Checkpoint {
                        len: at,
                        depth: closers.len(),
                    });
                }
                _ => return None,
            },
            Expect::KeyOrClose | Expect::Key => match byte {
                b'"' => match scan_string(bytes, at) {
                    StringEnd::Closed(end) => {
                        at = end;
                        expect = Expect::Colon;
                    }
                    // A dangling key: drop it.
                    StringEnd::Open { .. } => return close(text, checkpoint?, &closers, ""),
                },
                b'}' if expect == Expect::KeyOrClose => {
                    closers.pop();
                    at += 1;
                    checkpoint = Some(Checkpoint {
                        len: at,
                        depth: closers.len(),
                    });
                    expect = Expect::AfterValue;
                }
                _ => return None,
            },
            Expect::Colon => match byte {
                b':' => {
                    at += 1;
                    expect = Expect::Value;
                }
                _ => return None,
            },
            Expect::Value | Expect::ValueOrClose => match byte {
                b']' if expect == Expect::ValueOrClose => {
                    closers.pop();
                    at += 1;
                    checkpoint = Some(Checkpoint {
                        len: at,
                        depth: closers.len(),
                    });
                    expect = Expect::AfterValue;
                }
                b'{' | b'[' => {
                    let (closer, next) = if byte == b'{' {
                        (b'}', Expect::KeyOrClose)
                    } else {
                        (b']', Expect::ValueOrClose)
                    };
                    closers.push(closer);
                    at += 1;
                    checkpoint = Some(Checkpoint {
                        len: at,
                        depth: closers.len(),
                    });
                    expect = next;
                }
                b'"' => match scan_string(bytes, at) {
                    StringEnd::Closed(end) => {
                        at = end;
                        checkpoint = Some(Checkpoint {
                            len: at,
                            depth: closers.len(),
                        });
                        expect = Expect::AfterValue;
                    }
                    StringEnd::Open { keep } => {
                        let cut = Checkpoint {
                            len: keep,
                            depth: closers.len(),
                        };
                        return close(text, cut, &closers, "\"");
                    }
                },
                b'-' | b'0'..=b'9' => {
                    let end = at
                        + bytes
                            .get(at..)
                            .unwrap_or_default()
                            .iter()
                            .take_while(|b| {
                                matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                            })
                            .count();
                    if end < bytes.len() {
                        at = end;
                        checkpoint = Some(Checkpoint {
                            len: at,
                            depth: closers.len(),
                        });
                        expect = Expect::AfterValue;
                        continue;
                    }
                    // The number runs to the end: cut it back to its last digit.
                    let number = bytes.get(at..end).unwrap_or_default();
                    let digits = number.len()
                        - number
                            .iter()
                            .rev()
                            .take_while(|b| !b.is_ascii_digit())
                            .count();
                    if digits == 0 {
                        return close(text, checkpoint?, &closers, "");
                    }
                    let cut = Checkpoint {
                        len: at + digits,
                        depth: closers.len(),
                    };
                    return close(text, cut, &closers, "");
                }
                b't' | b'f' | b'n' => {
                    let word_len = bytes
                        .get(at..)
                        .unwrap_or_default()
                        .iter()
                        .take_while(|b| b.is_ascii_alphabetic())
                        .count();
                    let word = text.get(at..at + word_len).unwrap_or_default();
                    let literal = ["true", "false", "null"]
                        .into_iter()
                        .find(|literal| literal.starts_with(word))?;
                    at += word_len;
                    if at < bytes.len() {
                        if word != literal {
                            return None;
                        }
                        checkpoint = Some(Checkpoint {
                            len: at,
                            depth: closers.len(),
                        });
                        expect = Expect::AfterValue;
                        continue;
                    }
                    // A literal cut by the end: complete it.
                    let rest = literal.get(word.len()..).unwrap_or_default();
                    let cut = Checkpoint {
                        len: at,
                        depth: closers.len(),
                    };
                    return close(text, cut, &closers, rest);
                }
                _ => return None,
            },
        }
    }
    // The end came between tokens: keep the last prefix that closes cleanly (after `:` or `,`
    // that drops the dangling key or the trailing comma).
    close(text, checkpoint?, &closers, "")
}

/// `text` cut at `cut.len`, then `extra`, then the closers of the containers open there.
fn close(text: &str, cut: Checkpoint, closers: &[u8], extra: &str) -> Option<String> {
    let prefix = text.get(..cut.len)?;
    let open = closers.get(..cut.depth)?;
    let mut repaired = String::with_capacity(prefix.len() + extra.len() + open.len());
    repaired.push_str(prefix);
    repaired.push_str(extra);
    repaired.extend(open.iter().rev().map(|&closer| char::from(closer)));
    Some(repaired)
}

/// Where a string starting at `start` (its opening quote) ends.
enum StringEnd {
    /// Closed: the index just past the closing quote.
    Closed(usize),
    /// Still open at the end of the text; `keep` is the length of the text worth keeping (an
    /// incomplete escape at the end, or a high surrogate without its pair, is dropped).
    Open { keep: usize },
}

/// Scans the string whose opening quote is at `start`.
fn scan_string(bytes: &[u8], start: usize) -> StringEnd {
    let mut at = start + 1;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => return StringEnd::Closed(at + 1),
            b'\\' => match bytes.get(at + 1) {
                None => return StringEnd::Open { keep: at },
                Some(b'u') => {
                    let Some(hex) = bytes.get(at + 2..at + 6) else {
                        return StringEnd::Open { keep: at };
                    };
                    let high_surrogate = std::str::from_utf8(hex)
                        .ok()
                        .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                        .is_some_and(|unit| (0xD800..0xDC00).contains(&unit));
                    // A high surrogate needs its `\uXXXX` pair to be kept.
                    if high_surrogate && bytes.len() < at + 12 {
                        return StringEnd::Open { keep: at };
                    }
                    at += 6;
                }
                Some(_) => at += 2,
            },
            _ => at += 1,
        }
    }
    StringEnd::Open { keep: bytes.len() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn repairs_incomplete_ends() {
        let cases = [
            (r#"{"city":""#, Some(json!({"city": ""}))),
            (r#"{"city":"Ber"#, Some(json!({"city": "Ber"}))),
            (
                r#"{"city":"Berlin","unit""#,
                Some(json!({"city": "Berlin"})),
            ),
            (
                r#"{"city":"Berlin","unit":"#,
                Some(json!({"city": "Berlin"})),
            ),
            (r#"{"city":"Berlin","#, Some(json!({"city": "Berlin"}))),
            (r#"{"city":"Berlin","un"#, Some(json!({"city": "Berlin"}))),
            (
                r#"{"city":"Berlin","unit":"c"}"#,
                Some(json!({"city": "Berlin", "unit": "c"})),
            ),
            ("{", Some(json!({}))),
            ("[", Some(json!([]))),
            ("[1,", Some(json!([1]))),
            ("[1, 2", Some(json!([1, 2]))),
            ("[1.", Some(json!([1]))),
            ("[-", Some(json!([]))),
            ("[1e", Some(json!([1]))),
            (r#"{"a":-"#, Some(json!({}))),
            (r#"{"a":tr"#, Some(json!({"a": true}))),
            (r#"{"a":nul"#, Some(json!({"a": null}))),
            (r#"{"a":[true,fa"#, Some(json!({"a": [true, false]}))),
            (
                r#"{"a":{"b":[{"c":"d"#,
                Some(json!({"a": {"b": [{"c": "d"}]}})),
            ),
            (r#"{"a":"x\"#, Some(json!({"a": "x"}))),
            (r#"{"a":"x\u00"#, Some(json!({"a": "x"}))),
            (r#"{"a":"x\u00e9"#, Some(json!({"a": "xé"}))),
            (r#"{"a":"\ud83c"#, Some(json!({"a": ""}))),
            (r#"{"a":"\ud83c\udf0d"#, Some(json!({"a": "🌍"}))),
            (r#"{"a":"ümlaut 🌍"#, Some(json!({"a": "ümlaut 🌍"}))),
            (r#""abc"#, Some(json!("abc"))),
            ("12", Some(json!(12))),
            ("", None),
            ("   ", None),
            ("-", None),
            ("x", None),
            ("{x", None),
            (r#"{"a" 1"#, None),
            (r#"{"a":1}}"#, None),
            ("[1]x", None),
            ("tx", None),
            (r#"{"a":trux"#, None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_partial_json(text), expected, "{text}");
        }
    }

    #[test]
    fn every_prefix_of_a_document_parses_without_panic() {
        let text = r#"{"a": [1, -2.5e+3, true, null, "s\"\\\u00e9\ud83c\udf0d"], "b": {"c": {}}, "d": []}"#;
        for end in 0..=text.len() {
            if let Some(prefix) = text.get(..end) {
                let parsed = parse_partial_json(prefix);
                if end > 0 {
                    assert!(parsed.is_some(), "{prefix}");
                }
            }
        }
        assert_eq!(
            parse_partial_json(text),
            Some(serde_json::from_str(text).unwrap())
        );
    }
}
