//! Best-effort parsing of an incomplete JSON text: a tool call's input while it streams
//! (ui-message-stream §5, `tool-input-delta`).
//!
//! The text is scanned once. Where it stops, the repair keeps the longest prefix that can be
//! closed: an open string value is closed (an incomplete escape at its end is dropped), a
//! number is cut back to its last digit, a partial `true`/`false`/`null` is completed, a
//! dangling key (with or without its colon) and a trailing comma are dropped, and the open
//! arrays and objects are closed. `{"city":"Ber` gives `{"city":"Ber"}`, `{"a":1,"b"` gives
//! `{"a":1}`. Text that is not the start of a JSON value gives `None`.
//!
//! [`PartialJson`] gives the same value while the text grows, at a cost proportional to what
//! was appended: it reads each byte once (a number or literal cut by the end, or an escape,
//! is read again when the text grows) and updates the value in place. Anything outside the
//! plain grammar it follows (a syntax error, a lone surrogate, a control character in a
//! string, form feed, deep nesting) makes it fall back to [`parse_partial_json`] on the whole
//! text, which is the definition.

use serde_json::{Map, Value};

use crate::Json;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Expect {
    /// A value (top level, after `:`, after `,` in an array).
    #[default]
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

/// Containers deeper than this make [`PartialJson`] fall back (serde_json refuses deep nesting).
const MAX_DEPTH: usize = 64;

/// A container open at the end of the text read so far.
#[derive(Debug, Clone)]
enum Open {
    Array,
    /// An object; `key` is the key of the member being read, or the key being decoded.
    Object {
        key: String,
    },
}

/// Where the reader stands inside a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Lex {
    /// Between tokens.
    #[default]
    Between,
    /// Inside a string value: its text so far is in the value.
    Value,
    /// Inside a key: its text so far is the innermost object's `key`.
    Key,
}

/// [`parse_partial_json`] of a text that grows by appending, kept up to date in O(appended).
#[derive(Debug, Clone, Default)]
pub struct PartialJson {
    /// The bytes read (a token cut by the end of the text stays unread).
    read: usize,
    open: Vec<Open>,
    expect: Expect,
    lex: Lex,
    /// The slot of the value being read is already in the value (a number or literal cut by
    /// the end of the text, replaced when it grows).
    filled: bool,
    /// The text left the plain grammar: every update parses it whole.
    fallback: bool,
}

impl PartialJson {
    /// Brings `value` (what earlier calls gave, `None` at first) to `parse_partial_json(text)`,
    /// where `text` is the text of the previous call with more appended.
    pub fn update(&mut self, text: &str, value: &mut Option<Value>) {
        if !self.fallback && self.advance(text, value).is_none() {
            self.fallback = true;
        }
        if self.fallback {
            *value = parse_partial_json(text);
        }
    }

    /// [`PartialJson::update`] of a message's [`Json`] slot: the parsed value is moved out,
    /// updated and moved back, never copied (a compact value is parsed first).
    pub fn update_json(&mut self, text: &str, value: &mut Option<Json>) {
        let mut parsed = value.take().map(Json::into_value);
        self.update(text, &mut parsed);
        *value = parsed.map(Json::from);
    }

