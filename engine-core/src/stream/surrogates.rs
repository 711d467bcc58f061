//! UTF-16 surrogates split across deltas. A JavaScript server cuts its text by UTF-16 code
//! units, so an emoji's surrogate pair may end one delta (`"\ud83d"`) and start the next
//! (`"\ude80"`); `JSON.stringify` writes each lone half as a `\u` escape. JavaScript's `+=`
//! joins the halves again. `serde_json` refuses a lone surrogate in a string, so a payload that
//! holds one is repaired before it is parsed: a lone half at the edge of a top-level string is
//! taken out and kept ([`SplitSurrogates`]), any other lone half becomes U+FFFD (what a browser
//! renders for it). The assembler keeps a part's trailing high half until the next delta says
//! whether it completes a pair.

/// U+FFFD, the text of a lone surrogate.
const REPLACEMENT: char = '\u{FFFD}';

/// The lone surrogate halves at the edges of a delta string, taken out of its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitSurrogates {
    /// A low half (`\udc00` to `\udfff`) that starts the string: the end of a pair begun by the
    /// previous delta.
    pub leading_low: Option<u16>,
    /// A high half (`\ud800` to `\udbff`) that ends the string: a pair the next delta ends.
    pub trailing_high: Option<u16>,
}

/// A payload whose lone surrogates were taken out or replaced: parseable JSON text, and the
/// split halves of the top-level object's string values, by key.
#[derive(Debug)]
pub(crate) struct Repaired {
    pub json: String,
    pub splits: Vec<(String, SplitSurrogates)>,
}

impl Repaired {
    /// The split halves of the top-level field `key` (the last one, as a JSON object keeps).
    pub(crate) fn split(splits: &[(String, SplitSurrogates)], key: &str) -> SplitSurrogates {
        splits
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, split)| *split)
            .unwrap_or_default()
    }
}

fn is_high(unit: u16) -> bool {
    (0xD800..0xDC00).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..0xE000).contains(&unit)
}

/// A `\uXXXX` escape of a surrogate: its byte range in the payload and its unit.
#[derive(Debug, Clone, Copy)]
struct Escape {
    start: usize,
    end: usize,
    unit: u16,
}

/// Scans the string literal opening at `open`: the index of its closing quote, and its
/// surrogate escapes that are not part of a pair. `None` when the literal does not end.
fn scan_literal(bytes: &[u8], open: usize, lone: &mut Vec<Escape>) -> Option<usize> {
    let mut escapes: Vec<Escape> = Vec::new();
    let mut at = open + 1;
    let close = loop {
        match *bytes.get(at)? {
            b'"' => break at,
            b'\\' => {
                let hex = bytes.get(at + 2..at + 6);
                match (bytes.get(at + 1), hex) {
                    (Some(b'u'), Some(hex)) => {
                        let unit = std::str::from_utf8(hex)
                            .ok()
                            .and_then(|h| u16::from_str_radix(h, 16).ok());
                        if let Some(unit) = unit.filter(|u| is_high(*u) || is_low(*u)) {
                            escapes.push(Escape {
                                start: at,
                                end: at + 6,
                                unit,
                            });
                        }
                        at += 6;
                    }
                    _ => at += 2,
                }
            }
            _ => at += 1,
        }
    };
    let mut k = 0;
    while let Some(&escape) = escapes.get(k) {
        let paired = escapes.get(k + 1).is_some_and(|next| {
            is_high(escape.unit) && is_low(next.unit) && next.start == escape.end
        });
        if paired {
            k += 2;
        } else {
            lone.push(escape);
            k += 1;
        }
    }
    Some(close)
}

/// Repairs a payload holding lone surrogate escapes; `None` when it holds none (or a string
/// that does not end), so there is nothing to repair.
pub(crate) fn repair(payload: &str) -> Option<Repaired> {
    let bytes = payload.as_bytes();
    let mut json = String::with_capacity(payload.len());
    let mut splits = Vec::new();
    let mut lone = Vec::new();
    let (mut copied, mut depth, mut at) = (0, 0usize, 0);
    let (mut top_object, mut expect_key) = (false, false);
    let mut key = String::new();
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                lone.clear();
                let close = scan_literal(bytes, at, &mut lone)?;
                let top = depth == 1 && top_object;
                if top && expect_key {
                    let literal = payload.get(at..=close).unwrap_or_default();
                    key = serde_json::from_str(literal).unwrap_or_default();
                }
                let edges = top && !expect_key;
                let mut split = SplitSurrogates::default();
                for escape in &lone {
                    json.push_str(payload.get(copied..escape.start).unwrap_or_default());
                    copied = escape.end;
                    if edges && is_low(escape.unit) && escape.start == at + 1 {
                        split.leading_low = Some(escape.unit);
                    } else if edges && is_high(escape.unit) && escape.end == close {
                        split.trailing_high = Some(escape.unit);
                    } else {
                        json.push_str("\\ufffd");
                    }
                }
                if split != SplitSurrogates::default() {
                    splits.push((key.clone(), split));
                }
                at = close;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    top_object = byte == b'{';
                    expect_key = top_object;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = top_object,
            b':' if depth == 1 => expect_key = false,
            _ => {}
        }
        at += 1;
    }
    if copied == 0 {
        return None;
    }
    json.push_str(payload.get(copied..).unwrap_or_default());
    Some(Repaired { json, splits })
}

