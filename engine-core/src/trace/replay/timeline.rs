//! The timeline's readable lines: a step's summary, an intent's line, a change's value.

use super::*;

pub(super) fn step_summary(step: &Step) -> String {
    match step {
        Step::Input(input) => {
            let v = serde_json::to_value(input).unwrap_or(Value::Null);
            let name = v.get("input").and_then(Value::as_str).unwrap_or("?");
            let value = v.get("value");
            let text = match (name, value) {
                ("command", Some(Value::Object(c))) => {
                    let command = c.get("command").and_then(Value::as_str).unwrap_or("?");
                    let mut rest = c.clone();
                    rest.remove("command");
                    if rest.is_empty() {
                        format!("command {command}")
                    } else {
                        format!("command {command} {}", compact(&Value::Object(rest)))
                    }
                }
                (_, Some(value)) => format!("input {name} {}", compact(value)),
                (_, None) => format!("input {name}"),
            };
            clip(&text, 160)
        }
        Step::Head { id, head } => format!(
            "head {id} {}{}",
            head.status,
            head.content_type
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default()
        ),
        Step::Chunk { id, bytes } => match std::str::from_utf8(bytes) {
            Ok(text) => {
                let mut out = String::with_capacity(128);
                let _ = write!(out, "chunk {id} ");
                debug_clipped(&mut out, text, 100);
                let _ = write!(out, " ({} bytes)", bytes.len());
                out
            }
            Err(_) => format!("chunk {id} ({} bytes, binary)", bytes.len()),
        },
        Step::End { id } => format!("end {id}"),
        Step::Failure { id, failure } => format!(
            "failure {id} {} {:?}",
            serde_json::to_value(failure.kind)
                .ok()
                .and_then(|k| k.as_str().map(str::to_owned))
                .unwrap_or_default(),
            failure.message
        ),
        Step::Timeout => "timeout".to_owned(),
    }
}

pub(super) fn intent_line(intent: &Intent) -> String {
    match intent {
        Intent::Http { id, request, .. } => {
            let body = request
                .body
                .as_ref()
                .map(|b| {
                    let text = serde_json::from_slice::<Value>(b)
                        .map(|v| compact(&v))
                        .unwrap_or_else(|_| String::from_utf8_lossy(b).into_owned());
                    format!(" {}", clip(&text, 120))
                })
                .unwrap_or_default();
            format!(
                "-> {id} {} {}{body}",
                request.method.as_str(),
                request.url()
            )
        }
        Intent::Abort { id } => format!("-> abort {id}"),
        Intent::Storage(StorageRequest::Load { key }) => format!("-> storage load {key}"),
        Intent::Storage(StorageRequest::Save { key, sessions }) => {
            let uids: Vec<&str> = sessions.iter().map(|s| s.uid.as_str()).collect();
            format!("-> storage save {key} [{}]", uids.join(", "))
        }
        Intent::Storage(StorageRequest::LoadQueue { key }) => {
            format!("-> storage load-queue {key}")
        }
        Intent::Storage(StorageRequest::SaveQueue { key, rows }) => {
            format!("-> storage save-queue {key} ({} rows)", rows.len())
        }
        Intent::Storage(StorageRequest::RemoveQueue { key }) => {
            format!("-> storage remove-queue {key}")
        }
        Intent::Storage(StorageRequest::LoadSelection { key }) => {
            format!("-> storage load-selection {key}")
        }
        Intent::Storage(StorageRequest::SaveSelection { key, session_uid }) => {
            format!("-> storage save-selection {key} {session_uid}")
        }
    }
}

/// A changed field's value, summarized where it is long (the session list by uids, the thread
/// by message ids, the detail by its status).
pub(super) fn change_value(name: &str, v: &Value) -> String {
    let ids = |items: &Vec<Value>, key: &str| {
        let ids: Vec<&str> = items
            .iter()
            .map(|item| item.get(key).and_then(Value::as_str).unwrap_or("?"))
            .collect();
        format!("[{}]", ids.join(","))
    };
    let text = match (name, v) {
        ("agentSessions", Value::Array(items)) => ids(items, "uid"),
        ("thread", Value::Array(items)) => ids(items, "id"),
        ("activeSessionDetail", Value::Object(d)) => format!(
            "{{status:{},error:{}}}",
            d.get("status").map(compact).unwrap_or_default(),
            d.get("error").map(compact).unwrap_or_default()
        ),
        _ => compact(v),
    };
    clip(&text, 200)
}

impl TimelineEntry {
    /// The entry as timeline text: its line, offset (ms) and summary, then the intents (`->`),
    /// events (`!!`) and changed snapshot fields (`=`) that followed, one per line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let at = match self.kind {
            EntryKind::Start | EntryKind::Step => self.at.to_string(),
            EntryKind::Expect | EntryKind::Note => String::new(),
        };
        let _ = writeln!(out, "{:>5} {:>9}  {}", self.line, at, self.what);
        let pad = " ".repeat(18);
        for i in &self.intents {
            let _ = writeln!(out, "{pad}{}", intent_line(i));
        }
        for ev in &self.events {
            let v = serde_json::to_value(ev).unwrap_or(Value::Null);
            let _ = writeln!(out, "{pad}!! {}", clip(&compact(&v), 200));
        }
        for (name, v) in &self.changes {
            let _ = writeln!(out, "{pad}= {name}={}", change_value(name, v));
        }
        out
    }
}

impl ReplayReport {
    /// The readable timeline: a column header, every entry ([`TimelineEntry::render`]) and a
    /// closing count.
    pub fn timeline(&self) -> String {
        let mut out = String::from(TIMELINE_HEADER);
        out.push('\n');
        for e in &self.entries {
            out.push_str(&e.render());
        }
        let _ = writeln!(
            out,
            "{} records replayed, {} expectations held",
            self.entries
                .iter()
                .filter(|e| e.kind == EntryKind::Step)
                .count(),
            self.expectations
        );
        out
    }
}

/// The timeline's column header.
pub const TIMELINE_HEADER: &str = " line     at ms  record";