    /// Reads what was appended; `None` to fall back.
    fn advance(&mut self, text: &str, value: &mut Option<Value>) -> Option<()> {
        let bytes = text.as_bytes();
        if bytes.len() < self.read {
            return None;
        }
        loop {
            let at = self.read;
            let Some(&byte) = bytes.get(at) else {
                return Some(());
            };
            if self.lex != Lex::Between {
                let target = match self.lex {
                    Lex::Key => match self.open.last_mut()? {
                        Open::Object { key } => key,
                        Open::Array => return None,
                    },
                    _ => match slot(value, &self.open)? {
                        Value::String(string) => string,
                        _ => return None,
                    },
                };
                let (end, closed) = read_string(text, at, target)?;
                self.read = end;
                if !closed {
                    return Some(());
                }
                self.expect = match self.lex {
                    Lex::Key => Expect::Colon,
                    _ => {
                        self.filled = false;
                        Expect::AfterValue
                    }
                };
                self.lex = Lex::Between;
                continue;
            }
            if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                self.read += 1;
                continue;
            }
            match (self.expect, byte) {
                (Expect::AfterValue, b',') => {
                    self.expect = match self.open.last()? {
                        Open::Object { .. } => Expect::Key,
                        Open::Array => Expect::Value,
                    };
                    self.read += 1;
                }
                (Expect::AfterValue | Expect::KeyOrClose, b'}') => {
                    if !matches!(self.open.last(), Some(Open::Object { .. })) {
                        return None;
                    }
                    self.close();
                }
                (Expect::AfterValue | Expect::ValueOrClose, b']') => {
                    if !matches!(self.open.last(), Some(Open::Array)) {
                        return None;
                    }
                    self.close();
                }
                (Expect::KeyOrClose | Expect::Key, b'"') => {
                    if let Some(Open::Object { key }) = self.open.last_mut() {
                        key.clear();
                    }
                    self.lex = Lex::Key;
                    self.read += 1;
                }
                (Expect::Colon, b':') => {
                    self.expect = Expect::Value;
                    self.read += 1;
                }
                (Expect::Value | Expect::ValueOrClose, b'{' | b'[') => {
                    if self.open.len() >= MAX_DEPTH {
                        return None;
                    }
                    let (container, open, next) = if byte == b'{' {
                        let key = String::new();
                        (
                            Value::Object(Map::new()),
                            Open::Object { key },
                            Expect::KeyOrClose,
                        )
                    } else {
                        (Value::Array(Vec::new()), Open::Array, Expect::ValueOrClose)
                    };
                    self.fill(value, container)?;
                    self.open.push(open);
                    self.filled = false;
                    self.expect = next;
                    self.read += 1;
                }
                (Expect::Value | Expect::ValueOrClose, b'"') => {
                    self.fill(value, Value::String(String::new()))?;
                    self.lex = Lex::Value;
                    self.read += 1;
                }
                (Expect::Value | Expect::ValueOrClose, b'-' | b'0'..=b'9') => {
                    let rest = bytes.get(at..).unwrap_or_default();
                    let len = rest
                        .iter()
                        .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                        .count();
                    let cut_by_end = at + len == bytes.len();
                    let token = rest.get(..len).unwrap_or_default();
                    // Cut by the end, the number is read up to its last digit.
                    let keep = if cut_by_end {
                        len - token
                            .iter()
                            .rev()
                            .take_while(|b| !b.is_ascii_digit())
                            .count()
                    } else {
                        len
                    };
                    if keep == 0 {
                        // A lone `-` cut by the end: dropped for now.
                        return cut_by_end.then_some(());
                    }
                    let number = serde_json::from_str(text.get(at..at + keep)?).ok()?;
                    self.fill(value, number)?;
                    if cut_by_end {
                        return Some(());
                    }
                    self.read = at + len;
                    self.filled = false;
                    self.expect = Expect::AfterValue;
                }
                (Expect::Value | Expect::ValueOrClose, b't' | b'f' | b'n') => {
                    let len = bytes
                        .get(at..)
                        .unwrap_or_default()
                        .iter()
                        .take_while(|b| b.is_ascii_alphabetic())
                        .count();
                    let word = text.get(at..at + len)?;
                    let (literal, literal_value) = match byte {
                        b't' => ("true", Value::Bool(true)),
                        b'f' => ("false", Value::Bool(false)),
                        _ => ("null", Value::Null),
                    };
                    if !literal.starts_with(word) {
                        return None;
                    }
                    self.fill(value, literal_value)?;
                    if at + len == bytes.len() {
                        // Cut by the end: completed for now, read again when it grows.
                        return Some(());
                    }
                    if word != literal {
                        return None;
                    }
                    self.read = at + len;
                    self.filled = false;
                    self.expect = Expect::AfterValue;
                }
                _ => return None,
            }
        }
    }

    /// The innermost container closes.
    fn close(&mut self) {
        self.open.pop();
        self.filled = false;
        self.expect = Expect::AfterValue;
        self.read += 1;
    }

    /// Puts `new` in the slot of the value being read (replacing what an earlier update put
    /// there for the same token).
    fn fill(&mut self, root: &mut Option<Value>, new: Value) -> Option<()> {
        let filled = std::mem::replace(&mut self.filled, true);
        let Some(frame) = self.open.last() else {
            *root = Some(new);
            return Some(());
        };
        match (innermost(root, &self.open)?, frame) {
            (Value::Array(items), Open::Array) => match items.last_mut() {
                Some(last) if filled => *last = new,
                _ => items.push(new),
            },
            (Value::Object(map), Open::Object { key }) => match map.get_mut(key) {
                Some(existing) => *existing = new,
                None => {
                    map.insert(key.clone(), new);
                }
            },
            _ => return None,
        }
        Some(())
    }
}

