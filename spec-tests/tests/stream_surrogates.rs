#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Answer text across a split surrogate (issue 11, point 13): a JavaScript server cuts its deltas
//! by UTF-16 code units, so an emoji's pair may be split over two deltas, each half written by
//! `JSON.stringify` as a lone `\u` escape. The assembled text is what JavaScript's string
//! concatenation gives (ui-message-stream.md §5, "`text-delta` appends `delta`"): the emoji, in
//! the decoder's deltas and message and in the engine's `Event::Answer` and thread (SND-7); a
//! half that nothing completes shows as U+FFFD. Nothing else of the frame is lost.

use crate::stream_support;

use engine_core::StreamDelta;
use engine_core::message::Part;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::turns::{post_on, streamed_text};
use stream_support::{CAP, joined, parts, run, run_cut, run_frame_by_frame};

const S1: &str = "s-1";

/// A UTF-16 piece as `JSON.stringify` writes it: a lone surrogate as a lower-case `\u` escape,
/// a pair and every other character as itself, `"`, `\` and control characters escaped.
fn js_string(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\n') => out.push_str("\\n"),
            Ok(c) if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            Ok(c) => out.push(c),
            Err(lone) => out.push_str(&format!("\\u{:04x}", lone.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

fn units(text: &str) -> Vec<u16> {
    text.encode_utf16().collect()
}

/// One `data:` event with a raw JSON payload (as a JS server writes it).
fn event(payload: &str) -> Vec<u8> {
    format!("data: {payload}\n\n").into_bytes()
}

fn delta_event(kind: &str, id: &str, piece: &[u16]) -> Vec<u8> {
    event(&format!(
        r#"{{"type":"{kind}-delta","id":"{id}","delta":{}}}"#,
        js_string(piece)
    ))
}

/// A body: `text-start`, the text pieces as deltas, `text-end`, `finish`, `[DONE]`.
fn text_body(pieces: &[&[u16]]) -> Vec<u8> {
    let mut body = event(&json!({"type": "text-start", "id": "t"}).to_string());
    for piece in pieces {
        body.extend(delta_event("text", "t", piece));
    }
    body.extend(event(&json!({"type": "text-end", "id": "t"}).to_string()));
    body.extend(event(&json!({"type": "finish"}).to_string()));
    body.extend(b"data: [DONE]\n\n");
    body
}

/// The text the stream's text deltas carried, joined.
fn streamed(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// ui-message-stream.md §5: `"\ud83d"` then `"\ude80"` gives "🚀" in the part, and the text
/// deltas joined give the same (fed a frame at a time: the first carries nothing of the emoji,
/// the second the emoji; issue 28: fed whole, the two are one delta).
#[test]
fn split_pair_joins_to_the_emoji() {
    let rocket = units("a🚀b");
    let body = text_body(&[&rocket[..2], &rocket[2..]]);
    let whole = run(&body);
    assert_eq!(streamed(&whole.deltas), "a🚀b");
    assert_eq!(joined(&whole.deltas), whole.deltas);
    let r = run_frame_by_frame(&body);
    assert_eq!(
        parts(r.stream.message()),
        json!([{"type": "text", "text": "a🚀b", "state": "done"}])
    );
    assert_eq!(streamed(&r.deltas), "a🚀b");
    let pieces: Vec<&str> = r
        .deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces, ["a", "🚀b"]);
    assert_eq!(r.stream.stats().dropped_payloads, 0);
}

/// ui-message-stream.md §5: the same for reasoning; and a delta that is only the high half,
/// then an empty delta, then the low half (JavaScript's `+= ""` keeps the half waiting).
#[test]
fn split_pair_in_reasoning_and_across_an_empty_delta() {
    let rocket = units("🚀");
    let mut body = event(&json!({"type": "reasoning-start", "id": "r"}).to_string());
    body.extend(delta_event("reasoning", "r", &rocket[..1]));
    body.extend(delta_event("reasoning", "r", &[]));
    body.extend(delta_event("reasoning", "r", &rocket[1..]));
    body.extend(event(
        &json!({"type": "reasoning-end", "id": "r"}).to_string(),
    ));
    let r = run(&body);
    assert_eq!(
        parts(r.stream.message()),
        json!([{"type": "reasoning", "id": "r", "text": "🚀", "state": "done"}])
    );
}

/// ui-message-stream.md §5: the waiting half belongs to its part (by id): another part's delta
/// in between neither completes nor breaks it.
#[test]
fn halves_wait_per_part() {
    let rocket = units("🚀");
    let mut body = event(&json!({"type": "text-start", "id": "a"}).to_string());
    body.extend(event(&json!({"type": "text-start", "id": "b"}).to_string()));
    body.extend(event(
        &json!({"type": "reasoning-start", "id": "a"}).to_string(),
    ));
    body.extend(delta_event("text", "a", &rocket[..1]));
    body.extend(delta_event("reasoning", "a", &units("R")));
    body.extend(delta_event("text", "b", &units("x")));
    body.extend(delta_event("text", "a", &rocket[1..]));
    let r = run(&body);
    assert_eq!(
        parts(r.stream.message()),
        json!([
            {"type": "text", "text": "🚀", "state": "streaming"},
            {"type": "text", "text": "x", "state": "streaming"},
            {"type": "reasoning", "id": "a", "text": "R", "state": "streaming"}
        ])
    );
}

/// A half nothing completes shows as U+FFFD (what JavaScript renders for a lone surrogate),
/// once, where it stood: before a delta that does not start with a low half, at `text-end`,
/// at the body's end; a low half with nothing before it too. The text around is kept.
#[test]
fn lone_halves_become_replacement_characters() {
    let high: &[u16] = &[0xD83D];
    let low: &[u16] = &[0xDE80];
    let x = units("x");
    let cases: [(&[&[u16]], &str); 4] = [
        (&[high, &x], "\u{FFFD}x"),
        (&[&x, high], "x\u{FFFD}"),
        (&[low, &x], "\u{FFFD}x"),
        (&[&[0xD83D, 0x78, 0xDE80]], "\u{FFFD}x\u{FFFD}"),
    ];
    for (pieces, text) in cases {
        let r = run(&text_body(pieces));
        assert_eq!(
            parts(r.stream.message()),
            json!([{"type": "text", "text": text, "state": "done"}]),
            "{pieces:?}"
        );
        assert_eq!(streamed(&r.deltas), text, "{pieces:?}");
    }
    // The body ends (no text-end, no [DONE]) with a half waiting.
    let mut body = event(&json!({"type": "text-start", "id": "t"}).to_string());
    body.extend(delta_event("text", "t", &units("ok\u{1F680}")[..3]));
    let r = run(&body);
    assert_eq!(
        parts(r.stream.message()),
        json!([{"type": "text", "text": "ok\u{FFFD}", "state": "streaming"}])
    );
}

/// ui-message-stream.md §4, §5: a lone half elsewhere in the frame (here in providerMetadata)
/// does not cost the frame: the delta is applied, the stray half reads U+FFFD.
#[test]
fn a_lone_half_elsewhere_keeps_the_frame() {
    let mut body = event(&json!({"type": "text-start", "id": "t"}).to_string());
    body.extend(event(
        r#"{"type":"text-delta","id":"t","delta":"kept","providerMetadata":{"p":{"note":"\ud83d!"}}}"#,
    ));
    let r = run(&body);
    assert_eq!(
        parts(r.stream.message()),
        json!([{"type": "text", "text": "kept", "state": "streaming",
            "providerMetadata": {"p": {"note": "\u{FFFD}!"}}}])
    );
    assert_eq!(r.stream.stats().dropped_payloads, 0);
}

/// ui-message-stream.md §5, tools: a tool call's streamed input may split a pair too; the raw
/// input and its parse hold the emoji.
#[test]
fn split_pair_in_tool_input() {
    let input = units(r#"{"q":"🚀"}"#);
    let mut body = event(
        &json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "search"}).to_string(),
    );
    for piece in [&input[..7], &input[7..]] {
        body.extend(event(&format!(
            r#"{{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":{}}}"#,
            js_string(piece)
        )));
    }
    let r = run(&body);
    let part = &parts(r.stream.message())[0];
    assert_eq!(part["input"], json!({"q": "🚀"}), "{part}");
    assert_eq!(part["rawInput"], json!(r#"{"q":"🚀"}"#), "{part}");
}

/// SND-7, ui-message-stream.md §5: through the engine, the answer's `Event::Answer` text deltas
/// and the thread's assistant text both show the emoji, whatever the byte slicing.
#[test]
fn engine_answer_events_and_thread_show_the_emoji() {
    let text = units("Launch 🚀 now 👍🏽");
    let mut body = event(&json!({"type": "start", "messageId": "msg-1"}).to_string());
    body.extend(text_body(&[&text[..8], &text[8..14], &text[14..]]));
    for cut in [1, 7, body.len() / 2] {
        let mut h = Harness::talking(S1);
        let id = post_on(&mut h, S1, "Go?");
        h.stream_head(id);
        let mark = h.events().len();
        h.chunk(id, &body[..cut]).chunk(id, &body[cut..]).end(id);
        assert_eq!(
            streamed_text(&h.events()[mark..]),
            "Launch 🚀 now 👍🏽",
            "cut {cut}"
        );
        let thread = h.snapshot().thread;
        let answer = thread.last().unwrap();
        let texts: Vec<&str> = answer
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Launch 🚀 now 👍🏽"], "cut {cut}");
    }
}

/// One text and one reasoning part, each streamed in the given UTF-16 pieces, interleaved.
fn split_body(text_pieces: &[Vec<u16>], reasoning_pieces: &[Vec<u16>]) -> Vec<u8> {
    let mut body = event(&json!({"type": "text-start", "id": "t"}).to_string());
    body.extend(event(
        &json!({"type": "reasoning-start", "id": "r"}).to_string(),
    ));
    for i in 0..text_pieces.len().max(reasoning_pieces.len()) {
        if let Some(piece) = text_pieces.get(i) {
            body.extend(delta_event("text", "t", piece));
        }
        if let Some(piece) = reasoning_pieces.get(i) {
            body.extend(delta_event("reasoning", "r", piece));
        }
    }
    body.extend(event(&json!({"type": "text-end", "id": "t"}).to_string()));
    body.extend(event(
        &json!({"type": "reasoning-end", "id": "r"}).to_string(),
    ));
    body.extend(b"data: [DONE]\n\n");
    body
}

/// `units` cut at the given points (any order; out of range ignored).
fn pieces_at(units: &[u16], cuts: &[prop::sample::Index]) -> Vec<Vec<u16>> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(units.len() + 1)).collect();
    at.extend([0, units.len()]);
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| units[w[0]..w[1]].to_vec()).collect()
}

fn text_of(parts: &Value, kind: &str) -> String {
    parts
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == kind)
        .map(|p| p["text"].as_str().unwrap().to_owned())
        .unwrap()
}

