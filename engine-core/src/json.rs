//! [`Json`]: a JSON value the engine keeps, parsed while it may still change and compact text
//! once it is final.
//!
//! A `serde_json::Value` object costs a B-tree node per map (about 630 bytes for a two-field
//! object), so a finished tool call's input held as a `Value` takes several times its JSON. The
//! engine keeps such values as their compact JSON text instead (issue 12: a finished message's
//! heap within 1.2x its JSON): history messages, session records and insights when they are
//! read, a streamed answer once it ends ([`crate::message::Message::compact`]). While an answer
//! streams, its values stay parsed, so the assembler updates them in place.
//!
//! Both forms are the same value to every reader: equality, `Debug`, serde output and
//! [`Json::value`] do not depend on the form.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON value: parsed, or compact text once final. Equal forms of one value are equal.
///
/// ```
/// use engine_core::Json;
/// use serde_json::json;
///
/// let mut input = Json::from(json!({"city": "Berlin"}));
/// input.compact();
/// assert!(input.is_compact());
/// assert_eq!(input, json!({"city": "Berlin"}));
/// assert_eq!(input.value()["city"], "Berlin");
/// assert_eq!(input.to_string(), r#"{"city":"Berlin"}"#);
/// ```
#[derive(Clone)]
pub struct Json(Form);

#[derive(Clone)]
enum Form {
    Parsed(Value),
    /// Compact JSON text written by `serde_json` from a `Value` (object keys in order).
    Text(Box<str>),
}

impl Json {
    /// The value as compact text: the final form (see [`Json::compact`]).
    pub fn compact_of(value: Value) -> Json {
        let mut json = Json(Form::Parsed(value));
        json.compact();
        json
    }

    /// Turns a parsed array or object into compact text (the engine does so when a value is
    /// final). Scalars and strings stay parsed: their text would be no smaller (a string's is
    /// quoted and escaped), so a string only gives back its spare capacity. So does a value
    /// nested deeper than `serde_json` reads back (128 levels; the platform's answers never
    /// are, their parse has the same limit).
    pub fn compact(&mut self) {
        match &mut self.0 {
            Form::Parsed(value @ (Value::Array(_) | Value::Object(_)))
                if within_depth(value, MAX_DEPTH) =>
            {
                // Written straight into a buffer (`to_string` goes through `fmt`'s adapter).
                // A `Value` always writes (its keys are strings); were it refused, it would
                // stay parsed.
                if let Ok(text) = serde_json::to_string(value) {
                    self.0 = Form::Text(text.into_boxed_str());
                }
            }
            Form::Parsed(Value::String(text)) => text.shrink_to_fit(),
            _ => {}
        }
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        match &self.0 {
            Form::Parsed(value) => value.is_object(),
            Form::Text(text) => text.starts_with('{'),
        }
    }

    /// Whether the value is held as compact text.
    pub fn is_compact(&self) -> bool {
        matches!(self.0, Form::Text(_))
    }

    /// The value: borrowed when parsed, parsed from the text when compact (each call parses
    /// again: a host that reads a compact value often keeps what this returns).
    pub fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Form::Parsed(value) => Cow::Borrowed(value),
            Form::Text(text) => Cow::Owned(parse(text)),
        }
    }

    /// The value, parsed if it was compact.
    pub fn into_value(self) -> Value {
        match self.0 {
            Form::Parsed(value) => value,
            Form::Text(text) => parse(&text),
        }
    }

    /// The value to change in place (parsed first if it was compact).
    pub fn get_mut(&mut self) -> &mut Value {
        if let Form::Text(text) = &self.0 {
            self.0 = Form::Parsed(parse(text));
        }
        match &mut self.0 {
            Form::Parsed(value) => value,
            Form::Text(_) => unreachable!("the form was made parsed above"),
        }
    }

    /// The parsed value, when the value is held parsed.
    pub fn as_parsed(&self) -> Option<&Value> {
        match &self.0 {
            Form::Parsed(value) => Some(value),
            Form::Text(_) => None,
        }
    }
}

/// The nesting `serde_json` reads back: arrays and objects within arrays and objects.
const MAX_DEPTH: usize = 127;

/// Whether `value` nests at most `room` more levels of arrays and objects (the walk stops at
/// the limit, so it never recurses deeper than `MAX_DEPTH`).
fn within_depth(value: &Value, room: usize) -> bool {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(map) => Box::new(map.values()),
        _ => return true,
    };
    let mut children = children.peekable();
    if children.peek().is_none() {
        return true;
    }
    room > 0 && children.all(|child| within_depth(child, room - 1))
}

/// The text of a compact form: written by `serde_json` from a `Value` within its depth, so
/// it parses (to the same value: floats round-trip with `float_roundtrip`). A text that did
/// not would read as `null` rather than panic.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

impl From<Value> for Json {
    fn from(value: Value) -> Json {
        Json(Form::Parsed(value))
    }
}

impl From<Json> for Value {
    fn from(json: Json) -> Value {
        json.into_value()
    }
}

impl Default for Json {
    fn default() -> Json {
        Json(Form::Parsed(Value::Null))
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Json) -> bool {
        match (&self.0, &other.0) {
            // Equal texts are equal values; unequal ones are not, but for `0.0` and `-0.0`
            // (equal `Value`s, distinct texts).
            (Form::Text(a), Form::Text(b)) => {
                a == b || ((a.contains("-0.0") || b.contains("-0.0")) && parse(a) == parse(b))
            }
            (Form::Parsed(a), Form::Parsed(b)) => a == b,
            _ => *self.value() == *other.value(),
        }
    }
}

