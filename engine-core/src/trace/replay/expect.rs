//! An expectation's comparison with what the engine gave, and the texts of a mismatch.

use super::*;

/// An HTTP intent as expectations see it: id, call, method, base, path, query, body.
pub(super) fn intent_value(intent: &Intent) -> Value {
    let Intent::Http { id, call, request } = intent else {
        return Value::Null;
    };
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id.0));
    let call = serde_json::to_value(call)
        .ok()
        .and_then(|c| c.get("call").cloned())
        .unwrap_or(Value::Null);
    m.insert("call".into(), call);
    m.insert("method".into(), Value::from(request.method.as_str()));
    m.insert("base".into(), Value::from(request.base.clone()));
    m.insert("path".into(), Value::from(request.path.clone()));
    if !request.query.is_empty() {
        let mut q = Map::new();
        for (k, v) in &request.query {
            q.entry(k.clone()).or_insert_with(|| Value::from(v.clone()));
        }
        m.insert("query".into(), Value::Object(q));
    }
    if let Some(body) = &request.body {
        let body = serde_json::from_slice::<Value>(body)
            .unwrap_or_else(|_| Value::from(String::from_utf8_lossy(body).into_owned()));
        m.insert("body".into(), body);
    }
    Value::Object(m)
}

/// The first field of `want` that `got` does not match: (field, expected, actual).
pub(super) fn intent_mismatch(
    want: &IntentExpectation,
    got: &Value,
) -> Option<(String, String, String)> {
    let mut checks: Vec<(String, Value, Option<&Value>)> = Vec::new();
    let field = |name: &str| got.get(name);
    checks.push((
        "method".into(),
        Value::from(want.method.clone()),
        field("method"),
    ));
    checks.push(("path".into(), Value::from(want.path.clone()), field("path")));
    if let Some(id) = want.id {
        checks.push(("id".into(), Value::from(id), field("id")));
    }
    if let Some(call) = &want.call {
        checks.push(("call".into(), Value::from(call.clone()), field("call")));
    }
    if let Some(base) = &want.base {
        checks.push(("base".into(), Value::from(base.clone()), field("base")));
    }
    for (k, v) in want.query.iter().flatten() {
        let actual = field("query").and_then(|q| q.get(k));
        checks.push((format!("query.{k}"), Value::from(v.clone()), actual));
    }
    let body = field("body").unwrap_or(&Value::Null);
    let mut body_checks = want
        .body
        .iter()
        .flatten()
        .map(|(path, v)| (format!("body.{path}"), v.clone(), lookup(body, path)));
    checks
        .into_iter()
        .find(|(_, expected, actual)| *actual != Some(expected))
        .or_else(|| body_checks.find(|(_, expected, actual)| !matches_optional(expected, *actual)))
        .map(|(name, expected, actual)| {
            let mut shown_actual = shown(actual);
            if name == "method" || name == "path" {
                // Which request it was instead.
                shown_actual = format!("{shown_actual} (intent {})", compact(got));
            }
            (name, compact(&expected), shown_actual)
        })
}

/// A body or event field matches: equal, or `null` for a field left out (the engine omits empty
/// optional fields there). Snapshot fields are always present and compared strictly.
pub(super) fn matches_optional(expected: &Value, actual: Option<&Value>) -> bool {
    match actual {
        Some(actual) => actual == expected,
        None => expected.is_null(),
    }
}

/// Compact JSON.
pub(super) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// An actual value, or that there is none.
pub(super) fn shown(v: Option<&Value>) -> String {
    v.map(compact)
        .unwrap_or_else(|| "nothing (no such field)".to_owned())
}

pub(super) fn expect_keys(e: &Expectation) -> String {
    let mut keys = Vec::new();
    if e.snapshot.is_some() {
        keys.push("snapshot");
    }
    if e.intents.is_some() {
        keys.push("intents");
    }
    if e.no_intents {
        keys.push("noIntents");
    }
    if e.aborts.is_some() {
        keys.push("aborts");
    }
    if e.events.is_some() {
        keys.push("events");
    }
    if keys.is_empty() {
        "nothing".to_owned()
    } else {
        keys.join(", ")
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Appends `clip(&format!("{s:?}"), max)` to `out` without escaping all of a long `s`: `str`'s
/// `Debug` escapes character by character (`char::escape_debug`, except that `'` is kept: it is printable ASCII), so
/// the first `max` characters of its form come from the first `max` characters of `s`.
pub(super) fn debug_clipped(out: &mut String, s: &str, max: usize) {
    let mut left = max;
    let mut push = |out: &mut String, c: char| {
        if left == 0 {
            return false;
        }
        left -= 1;
        out.push(c);
        true
    };
    push(out, '"');
    for c in s.chars() {
        let written = if c == ' ' || (c.is_ascii_graphic() && c != '"' && c != '\\') {
            push(out, c)
        } else {
            c.escape_debug().all(|e| push(out, e))
        };
        if !written {
            out.push('…');
            return;
        }
    }
    if !push(out, '"') {
        out.push('…');
    }
}
