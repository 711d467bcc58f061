//! The plain delta shape read by hand: a flat JSON object whose values are all strings, with
//! only the keys a delta chunk has. What an Agent sends for almost every event of an answer
//! (`{"type":"text-delta","id":"t","delta":"Hello"}`), read in one pass over its bytes.
//!
//! [`scan`] is an exact subset of serde's reading of [`PlainDelta`]: when it gives a value,
//! serde gives the same one (a test checks it on generated payloads); it gives `None` for
//! anything it does not read itself (a value that is not a string, an unknown or repeated key,
//! a lone surrogate escape, a control character in a string, trailing text), and the caller
//! then asks serde, which decides as before.

use std::borrow::Cow;

use serde_json::Value;

use super::PlainDelta;

/// JSON's whitespace.
#[inline(always)]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[inline(always)]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_ws) {
        i += 1;
    }
    i
}

/// Reads the payload as a [`PlainDelta`], or `None` (see the module's text).
pub(super) fn scan(payload: &str) -> Option<PlainDelta<'_>> {
    let b = payload.as_bytes();
    let mut i = skip_ws(b, 0);
    if !matches!(b.get(i), Some(b'{')) {
        return None;
    }
    let mut chunk_type = None;
    let mut plain = PlainDelta {
        chunk_type: Cow::Borrowed(""),
        id: None,
        delta: None,
        text_delta: None,
        tool_call_id: None,
        input_text_delta: None,
        agent_id: None,
    };
    let mut agent_id = None;
    i = skip_ws(b, i + 1);
    loop {
        let (key, next) = string(payload, i)?;
        i = skip_ws(b, next);
        if !matches!(b.get(i), Some(b':')) {
            return None;
        }
        i = skip_ws(b, i + 1);
        let (value, next) = string(payload, i)?;
        let slot = match &*key {
            "type" => &mut chunk_type,
            "id" => &mut plain.id,
            "delta" => &mut plain.delta,
            "textDelta" => &mut plain.text_delta,
            "toolCallId" => &mut plain.tool_call_id,
            "inputTextDelta" => &mut plain.input_text_delta,
            "agent_id" => &mut agent_id,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    plain.chunk_type = chunk_type?;
    plain.agent_id = agent_id.map(|id: Cow<'_, str>| Value::String(id.into_owned()));
    Some(plain)
}

/// The string literal opening at `open`: its value (borrowed when it has no escapes) and the
/// index after its closing quote.
fn string(payload: &str, open: usize) -> Option<(Cow<'_, str>, usize)> {
    let b = payload.as_bytes();
    if !matches!(b.get(open), Some(b'"')) {
        return None;
    }
    let start = open + 1;
    let mut i = start;
    loop {
        match *b.get(i)? {
            b'"' => return Some((Cow::Borrowed(payload.get(start..i)?), i + 1)),
            b'\\' => break,
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
    let mut out = String::with_capacity(i - start + 16);
    out.push_str(payload.get(start..i)?);
    loop {
        // At a backslash.
        let escape = *b.get(i + 1)?;
        i += 2;
        match escape {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let unit = hex4(b, i)?;
                i += 4;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        // A high half: a low one must follow as an escape of its own.
                        if !matches!(b.get(i), Some(b'\\')) || !matches!(b.get(i + 1), Some(b'u')) {
                            return None;
                        }
                        let low = hex4(b, i + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        i += 6;
                        let code = 0x10000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        char::from_u32(code)?
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(u32::from(unit))?,
                };
                out.push(c);
            }
            _ => return None,
        }
        let run = i;
        loop {
            match *b.get(i)? {
                b'"' => {
                    out.push_str(payload.get(run..i)?);
                    return Some((Cow::Owned(out), i + 1));
                }
                b'\\' => break,
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
        out.push_str(payload.get(run..i)?);
    }
}

/// Four hex digits at `at`, as a UTF-16 unit.
fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let digits = b.get(at..at + 4)?;
    let mut unit = 0u16;
    for &d in digits {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        unit = (unit << 4) | u16::from(v);
    }
    Some(unit)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn serde(payload: &str) -> Option<PlainDelta<'_>> {
        serde_json::from_str(payload).ok()
    }

    #[test]
    fn reads_what_agents_send() {
        for payload in [
            r#"{"type":"text-delta","id":"t","delta":"Hello"}"#,
            r#"{"type":"text-delta","id":"text-0","textDelta":"caf\u00e9 \"q\" \n \ud83d\ude80"}"#,
            r#" {"type":"reasoning-delta","id":"r","delta":"a\\b\/c\b\f\r\t"} "#,
            r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"a\":"}"#,
            r#"{"agent_id":" ag ","type":"text-delta","id":"t","delta":""}"#,
            r#"{"typ\u0065":"text-delta","id":"t","delta":"x"}"#,
        ] {
            let fast = scan(payload).expect(payload);
            assert_eq!(Some(fast), serde(payload), "{payload}");
        }
    }

    #[test]
    fn leaves_the_rest_to_serde() {
        for payload in [
            r#"{"type":"text-delta","id":"t","delta":"a","agent_id":7}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","agent_id":null}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ud83d"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ude80"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ud83d\u0041"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","delta":"b"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","x":"y"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a"} x"#,
            r#"{"type":"text-delta","id":"t","delta":"a",}"#,
            "{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"a\tb\"}",
            r#"{"type":"text-delta","id":"t","delta":"\x"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\u00g1"}"#,
            r#"{"id":"t","delta":"a"}"#,
            r#"{}"#,
            r#"["text-delta"]"#,
            r#"{"type":"text-delta","id":"t","delta":"a""#,
        ] {
            assert_eq!(scan(payload), None, "{payload}");
        }
    }

    /// Pieces payloads are made of: keys the shape has and others, string values with every
    /// kind of escape, and non-strings, joined with and without whitespace.
    fn payload() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "type",
            "id",
            "delta",
            "textDelta",
            "toolCallId",
            "inputTextDelta",
            "agent_id",
            "x",
            "typ\\u0065",
        ]);
        let piece = prop::sample::select(vec![
            "a",
            "text-delta",
            "reasoning-delta",
            "tool-input-delta",
            "é",
            "🌍",
            "\\\"",
            "\\\\",
            "\\/",
            "\\n",
            "\\t",
            "\\b",
            "\\u00e9",
            "\\u00E9",
            "\\ud83d\\ude80",
            "\\ud83d",
            "\\ude80",
            "\\x",
            "\\u12",
            "\t",
            "\u{1}",
            " ",
        ]);
        let string = prop::collection::vec(piece, 0..5).prop_map(|p| format!("\"{}\"", p.concat()));
        let value = prop_oneof![
            8 => string,
            1 => prop::sample::select(vec!["1", "null", "true", "{}", "[]", "2.5"]).prop_map(str::to_owned),
        ];
        let ws = prop::sample::select(vec!["", "", " ", "\n", "\r\t"]);
        let field = (ws.clone(), key, ws.clone(), value)
            .prop_map(|(w, k, w2, v)| format!("{w}\"{k}\"{w2}:{v}"));
        let fields = prop::collection::vec(field, 0..6);
        let close = prop::sample::select(vec!["}", "} ", "},", "", "} x", ",}"]);
        (ws, fields, close).prop_map(|(w, f, c)| format!("{w}{{{}{c}", f.join(",")))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]
        /// Whatever the scan reads, serde reads alike.
        #[test]
        fn a_subset_of_serde(payload in payload()) {
            if let Some(fast) = scan(&payload) {
                prop_assert_eq!(Some(fast), serde(&payload));
            }
        }

        /// The typed chunk's own fields in a common order with any strings: the scan reads
        /// every one serde reads that has no lone surrogate.
        #[test]
        fn reads_every_plain_delta(id in ".{0,8}", delta in ".{0,24}", kind in 0usize..3) {
            let payload = match kind {
                0 => serde_json::json!({"type": "text-delta", "id": id, "delta": delta}),
                1 => serde_json::json!({"type": "reasoning-delta", "id": id, "textDelta": delta}),
                _ => serde_json::json!({"type": "tool-input-delta", "toolCallId": id, "inputTextDelta": delta}),
            }
            .to_string();
            prop_assert_eq!(scan(&payload), serde(&payload));
            prop_assert!(scan(&payload).is_some());
        }
    }
}