impl Eq for Json {}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        *self.value() == *other
    }
}

impl PartialEq<Json> for Value {
    fn eq(&self, other: &Json) -> bool {
        other == self
    }
}

/// Compact JSON text, whatever the form.
impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Form::Parsed(value) => write!(f, "{value}"),
            Form::Text(text) => f.write_str(text),
        }
    }
}

/// `Json(<compact JSON>)`, whatever the form.
impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Json({self})")
    }
}

/// A compact value is serialized to a human-readable format (JSON, YAML, ...) straight from
/// its text (`serde_transcode`: no `Value` is built; sequences and maps without a length up
/// front), and to a binary one (which may need the lengths) through its parsed `Value`.
impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Form::Parsed(value) => value.serialize(serializer),
            Form::Text(text) if serializer.is_human_readable() => serde_transcode::transcode(
                &mut serde_json::Deserializer::from_str(text),
                serializer,
            ),
            Form::Text(text) => parse(text).serialize(serializer),
        }
    }
}

/// A deserialized value is final: it is kept compact.
impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        Value::deserialize(deserializer).map(Json::compact_of)
    }
}

/// A small sorted map as a JSON object, also when it is empty (`litemap` writes an empty map
/// as a list): `#[serde(serialize_with = "crate::json::object")]`.
pub(crate) fn object<K: Serialize, V: Serialize, S: Serializer>(
    map: &litemap::LiteMap<K, V>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(map.iter())
}

/// [`object`] for an optional map: `null` when absent.
pub(crate) fn option_object<K: Serialize, V: Serialize, S: Serializer>(
    map: &Option<litemap::LiteMap<K, V>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match map {
        Some(map) => object(map, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn both_forms_are_the_same_value() {
        let value = json!({"b": [1, {"c": null}], "a": "x\"y", "n": 1.5});
        let parsed = Json::from(value.clone());
        let compact = Json::compact_of(value.clone());
        assert!(compact.is_compact() && !parsed.is_compact());
        assert_eq!(parsed, compact);
        assert_eq!(compact, value);
        assert_eq!(format!("{parsed:?}"), format!("{compact:?}"));
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            serde_json::to_string(&compact).unwrap()
        );
        assert_eq!(compact.value().as_ref(), &value);
        // Another serializer than the JSON writer sees the same calls.
        assert_eq!(serde_json::to_value(&compact).unwrap(), value);
        assert_ne!(compact, Json::from(json!({"a": "x"})));
        assert_ne!(compact, Json::compact_of(json!({"a": "x"})));
        // One value, two texts: still equal, in every pairing of forms.
        let (zero, minus_zero) = (json!([0.0]), json!([-0.0]));
        assert_eq!(
            Json::compact_of(zero.clone()),
            Json::compact_of(minus_zero.clone())
        );
        assert_eq!(Json::compact_of(zero), Json::from(minus_zero));
    }

    proptest::proptest! {
        /// Compacting keeps the value exactly: floats of any magnitude come back bit for bit
        /// (`float_roundtrip`), in arrays and objects, in every pairing of forms.
        #[test]
        fn compacting_keeps_every_float(
            floats in proptest::collection::vec(
                proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
                1..20,
            ),
        ) {
            let value = json!({"xs": floats.clone(), "first": floats.first()});
            let parsed = Json::from(value.clone());
            let compact = Json::compact_of(value.clone());
            proptest::prop_assert!(compact.is_compact());
            proptest::prop_assert_eq!(&compact, &parsed);
            proptest::prop_assert_eq!(compact.to_string(), parsed.to_string());
            let back = compact.value().into_owned();
            let bits = |v: &Value| -> Vec<u64> {
                v["xs"].as_array().into_iter().flatten().filter_map(Value::as_f64).map(f64::to_bits).collect()
            };
            proptest::prop_assert_eq!(bits(&back), bits(&value));
        }
    }

    #[test]
    fn a_value_too_deep_to_read_back_stays_parsed() {
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        let compact = Json::compact_of(deep.clone());
        assert!(!compact.is_compact());
        assert_eq!(compact, deep);
        let mut shallow = json!(1);
        for _ in 0..MAX_DEPTH {
            shallow = json!([shallow]);
        }
        let compact = Json::compact_of(shallow.clone());
        assert!(compact.is_compact());
        assert_eq!(compact.value().as_ref(), &shallow);
    }

    #[test]
    fn a_compact_value_thaws_to_change() {
        let mut json: Json = serde_json::from_str(r#"{"usage": {"input": 1}}"#).unwrap();
        assert!(json.is_compact());
        json.get_mut()["usage"]["output"] = json!(2);
        assert!(!json.is_compact());
        json.compact();
        assert_eq!(json.to_string(), r#"{"usage":{"input":1,"output":2}}"#);
    }

    #[test]
    fn scalars_and_strings_stay_parsed() {
        for text in ["21", "null", "true", r#""a \"quoted\" string""#] {
            let json: Json = serde_json::from_str(text).unwrap();
            assert!(!json.is_compact(), "{text}");
            assert_eq!(json.to_string(), text);
        }
        let array: Json = serde_json::from_str("[]").unwrap();
        assert!(array.is_compact());
    }
}
