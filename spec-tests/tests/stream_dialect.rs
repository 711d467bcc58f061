#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The runtime's answer dialect (RU-1 to RU-6): the vectors of `vectors/assistant-stream/`
//! (bodies as the platform's Agents send them, with what the reference's decoder,
//! assistant-stream 0.3.57, assembles from them). Every body, fed whole, one byte at a time and
//! in seeded random slicings, gives a message whose canonical form (that folder's README) is
//! `<name>.canonical.json`; where the reference's decoder failed (`outcome.ok` false) the
//! message must be failed or incomplete and keep the canonical parts as a prefix.

use crate::stream_support;

use std::path::{Path, PathBuf};

use engine_core::StreamOutcome;
use engine_core::message::Message;
use serde_json::{Value, json};
use stream_support::{CAP, run_cut};

struct Vector {
    name: String,
    sse: Vec<u8>,
    canonical: Value,
    ok: bool,
}

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/assistant-stream")
}

fn vectors() -> Vec<Vector> {
    let dir = vector_dir();
    let index: Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    let list = index["vectors"].as_array().unwrap();
    assert_eq!(list.len(), 14, "the vector set changed");
    list.iter()
        .map(|entry| {
            let name = entry["name"].as_str().unwrap().to_owned();
            let read = |suffix: &str| std::fs::read(dir.join(format!("{name}{suffix}"))).unwrap();
            Vector {
                sse: read(".sse"),
                canonical: serde_json::from_slice(&read(".canonical.json")).unwrap(),
                ok: entry["ok"].as_bool().unwrap(),
                name,
            }
        })
        .collect()
}

/// The canonical form (vectors README) of an engine message and its stream's outcome.
fn canonical(message: &Message, outcome: &StreamOutcome) -> Value {
    let value = serde_json::to_value(message).unwrap();
    let (status, error) = match outcome {
        StreamOutcome::Finished { .. } => ("complete", Value::Null),
        StreamOutcome::Aborted { .. } => ("incomplete", Value::Null),
        StreamOutcome::Open => ("running", Value::Null),
        StreamOutcome::Failed { error_text } => ("failed", json!(error_text)),
        StreamOutcome::Interrupted => ("failed", value["error"].clone()),
        other => panic!("an outcome this test does not know: {other:?}"),
    };
    let mut parts = Vec::new();
    let mut data = Vec::new();
    let mut steps = 0;
    for part in value["parts"].as_array().unwrap() {
        let kind = part["type"].as_str().unwrap();
        let text = |kind: &str| json!({"kind": kind, "text": part["text"]});
        match kind {
            "text" | "reasoning" => parts.push(text(kind)),
            "step-start" => steps += 1,
            "source-url" | "source-document" => parts.push(json!({
                "kind": "source",
                "sourceType": kind.strip_prefix("source-").unwrap(),
                "id": part["sourceId"],
                "url": part.get("url").cloned().unwrap_or(Value::Null),
                "title": part.get("title").cloned().unwrap_or(Value::Null),
                "mediaType": part.get("mediaType").cloned().unwrap_or(Value::Null),
                "filename": part.get("filename").cloned().unwrap_or(Value::Null),
            })),
            "file" => parts
                .push(json!({"kind": "file", "mediaType": part["mediaType"], "url": part["url"]})),
            _ if kind.starts_with("data-") => {
                data.push(
                    json!({"name": kind.strip_prefix("data-").unwrap(), "data": part["data"]}),
                );
            }
            _ if kind.starts_with("tool-") || kind == "dynamic-tool" => {
                parts.push(tool(part, kind))
            }
            other => panic!("a part this test does not know: {other}"),
        }
    }
    let id = value["id"].as_str().unwrap();
    json!({
        "status": status,
        "error": error,
        "messageId": if id.is_empty() { Value::Null } else { json!(id) },
        "steps": steps,
        "parts": parts,
        "data": data,
    })
}

/// A tool part in the canonical form.
fn tool(part: &Value, kind: &str) -> Value {
    let name = match kind {
        "dynamic-tool" => part["toolName"].clone(),
        _ => json!(kind.strip_prefix("tool-").unwrap()),
    };
    let input = part.get("input").cloned().unwrap_or(Value::Null);
    let args_text = match part.get("rawInput") {
        Some(Value::String(raw)) => raw.clone(),
        _ if !input.is_null() => input.to_string(),
        _ => String::new(),
    };
    let (result, is_error) = match part["state"].as_str().unwrap() {
        "output-available" => (part["output"].clone(), json!(false)),
        "output-error" => (
            part.get("output")
                .cloned()
                .unwrap_or_else(|| part["errorText"].clone()),
            json!(true),
        ),
        "output-denied" => {
            let reason = part["approval"]["reason"]
                .as_str()
                .unwrap_or("Tool approval denied");
            (json!({"error": reason}), json!(true))
        }
        _ => (Value::Null, Value::Null),
    };
    let approval = match part.get("approval") {
        Some(approval) => json!({
            "id": approval["id"],
            "approved": approval.get("approved").cloned().unwrap_or(Value::Null),
            "reason": approval.get("reason").cloned().unwrap_or(Value::Null),
        }),
        None => Value::Null,
    };
    json!({
        "kind": "tool",
        "toolCallId": part["toolCallId"],
        "toolName": name,
        "args": input,
        "argsText": args_text,
        "result": result,
        "isError": is_error,
        "approval": approval,
    })
}