/// The innermost open container in `root`.
fn innermost<'v>(root: &'v mut Option<Value>, open: &[Open]) -> Option<&'v mut Value> {
    let (_, parents) = open.split_last()?;
    let mut node = root.as_mut()?;
    for frame in parents {
        node = child(node, frame)?;
    }
    Some(node)
}

/// The value being read: the last item or current member of the innermost container, or the
/// root.
fn slot<'v>(root: &'v mut Option<Value>, open: &[Open]) -> Option<&'v mut Value> {
    match open.last() {
        None => root.as_mut(),
        Some(frame) => child(innermost(root, open)?, frame),
    }
}

fn child<'v>(node: &'v mut Value, frame: &Open) -> Option<&'v mut Value> {
    match (node, frame) {
        (Value::Array(items), Open::Array) => items.last_mut(),
        (Value::Object(map), Open::Object { key }) => map.get_mut(key),
        _ => None,
    }
}

/// Decodes string content from `at` into `target`: the position reached and whether the
/// string closed. An escape cut by the end of the text (a high surrogate without its pair
/// too) stays unread. `None` for what the plain grammar does not take: a control character, an
/// unknown escape, a lone surrogate.
fn read_string(text: &str, mut at: usize, target: &mut String) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    loop {
        let rest = bytes.get(at..)?;
        let run = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
        target.push_str(text.get(at..at + run)?);
        at += run;
        let Some(&byte) = bytes.get(at) else {
            return Some((at, false));
        };
        match byte {
            b'"' => return Some((at + 1, true)),
            b'\\' => {
                let Some(&escape) = bytes.get(at + 1) else {
                    return Some((at, false));
                };
                let (ch, len) = match escape {
                    b'"' => ('"', 2),
                    b'\\' => ('\\', 2),
                    b'/' => ('/', 2),
                    b'b' => ('\u{8}', 2),
                    b'f' => ('\u{c}', 2),
                    b'n' => ('\n', 2),
                    b'r' => ('\r', 2),
                    b't' => ('\t', 2),
                    b'u' => {
                        let Some(hex) = bytes.get(at + 2..at + 6) else {
                            return Some((at, false));
                        };
                        let unit = hex4(hex)?;
                        if (0xD800..0xDC00).contains(&unit) {
                            if bytes.len() < at + 12 {
                                return Some((at, false));
                            }
                            if bytes.get(at + 6..at + 8) != Some(b"\\u") {
                                return None;
                            }
                            let low = hex4(bytes.get(at + 8..at + 12)?)?;
                            if !(0xDC00..0xE000).contains(&low) {
                                return None;
                            }
                            let code = 0x10000
                                + ((u32::from(unit) - 0xD800) << 10)
                                + (u32::from(low) - 0xDC00);
                            (char::from_u32(code)?, 12)
                        } else {
                            (char::from_u32(u32::from(unit))?, 6)
                        }
                    }
                    _ => return None,
                };
                target.push(ch);
                at += len;
            }
            _ => return None,
        }
    }
}

/// Four hex digits.
fn hex4(hex: &[u8]) -> Option<u16> {
    hex.iter().try_fold(0u16, |unit, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some((unit << 4) | u16::try_from(digit).ok()?)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;
