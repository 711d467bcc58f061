//! The plain delta shape read by hand: a flat JSON object whose values are all strings, with
//! only the keys a delta chunk has. What an Agent sends for almost every event of an answer
//! (`{"type":"text-delta","id":"t","delta":"Hello"}`), read in one pass over its bytes.
//!
//! [`scan`] is an exact subset of serde's reading of [`PlainDelta`]: when it gives a value,
//! serde gives the same one (a test checks it on generated payloads); it gives `None` for
//! anything it does not read itself (a value that is not a string, a key with an escape, a lone
//! surrogate escape, a control character in a string, trailing text), and the caller then asks
//! serde. What is surely no plain delta (not an object, an unknown or repeated key, a `type`
//! that is not a delta's) is said so ([`Scan::Not`]), and goes to the general path at once.

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

/// What [`scan`] made of a payload.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) enum Scan {
    /// The plain shape, read into the caller's value.
    Plain,
    /// Not a delta chunk of the plain shape, whatever serde would say: a key the shape does not
    /// have, a key given twice, or a `type` that is not a delta's (serde refuses the first two,
    /// and the hot path takes none of the third).
    Not,
    /// Not read here (see the module's text): serde decides.
    Unsure,
}

/// The chunk types the plain shape is read for.
const DELTA_TYPES: [&str; 3] = ["text-delta", "reasoning-delta", "tool-input-delta"];

/// Reads the payload as a [`PlainDelta`] (see the module's text) into `plain`, which the
/// caller gives empty ([`PlainDelta::default`]) and keeps in place: the value is large, and
/// moving it out of here cost more than reading a short frame. What `plain` holds after
/// anything but [`Scan::Plain`] means nothing.
pub(super) fn scan<'a>(payload: &'a str, plain: &mut PlainDelta<'a>) -> Scan {
    match read(payload, plain) {
        Ok(()) => Scan::Plain,
        Err(Stop::Not) => Scan::Not,
        Err(Stop::Unsure) => Scan::Unsure,
    }
}

/// Why [`read`] stopped.
enum Stop {
    Not,
    Unsure,
}