/// Appends `delta` to a part's text as JavaScript's `+=` would, `pending` holding the part's
/// trailing high half: a pair completed across deltas gives its character, a half left alone
/// gives U+FFFD. Returns the text appended (O(delta)).
pub(crate) fn join(pending: &mut Option<u16>, delta: String, split: SplitSurrogates) -> String {
    let untouched = split == SplitSurrogates::default();
    if untouched && (pending.is_none() || delta.is_empty()) {
        // Nothing split; an empty delta leaves a pending half pending, as `+= ""` does.
        return delta;
    }
    let mut text = String::with_capacity(delta.len() + 4);
    match (pending.take(), split.leading_low) {
        (Some(high), Some(low)) => {
            let code = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            text.push(char::from_u32(code).unwrap_or(REPLACEMENT));
        }
        (None, None) => {}
        _ => text.push(REPLACEMENT),
    }
    text.push_str(&delta);
    *pending = split.trailing_high;
    text
}

/// The text of a pending half that no delta completed: U+FFFD, once.
pub(crate) fn flush(pending: &mut Option<u16>) -> Option<String> {
    pending.take().map(|_| REPLACEMENT.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn split(low: Option<u16>, high: Option<u16>) -> SplitSurrogates {
        SplitSurrogates {
            leading_low: low,
            trailing_high: high,
        }
    }

    #[test]
    fn valid_payloads_need_no_repair() {
        assert!(repair(r#"{"delta":"\ud83d\ude80 \\ud83d"}"#).is_none());
        assert!(repair(r#"{"delta":"plain"}"#).is_none());
        assert!(repair(r#"{"delta":"\ud83d"#).is_none(), "unterminated");
    }

    #[test]
    fn edges_are_taken_out_and_the_rest_replaced() {
        let r = repair(
            r#"{"type":"text-delta","delta":"\uDE80a\ud83db\ud83d","x":{"delta":"\ud83d"}}"#,
        )
        .unwrap();
        assert_eq!(
            r.json,
            r#"{"type":"text-delta","delta":"a\ufffdb","x":{"delta":"\ufffd"}}"#
        );
        assert_eq!(
            Repaired::split(&r.splits, "delta"),
            split(Some(0xDE80), Some(0xD83D))
        );
        let r = repair(r#"["\ud83d"]"#).unwrap();
        assert_eq!(r.json, r#"["\ufffd"]"#);
        assert!(r.splits.is_empty());
        let r = repair(r#"{"\u0064elta":"\ude80"}"#).unwrap();
        assert_eq!(
            Repaired::split(&r.splits, "delta"),
            split(Some(0xDE80), None)
        );
    }

    #[test]
    fn join_pairs_and_replaces() {
        let mut pending = None;
        assert_eq!(
            join(&mut pending, "a".into(), split(None, Some(0xD83D))),
            "a"
        );
        assert_eq!(join(&mut pending, String::new(), split(None, None)), "");
        assert_eq!(
            join(&mut pending, "b".into(), split(Some(0xDE80), None)),
            "🚀b"
        );
        assert_eq!(
            join(&mut pending, "c".into(), split(Some(0xDE80), None)),
            "\u{FFFD}c"
        );
        assert_eq!(
            join(&mut pending, String::new(), split(None, Some(0xD83D))),
            ""
        );
        assert_eq!(
            join(&mut pending, "d".into(), split(None, None)),
            "\u{FFFD}d"
        );
        assert_eq!(
            join(&mut pending, String::new(), split(None, Some(0xD83D))),
            ""
        );
        assert_eq!(flush(&mut pending).as_deref(), Some("\u{FFFD}"));
        assert_eq!(flush(&mut pending), None);
    }
}