fn text_strategy() -> impl Strategy<Value = String> {
    let chars = vec![
        'a',
        ' ',
        'é',
        '中',
        '"',
        '\\',
        '\n',
        '🚀',
        '👍',
        '🏽',
        '𝄞',
        '\u{10FFFF}',
    ];
    prop::collection::vec(prop::sample::select(chars), 0..16)
        .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x5117_d0d0),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// ui-message-stream.md §3, §5: any split of a text holding emoji into UTF-16 pieces (as a
    /// JavaScript server cuts), in a text and a reasoning part at once, assembles to the text
    /// itself; the text deltas joined give it too; and any byte slicing of the body gives the
    /// same message (the harness also replays the deltas after every slice).
    #[test]
    fn any_utf16_split_assembles_to_the_text(
        text in text_strategy(),
        reasoning in text_strategy(),
        text_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        reasoning_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        byte_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let body = split_body(
            &pieces_at(&units(&text), &text_cuts),
            &pieces_at(&units(&reasoning), &reasoning_cuts),
        );
        let whole = run(&body);
        let assembled = parts(whole.stream.message());
        prop_assert_eq!(text_of(&assembled, "text"), text.clone());
        prop_assert_eq!(text_of(&assembled, "reasoning"), reasoning);
        prop_assert_eq!(streamed(&whole.deltas), text);
        let cuts: Vec<usize> = byte_cuts.iter().map(|c| c.index(body.len() + 1)).collect();
        let sliced = run_cut(&body, &cuts, CAP);
        prop_assert_eq!(sliced.stream.message(), whole.stream.message());
        // Issue 28: how the deltas are joined follows the slicing; what they append does not.
        prop_assert_eq!(joined(&sliced.deltas), joined(&whole.deltas));
    }
}