/// The README's comparison: every field but `finishReason`; `argsText` also matches when both
/// texts parse to the same JSON value.
fn same(engine: &Value, expected: &Value) -> bool {
    let mut expected = expected.clone();
    expected.as_object_mut().unwrap().remove("finishReason");
    let (mut engine, mut expected) = (engine.clone(), expected);
    for value in [&mut engine, &mut expected] {
        for part in value["parts"].as_array_mut().unwrap() {
            if let Some(text) = part.get("argsText").and_then(Value::as_str)
                && let Ok(parsed) = serde_json::from_str::<Value>(text)
            {
                part["argsText"] = json!({"parsed": parsed});
            }
        }
    }
    engine == expected
}

/// Where the reference's decoder failed: a failed or incomplete message that keeps the
/// canonical parts and data as a prefix.
fn keeps_prefix(engine: &Value, expected: &Value) -> bool {
    let prefix = |key: &str| {
        let (ours, theirs) = (
            engine[key].as_array().unwrap(),
            expected[key].as_array().unwrap(),
        );
        ours.len() >= theirs.len() && ours[..theirs.len()] == theirs[..]
    };
    matches!(engine["status"].as_str(), Some("failed" | "incomplete"))
        && prefix("parts")
        && prefix("data")
}

fn check(vector: &Vector, cuts: &[usize], how: &str) {
    let run = run_cut(&vector.sse, cuts, CAP);
    let engine = canonical(run.stream.message(), run.stream.outcome());
    let matches = if vector.ok {
        same(&engine, &vector.canonical)
    } else {
        keeps_prefix(&engine, &vector.canonical)
    };
    assert!(
        matches,
        "{} ({how}):\nengine:   {engine:#}\nexpected: {:#}",
        vector.name, vector.canonical
    );
}

/// RU-1, RU-3, RU-4: fed whole, every vector gives the reference's message.
#[test]
fn every_vector_matches_the_reference_fed_whole() {
    for vector in vectors() {
        check(&vector, &[], "whole");
    }
}

/// RU-1, RU-4: fed one byte at a time (raw UTF-8 cut inside a character included).
#[test]
fn every_vector_matches_fed_byte_by_byte() {
    for vector in vectors() {
        let cuts: Vec<usize> = (1..vector.sse.len()).collect();
        check(&vector, &cuts, "byte by byte");
    }
}

/// RU-1, RU-4: fed in 40 seeded random slicings each.
#[test]
fn every_vector_matches_in_random_slicings() {
    let mut seed: u64 = 0x5eed_2024;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    for vector in vectors() {
        for round in 0..40 {
            let len = vector.sse.len() as u64;
            let count = next() % 12;
            let cuts: Vec<usize> = (0..count).map(|_| (next() % len) as usize).collect();
            check(&vector, &cuts, &format!("slicing {round}: {cuts:?}"));
        }
    }
}

/// The comparison itself can fail: a vector compared with another's canonical form does not
/// match, and a changed text, tool result or step count is seen.
#[test]
fn the_comparison_tells_messages_apart() {
    let vectors = vectors();
    let text = vectors.iter().find(|v| v.name == "mstau-text").unwrap();
    let run = run_cut(&text.sse, &[], CAP);
    let engine = canonical(run.stream.message(), run.stream.outcome());
    assert!(same(&engine, &text.canonical));
    for other in vectors.iter().filter(|v| v.name != "mstau-text") {
        assert!(!same(&engine, &other.canonical), "{}", other.name);
    }
    let mut changed = text.canonical.clone();
    changed["steps"] = json!(2);
    assert!(!same(&engine, &changed));
    let mut changed = text.canonical.clone();
    changed["parts"][0]["text"] = json!("something else");
    assert!(!same(&engine, &changed));
    let end_to_end = vectors
        .iter()
        .find(|v| v.name == "mstau-end-to-end")
        .unwrap();
    let run = run_cut(&end_to_end.sse, &[], CAP);
    let engine = canonical(run.stream.message(), run.stream.outcome());
    let mut changed = end_to_end.canonical.clone();
    changed["parts"][1]["isError"] = json!(true);
    assert!(!same(&engine, &changed));
    changed["parts"][1]["isError"] = json!(false);
    changed["parts"][1]["argsText"] = json!("{\"query\":\"notes\",\"limit\":6}");
    assert!(!same(&engine, &changed));
}