fn read<'a>(payload: &'a str, plain: &mut PlainDelta<'a>) -> Result<(), Stop> {
    use Stop::Unsure;
    let b = payload.as_bytes();
    let mut i = skip_ws(b, 0);
    if !matches!(b.get(i), Some(b'{')) {
        // Not an object: no chunk (serde would read an array as the struct's fields in order,
        // a frame the general path refuses).
        return Err(Stop::Not);
    }
    let mut chunk_type = None;
    let mut agent_id = None;
    i = skip_ws(b, i + 1);
    loop {
        let (key, next) = key(b, i).ok_or(Unsure)?;
        i = skip_ws(b, next);
        if !matches!(b.get(i), Some(b':')) {
            return Err(Unsure);
        }
        i = skip_ws(b, i + 1);
        let slot = match key {
            b"type" => &mut chunk_type,
            b"id" => &mut plain.id,
            b"delta" => &mut plain.delta,
            b"textDelta" => &mut plain.text_delta,
            b"toolCallId" => &mut plain.tool_call_id,
            b"inputTextDelta" => &mut plain.input_text_delta,
            b"agent_id" => &mut agent_id,
            _ => return Err(Stop::Not),
        };
        if slot.is_some() {
            return Err(Stop::Not);
        }
        let (value, next) = string(payload, i).ok_or(Unsure)?;
        if key == b"type" && !DELTA_TYPES.contains(&&*value) {
            return Err(Stop::Not);
        }
        *slot = Some(value);
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return Err(Unsure),
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return Err(Unsure);
    }
    plain.chunk_type = chunk_type.ok_or(Unsure)?;
    plain.agent_id = agent_id.map(|id: Cow<'_, str>| Value::String(id.into_owned()));
    Ok(())
}
/// A key's literal opening at `open`, as its bytes, and the index after its closing quote.
/// A key with an escape is left to serde (`None`), whatever it spells.
fn key(b: &[u8], open: usize) -> Option<(&[u8], usize)> {
    if !matches!(b.get(open), Some(b'"')) {
        return None;
    }
    let start = open + 1;
    let len = b
        .get(start..)?
        .iter()
        .position(|&c| c == b'"' || c == b'\\')?;
    let end = start + len;
    matches!(b.get(end), Some(b'"')).then_some((b.get(start..end)?, end + 1))
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
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What the scan made of `payload`, with the value it read.
    #[derive(Debug, PartialEq)]
    enum Read<'a> {
        Plain(PlainDelta<'a>),
        Not,
        Unsure,
    }

    fn scan_of(payload: &str) -> Read<'_> {
        let mut plain = PlainDelta::default();
        match scan(payload, &mut plain) {
            Scan::Plain => Read::Plain(plain),
            Scan::Not => Read::Not,
            Scan::Unsure => Read::Unsure,
        }
    }

    fn serde(payload: &str) -> Option<PlainDelta<'_>> {
        serde_json::from_str(payload).ok()
    }

    /// What serde's reading leaves the hot path: a delta chunk's plain shape, or nothing.
    fn serde_delta(payload: &str) -> Option<PlainDelta<'_>> {
        serde(payload).filter(|p| DELTA_TYPES.contains(&&*p.chunk_type))
    }

    #[test]
    fn reads_what_agents_send() {
        for payload in [
            r#"{"type":"text-delta","id":"t","delta":"Hello"}"#,
            r#"{"type":"text-delta","id":"text-0","textDelta":"caf\u00e9 \"q\" \n \ud83d\ude80"}"#,
            r#" {"type":"reasoning-delta","id":"r","delta":"a\\b\/c\b\f\r\t"} "#,
            r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"a\":"}"#,
            r#"{"agent_id":" ag ","type":"text-delta","id":"t","delta":""}"#,
        ] {
            let Read::Plain(fast) = scan_of(payload) else {
                panic!("{payload}")
            };
            assert_eq!(Some(fast), serde(payload), "{payload}");
        }
    }

    #[test]
    fn leaves_the_rest_to_serde() {
        for payload in [
            // A key with an escape (serde reads it as `type`).
            r#"{"typ\u0065":"text-delta","id":"t","delta":"x"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","agent_id":7}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","agent_id":null}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","textDelta":null}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ud83d"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ude80"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\ud83d\u0041"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a"} x"#,
            r#"{"type":"text-delta","id":"t","delta":"a",}"#,
            "{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"a\tb\"}",
            r#"{"type":"text-delta","id":"t","delta":"\x"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\u00g1"}"#,
            r#"{"id":"t","delta":"a"}"#,
            r#"{}"#,
            r#"{"type":"text-delta","id":"t","delta":"a""#,
        ] {
            assert_eq!(scan_of(payload), Read::Unsure, "{payload}");
        }
    }

    /// What is surely no plain delta is not handed to serde as one (its refusal would cost an
    /// error text per frame): the other chunk types, unknown and repeated keys.
    #[test]
    fn tells_what_is_no_plain_delta() {
        for payload in [
            r#"{"type":"tool-output-available","toolCallId":"c","output":{"ok":true}}"#,
            r#"{"type":"text-start","id":"t"}"#,
            r#"{"type":"data-status","data":{"phase":"x"}}"#,
            r#"{"id":"t","type":"finish","finishReason":"stop"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","x":"y"}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","providerMetadata":{}}"#,
            r#"{"type":"text-delta","id":"t","delta":"a","delta":"b"}"#,
        ] {
            assert_eq!(scan_of(payload), Read::Not, "{payload}");
            assert_eq!(serde_delta(payload), None, "{payload}");
        }
        // Not an object: the general path takes no chunk from it, so neither does the hot one
        // (serde would read an array as the fields in order).
        for payload in [
            r#"["text-delta","t","x"]"#,
            r#"["text-delta"]"#,
            "1",
            "\"x\"",
            "",
        ] {
            assert_eq!(scan_of(payload), Read::Not, "{payload}");
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
        /// Whatever the scan reads, serde reads alike; what it calls no plain delta, serde's
        /// reading gives the hot path nothing for either.
        #[test]
        fn a_subset_of_serde(payload in payload()) {
            match scan_of(&payload) {
                Read::Plain(fast) => prop_assert_eq!(Some(fast), serde(&payload)),
                Read::Not => prop_assert_eq!(serde_delta(&payload), None),
                Read::Unsure => {}
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
            let expected = serde(&payload).map(Read::Plain);
            prop_assert_eq!(Some(scan_of(&payload)), expected);
        }
    }
}
