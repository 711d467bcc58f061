//! What crossing the C ABI costs (issue 15): the decode and assembly of a 100k-delta answer
//! through `engine-core` directly and through `engine-ffi`'s entry points, the host draining the
//! events after every chunk and reading each text delta (a view through the ABI, no JSON).
//!
//! `cargo bench -p engine-ffi --bench boundary` prints, for 16 KiB body slices and for one SSE
//! event per chunk, the best of 5 runs each way and their ratio (target ≤ 1.5x).
//! `BOUNDARY_ONLY=<rust|ffi>:<slices|events>` runs one case once (for callgrind).

#![allow(
    unsafe_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::undocumented_unsafe_blocks,
    clippy::indexing_slicing,
    missing_docs
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agent_engine::*;
use engine_core::{Engine, Event, Input, Intent, RequestId, ResponseHead, StreamDelta, Time};

const DELTAS: usize = 100_000;
const BASE: &str = "http://127.0.0.1:8787";

/// The answer's body as pieces: 16 KiB slices, or one SSE event each.
fn body(events_per_chunk: bool) -> Vec<Vec<u8>> {
    const WORDS: [&str; 8] = [
        "the ", "quick", " fox", " jumps", " over", " a", " lazy", " dog.",
    ];
    let mut events = vec![
        r#"data: {"type":"start","messageId":"m-1"}"#.to_owned() + "\n\n",
        r#"data: {"type":"text-start","id":"t"}"#.to_owned() + "\n\n",
    ];
    for i in 0..DELTAS {
        let word = WORDS[i % WORDS.len()];
        events.push(format!(
            "data: {{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"{word}\"}}\n\n"
        ));
    }
    events.push(r#"data: {"type":"text-end","id":"t"}"#.to_owned() + "\n\n");
    events.push(r#"data: {"type":"finish"}"#.to_owned() + "\n\n");
    events.push("data: [DONE]\n\n".to_owned());
    if events_per_chunk {
        return events.into_iter().map(String::into_bytes).collect();
    }
    let all: Vec<u8> = events.concat().into_bytes();
    all.chunks(16 * 1024).map(<[u8]>::to_vec).collect()
}

/// One way of driving an engine.
trait Drive {
    fn input(&mut self, json: &str, now: u64);
    /// The HTTP intents taken: id, method, url.
    fn intents(&mut self) -> Vec<(u64, String, String)>;
    fn head(&mut self, id: u64, json: &str, now: u64);
    fn chunk(&mut self, id: u64, bytes: &[u8], now: u64);
    fn end(&mut self, id: u64, now: u64);
    /// Drains the events; returns the bytes of text deltas read.
    fn events(&mut self) -> usize;
}

struct Direct(Engine);

impl Drive for Direct {
    fn input(&mut self, json: &str, now: u64) {
        let input: Input = serde_json::from_str(json).unwrap();
        self.0.handle_input(input, Time::from_micros(now));
    }
    fn intents(&mut self) -> Vec<(u64, String, String)> {
        let mut out = Vec::new();
        while let Some(intent) = self.0.poll_intent() {
            if let Intent::Http { id, request, .. } = intent {
                out.push((id.0, request.method.as_str().to_owned(), request.url()));
            }
        }
        out
    }
    fn head(&mut self, id: u64, json: &str, now: u64) {
        let head: ResponseHead = serde_json::from_str(json).unwrap();
        self.0
            .handle_response(RequestId(id), head, Time::from_micros(now));
    }
    fn chunk(&mut self, id: u64, bytes: &[u8], now: u64) {
        self.0.handle_body_chunk(
            RequestId(id),
            bytes::Bytes::copy_from_slice(bytes),
            Time::from_micros(now),
        );
    }
    fn end(&mut self, id: u64, now: u64) {
        self.0
            .handle_body_end(RequestId(id), Time::from_micros(now));
    }
    fn events(&mut self) -> usize {
        let mut n = 0;
        while let Some(event) = self.0.poll_event() {
            if let Event::Answer {
                delta: StreamDelta::TextDelta { delta, .. },
                ..
            } = &event
            {
                n += black_box(delta.len());
            }
        }
        n
    }
}

struct Ffi(*mut AeEngine);

impl Drive for Ffi {
    fn input(&mut self, json: &str, now: u64) {
        assert_eq!(
            unsafe { ae_handle_input(self.0, json.as_ptr(), json.len(), now) },
            AE_OK
        );
    }
    fn intents(&mut self) -> Vec<(u64, String, String)> {
        let mut out = Vec::new();
        let mut v = AeIntentView {
            kind: 0,
            id: 0,
            method: AeStr {
                ptr: std::ptr::null(),
                len: 0,
            },
            url: AeStr {
                ptr: std::ptr::null(),
                len: 0,
            },
            body: AeStr {
                ptr: std::ptr::null(),
                len: 0,
            },
            streamed: 0,
            header_count: 0,
            target: 0,
        };
        while unsafe { ae_poll_intent(self.0, &mut v) } == AE_OK {
            if v.kind == AE_INTENT_HTTP {
                let s = |s: AeStr| {
                    String::from_utf8(unsafe { std::slice::from_raw_parts(s.ptr, s.len) }.to_vec())
                        .unwrap()
                };
                out.push((v.id, s(v.method), s(v.url)));
            }
        }
        out
    }
    fn head(&mut self, id: u64, json: &str, now: u64) {
        assert_eq!(
            unsafe { ae_handle_response(self.0, id, json.as_ptr(), json.len(), now) },
            AE_OK
        );
    }
    fn chunk(&mut self, id: u64, bytes: &[u8], now: u64) {
        assert_eq!(
            unsafe { ae_handle_body_chunk(self.0, id, bytes.as_ptr(), bytes.len(), now) },
            AE_OK
        );
    }
    fn end(&mut self, id: u64, now: u64) {
        assert_eq!(unsafe { ae_handle_body_end(self.0, id, now) }, AE_OK);
    }
    fn events(&mut self) -> usize {
        let mut n = 0;
        let mut v = AeEventView {
            kind: 0,
            index: 0,
            session_uid: AeStr {
                ptr: std::ptr::null(),
                len: 0,
            },
            text: AeStr {
                ptr: std::ptr::null(),
                len: 0,
            },
        };
        while unsafe { ae_poll_event(self.0, &mut v) } == AE_OK {
            if v.kind == AE_EVENT_TEXT_DELTA {
                n += black_box(v.text.len);
            }
        }
        n
    }
}

impl Drop for Ffi {
    fn drop(&mut self) {
        unsafe { ae_engine_free(self.0) };
    }
}

const CONFIG: &str = r#"{"platformBaseUrl": "http://127.0.0.1:8787", "seed": 1}"#;

fn direct() -> Direct {
    let config = engine_core::Config::new(BASE).unwrap().with_seed(1);
    Direct(Engine::new(config, Time::ZERO))
}

fn ffi() -> Ffi {
    let mut e = std::ptr::null_mut();
    assert_eq!(
        unsafe { ae_engine_new(CONFIG.as_ptr(), CONFIG.len(), 0, &mut e) },
        AE_OK
    );
    Ffi(e)
}

/// A local conversation up to its turn's answer head; returns the turn's request id.
fn to_streaming(d: &mut dyn Drive) -> u64 {
    let mut now = 1;
    d.input(
        r#"{"input":"source","value":{"baseUrl":"http://127.0.0.1:8787","displayName":"A"}}"#,
        now,
    );
    d.input(r#"{"input":"is_visible","value":true}"#, now);
    d.input(
        r#"{"input":"stored_selection_loaded","value":{"key":"ms.command-center-ai.local-session:http://127.0.0.1:8787","session_uid":null}}"#,
        now,
    );
    let mut sent = false;
    for _ in 0..50 {
        now += 1;
        let intents = d.intents();
        d.events();
        if let Some((id, _, _)) = intents
            .iter()
            .find(|(_, m, u)| m == "POST" && u.ends_with("/api/chat"))
        {
            d.head(
                *id,
                r#"{"status":200,"contentType":"text/event-stream","agentSessionUid":"local-default"}"#,
                now,
            );
            return *id;
        }
        for (id, method, url) in &intents {
            let body: &[u8] = if url.ends_with("/ready") {
                br#"{"ok":true}"#
            } else if url.ends_with("/health") {
                br#"{"mode":"local"}"#
            } else if url.ends_with("/api/chat") && method == "GET" {
                b"{}"
            } else {
                d.head(
                    *id,
                    r#"{"status":404,"contentType":"application/json"}"#,
                    now,
                );
                d.end(*id, now);
                continue;
            };
            d.head(
                *id,
                r#"{"status":200,"contentType":"application/json"}"#,
                now,
            );
            d.chunk(*id, body, now);
            d.end(*id, now);
        }
        if !sent && intents.is_empty() {
            d.input(
                r#"{"input":"command","value":{"command":"send_message","text":"go"}}"#,
                now,
            );
            sent = true;
        }
    }
    panic!("the turn never went out");
}

/// Feeds the whole answer, draining after every chunk; returns the time it took and the text
/// bytes read.
fn stream(d: &mut dyn Drive, pieces: &[Vec<u8>]) -> (Duration, usize) {
    let id = to_streaming(d);
    let mut text = d.events();
    let start = Instant::now();
    let mut now = 1_000_000;
    for piece in pieces {
        now += 10;
        d.chunk(id, piece, now);
        d.intents();
        text += d.events();
    }
    d.end(id, now);
    text += d.events();
    (start.elapsed(), text)
}

fn main() {
    let only = std::env::var("BOUNDARY_ONLY").ok();
    if let Some(case) = only.as_deref() {
        let (way, mode) = case
            .split_once(':')
            .expect("BOUNDARY_ONLY=<rust|ffi>:<slices|events>");
        let pieces = body(mode == "events");
        let (took, text) = match way {
            "rust" => stream(&mut direct(), &pieces),
            _ => stream(&mut ffi(), &pieces),
        };
        println!("{case}: {took:?}, {text} text bytes");
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("decode + assemble of a {DELTAS}-delta answer, best of 5 (ns per delta)");
    for (mode, per_event) in [("16 KiB slices", false), ("one event per chunk", true)] {
        let pieces = body(per_event);
        let best = |make: &dyn Fn() -> Box<dyn Drive>| {
            (0..5)
                .map(|_| {
                    let mut d = make();
                    let (took, text) = stream(d.as_mut(), &pieces);
                    assert!(text >= DELTAS * 2, "{text}");
                    took
                })
                .min()
                .unwrap()
        };
        let rust = best(&|| Box::new(direct()));
        let ffi = best(&|| Box::new(ffi()));
        let per = |d: Duration| d.as_nanos() as f64 / DELTAS as f64;
        println!(
            "{mode:>20}: rust {:7.1}  ffi {:7.1}  ffi / rust {:.3}x",
            per(rust),
            per(ffi),
            ffi.as_secs_f64() / rust.as_secs_f64()
        );
    }
}
