//! The checks behind the fuzz targets of `fuzz/` (issue 13, point 2), one function per target.
//! Each takes the fuzzer's bytes and panics when an invariant breaks: the fuzzer reports the
//! panic and keeps the input. They live here, in the conformance crate, so that
//! `tests/fuzz_corpus.rs` replays every seed and every kept crash on stable Rust in each
//! `cargo test`, and the fuzz targets stay one line each.
//!
//! - [`answer_stream_split`]: an answer body decoded whole and cut at points the input chooses
//!   gives the same message, outcome and error (the split-point differential), and the deltas
//!   replayed onto a mirror give that message.
//! - [`payload_readers`]: every platform payload reader, chosen by the first byte, on the rest.
//! - [`trace_replay`]: a trace, replayed in each mode.
//! - [`engine_inputs`]: a whole engine driven by host inputs, platform answers (well-formed,
//!   cut, corrupted or foreign), transport failures and time, as the input decides.
//!
//! None may panic on any input; the engine's checks also hold after every step.

use bytes::Bytes;
use engine_core::stream::MessageMirror;
use engine_core::{
    AnswerStream, Command, Config, DefaultSession, Engine, FailureKind, HttpRequest, Input, Intent,
    Method, Person, RequestId, ResponseHead, Secret, SourceStatus, StorageRequest, Time,
    TransportFailure,
};
use serde_json::json;

use crate::fixtures;

/// The size cap of a decoded answer event in these checks.
const CAP: usize = 1 << 16;

/// The input, read a decision at a time; past its end every decision is zero.
struct Choices<'a> {
    data: &'a [u8],
}

impl<'a> Choices<'a> {
    fn new(data: &'a [u8]) -> Choices<'a> {
        Choices { data }
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&first, rest)) => {
                self.data = rest;
                first
            }
            None => 0,
        }
    }

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// Up to `max` raw bytes of the input.
    fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.byte()).min(max).min(self.data.len());
        let (taken, rest) = self.data.split_at(n);
        self.data = rest;
        taken
    }
}

/// The message of `body` fed whole, and cut at the points the first bytes choose: the same
/// message, outcome, error text and Agent id either way; the deltas of the cut run, replayed
/// onto a [`MessageMirror`], give its message.
pub fn answer_stream_split(data: &[u8]) {
    let cuts_wanted = data.first().map_or(0, |b| usize::from(b % 8));
    let (head, body) = data.split_at(data.len().min(1 + 2 * cuts_wanted));
    let mut cuts: Vec<usize> = head
        .get(1..)
        .unwrap_or_default()
        .chunks(2)
        .map(|pair| usize::from(u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0)])))
        .map(|at| if body.is_empty() { 0 } else { at % body.len() })
        .collect();
    cuts.sort_unstable();
    cuts.dedup();

    let mut deltas = Vec::new();
    let mut whole = AnswerStream::new("m-fuzz".to_owned(), CAP);
    whole.feed(body, &mut deltas);
    whole.end(&mut deltas);

    let mut cut = AnswerStream::new("m-fuzz".to_owned(), CAP);
    let mut mirror = MessageMirror::new("m-fuzz");
    let mut from = 0;
    for at in cuts.into_iter().chain([body.len()]) {
        let mut out = Vec::new();
        cut.feed(body.get(from..at).unwrap_or_default(), &mut out);
        for delta in &out {
            mirror.apply(delta);
        }
        from = at;
    }
    let mut out = Vec::new();
    cut.end(&mut out);
    for delta in &out {
        mirror.apply(delta);
    }
    assert_eq!(
        whole.message(),
        cut.message(),
        "the message depends on the cuts"
    );
    assert_eq!(
        whole.outcome(),
        cut.outcome(),
        "the outcome depends on the cuts"
    );
    assert_eq!(whole.error_text(), cut.error_text());
    assert_eq!(whole.agent_id(), cut.agent_id());
    assert_eq!(mirror.message(), cut.message(), "the deltas miss a change");
    // A finished message serializes, and compacting it keeps it.
    let finished = cut.into_message();
    assert_eq!(&finished, whole.message(), "compacting changed the message");
    assert!(serde_json::to_string(&finished).is_ok());
}

/// The platform payload reader the first byte names, on the rest of the input. Whatever it
/// reads, it reads without panicking, and what it returns can be shown.
pub fn payload_readers(data: &[u8]) {
    use engine_core::api::*;
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let base = "https://platform.test";
    let shown = match which % 13 {
        0 => format!("{:?}", parse_session_list(body)),
        1 => format!("{:?}", parse_session_list_in(body, fixtures::ENV)),
        2 => format!("{:?}", parse_session_record(body)),
        3 => format!("{:?}", parse_created_session(body)),
        4 => format!("{:?}", parse_get_or_create_session(body)),
        5 => format!("{:?}", parse_history(body)),
        6 => format!("{:?}", parse_insights(body)),
        7 => format!("{:?}", parse_runtime_access(body, base)),
        8 => format!("{:?}", parse_catalog(body)),
        9 => format!("{:?}", parse_icon_projection(body, base)),
        10 => format!("{:?}", error_message(body)),
        11 => {
            let status = [400, 409, 422][usize::from(which / 13) % 3];
            format!("{:?}", model_required_fields(status, body))
        }
        // An answer frame (both dialects, issue 24): the hot path reads a payload only as the
        // general path does.
        _ => {
            use engine_core::stream::chunk::{parse_delta, parse_frame};
            let text = String::from_utf8_lossy(body);
            let frame = parse_frame(&text);
            if let Some((agent_id, _)) = parse_delta(&text) {
                assert!(frame.chunk.is_ok(), "the hot path read a refused frame");
                assert_eq!(agent_id, frame.agent_id, "the paths disagree on agent_id");
            }
            format!("{frame:?}")
        }
    };
    assert!(!shown.is_empty());
}

/// The input as a trace (invalid UTF-8 replaced), replayed in the mode the first byte names.
pub fn trace_replay(data: &[u8]) {
    use engine_core::trace::{ReplayOptions, replay_with, replay_with_options};
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let shown = match mode % 3 {
        0 => replay_with(&text, |_| {}).map(|report| report.timeline()),
        1 => replay_with_options(&text, ReplayOptions::check(), |_| {}).map(|r| r.timeline()),
        _ => replay_with_options(&text, ReplayOptions::bare(), |_| {}).map(|r| r.timeline()),
    };
    if let Err(error) = shown {
        assert!(!error.to_string().is_empty(), "an error without a message");
    }
}

/// A request the engine sent and the fuzz run has not finished answering.
struct Open {
    id: RequestId,
    request: HttpRequest,
}

/// The most steps one input drives (a step per decision: inputs far longer than this add
/// nothing a shorter one could not).
const MAX_STEPS: usize = 400;

/// How far one [`engine_inputs`] run went.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reached {
    /// Steps driven.
    pub steps: usize,
    /// Requests the engine sent.
    pub requests: usize,
    /// Of which message turns (`POST {rpc_url}/api/chat`).
    pub turns: usize,
}

/// A whole engine driven by the input: host inputs, answers to the requests it sends (chosen
/// among them; well-formed for their endpoint, or with another status, cut, corrupted, or the
/// input's own bytes), transport failures, late answers to aborted requests, and time. Every
/// request's path is one the engine may send, and every fourth step and at the end the
/// snapshot serializes. Returns how far it went.
pub fn engine_inputs(data: &[u8]) -> Reached {
    let mut reached = Reached::default();
    let mut choices = Choices::new(data);
    let config = Config::new(crate::BASE)
        .map(|c| c.with_seed(u64::from(choices.byte())))
        .unwrap_or_else(|_| unreachable!("the test base is valid"));
    let mut now = Time::ZERO;
    let mut engine = Engine::new(config, now);
    let mut open: Vec<Open> = Vec::new();
    let mut aborted: Vec<RequestId> = Vec::new();
    let mut follow_ups: Vec<Input> = Vec::new();
    let mut texts = 0_u32;
    // Most runs start as a host does (a person, an Environment, a visible page, a session
    // asked for), so that they reach the deeper states; the rest start from nothing.
    if choices.below(4) != 0 {
        let start = [
            Input::Person(Person::new(fixtures::USER.to_owned(), Secret::new("tok"))),
            Input::EnvironmentUid(Some(fixtures::ENV.to_owned())),
            Input::IsVisible(true),
            Input::PageVisible(true),
            Input::RequestedSessionId(Some("s-1".to_owned())),
        ];
        for input in start {
            engine.handle_input(input, now);
        }
        drain(&mut engine, &mut open, &mut aborted, &mut follow_ups);
    }
    for _ in 0..MAX_STEPS {
        if choices.is_empty() {
            break;
        }
        reached.steps += 1;
        match choices.below(16) {
            0..=2 => {
                let input = host_input(&mut choices, &mut texts);
                engine.handle_input(input, now);
            }
            3..=10 if !open.is_empty() => {
                let at = choices.below(open.len());
                let Open { id, request } = open.swap_remove(at);
                answer(&mut engine, &mut choices, id, &request, now);
            }
            11 if !aborted.is_empty() => {
                // A late answer to an aborted request: ignored.
                let id = aborted[choices.below(aborted.len())];
                engine.handle_response(id, head(200), now);
                engine.handle_body_chunk(id, Bytes::from_static(b"{}"), now);
                engine.handle_body_end(id, now);
            }
            12 if !open.is_empty() => {
                let at = choices.below(open.len());
                let id = open.swap_remove(at).id;
                let kind = if choices.flag() {
                    FailureKind::NoAnswer
                } else {
                    FailureKind::Broken
                };
                let failure = TransportFailure::new(kind, "The connection was reset.".to_owned());
                engine.handle_failure(id, failure, now);
            }
            _ => {
                // Mostly short steps (up to 4 s); one in eight up to 9 minutes.
                let ms = if choices.below(8) == 0 {
                    u64::from(choices.u16()) * 8
                } else {
                    u64::from(choices.byte()) * 16
                };
                let step = std::time::Duration::from_millis(ms);
                now = now.checked_add(step).unwrap_or(now);
                engine.handle_timeout(now);
            }
        }
        let before = open.len();
        drain(&mut engine, &mut open, &mut aborted, &mut follow_ups);
        while let Some(input) = follow_ups.pop() {
            engine.handle_input(input, now);
            drain(&mut engine, &mut open, &mut aborted, &mut follow_ups);
        }
        for new in open.iter().skip(before) {
            reached.requests += 1;
            if new.request.method == Method::Post && new.request.path.ends_with("/api/chat") {
                reached.turns += 1;
            }
        }
        // Every fourth step (a snapshot and its JSON cost more than the step), and the last.
        if reached.steps % 4 == 0 {
            check_snapshot(&engine);
        }
    }
    check_snapshot(&engine);
    reached
}

/// The snapshot serializes.
fn check_snapshot(engine: &Engine) {
    assert!(
        serde_json::to_string(&engine.snapshot()).is_ok(),
        "the snapshot does not serialize"
    );
}

/// Takes the engine's intents and events: requests are noted, aborts move a request to the
/// aborted ones, storage reads are answered (nothing stored).
fn drain(
    engine: &mut Engine,
    open: &mut Vec<Open>,
    aborted: &mut Vec<RequestId>,
    follow_ups: &mut Vec<Input>,
) {
    while let Some(intent) = engine.poll_intent() {
        match intent {
            Intent::Http { id, request, .. } => {
                assert!(
                    request.path.starts_with('/'),
                    "a request path {:?} outside the endpoint table",
                    request.path
                );
                open.push(Open { id, request });
            }
            Intent::Abort { id } => {
                open.retain(|o| o.id != id);
                aborted.push(id);
            }
            Intent::Storage(StorageRequest::Load { key }) => {
                follow_ups.push(Input::StoredSessionsLoaded {
                    key,
                    sessions: None,
                });
            }
            Intent::Storage(StorageRequest::LoadQueue { key }) => {
                follow_ups.push(Input::StoredQueueLoaded { key, rows: None });
            }
            Intent::Storage(_) => {}
        }
    }
    while engine.poll_event().is_some() {}
}

/// A host input the input chooses.
fn host_input(choices: &mut Choices<'_>, texts: &mut u32) -> Input {
    let session = |n: usize| format!("s-{}", n % 3 + 1);
    match choices.below(14) {
        0 => Input::Person(Person::new(fixtures::USER.to_owned(), Secret::new("tok"))),
        1 => Input::EnvironmentUid(match choices.below(3) {
            0 => Some(fixtures::ENV.to_owned()),
            1 => Some(fixtures::ENV2.to_owned()),
            _ => None,
        }),
        2 => Input::IsVisible(choices.flag()),
        3 => Input::PageVisible(choices.flag()),
        4 => Input::RequestedSessionId(if choices.flag() {
            Some(session(choices.below(3)))
        } else {
            None
        }),
        5 => Input::DefaultSession(Some(DefaultSession {
            agent_uid: Some(fixtures::AGENT.to_owned()),
            handle_unique_id: "handle-1".to_owned(),
            name: "Default".to_owned(),
            status: SourceStatus::Ready,
            unavailable_message: None,
        })),
        6 | 7 => {
            *texts += 1;
            Input::Command(Command::SendMessage {
                text: format!("text {texts}"),
            })
        }
        8 => {
            *texts += 1;
            Input::Command(Command::EnqueueMessage {
                text: format!("queued {texts}"),
            })
        }
        9 => Input::Command(Command::CancelActiveSession),
        10 => Input::Command(Command::RefreshSessionDetail),
        11 => Input::Command(Command::RefreshActiveSessionRuntimeAccess),
        12 => Input::Command(Command::CreateAgentSession),
        _ => Input::ShowsDefaultSession(choices.flag()),
    }
}

fn head(status: u16) -> ResponseHead {
    ResponseHead::new(status, Some("application/json".to_owned()))
}

/// The uid in `/api/v1/agent-sessions/{uid}/...`, if any.
fn session_of(path: &str) -> String {
    path.strip_prefix("/api/v1/agent-sessions/")
        .and_then(|rest| rest.split('/').next())
        .filter(|uid| !uid.is_empty())
        .unwrap_or("s-1")
        .to_owned()
}

/// What a well-behaved platform or Agent answers to `request`.
fn well_formed(request: &HttpRequest, choices: &mut Choices<'_>) -> (u16, Vec<u8>) {
    let path = request.path.as_str();
    let uid = session_of(path);
    let env = if choices.below(8) == 0 {
        fixtures::ENV2
    } else {
        fixtures::ENV
    };
    let json = |value: serde_json::Value| value.to_string().into_bytes();
    match (request.method, path) {
        (Method::Post, p) if p.ends_with("/api/chat") => {
            let text = format!("answer {}", choices.below(100));
            (200, fixtures::answer("m-answer", &text))
        }
        (Method::Get, p) if p.ends_with("/api/chat") => (200, json(json!({"status": "ready"}))),
        (_, p) if p.ends_with("/api/chat/session/cancel") => (200, json(json!({"ok": true}))),
        (_, p) if p.ends_with("/history/") => (200, json(fixtures::history(&uid))),
        (_, p) if p.ends_with("/insights/") => (200, json(fixtures::insights(&uid))),
        (_, p) if p.ends_with("/resolve-runtime-access/") => match choices.below(8) {
            0 => (
                200,
                json(fixtures::runtime_transient(
                    "waking",
                    Some(i64::from(choices.u16())),
                )),
            ),
            1 => (200, json(fixtures::runtime_terminal(Some("ref-1")))),
            _ => (200, json(fixtures::runtime_ready(&uid))),
        },
        (_, p) if p.starts_with("/api/v1/model-providers") => (200, json(fixtures::catalog())),
        (_, "/api/v1/agent-sessions/") => {
            let rows: Vec<_> = (0..choices.below(4))
                .map(|n| fixtures::record(&format!("s-{}", n + 1), fixtures::AGENT, env, 1))
                .collect();
            (200, json(fixtures::page(&rows)))
        }
        (_, p) if p.contains("start-new-session") || p.contains("get-or-create-session") => {
            if choices.below(4) == 0 {
                (400, json(fixtures::model_required()))
            } else {
                let uid = format!("s-{}", choices.below(3) + 1);
                (201, json(fixtures::record(&uid, fixtures::AGENT, env, 2)))
            }
        }
        (Method::Delete, _) => (204, Vec::new()),
        (_, p) if p.ends_with("/archive/") || p.ends_with("/unarchive/") => {
            (200, json(fixtures::record(&uid, fixtures::AGENT, env, 3)))
        }
        (_, p) if p.starts_with("/api/v1/agent-sessions/") => {
            (200, json(fixtures::record(&uid, fixtures::AGENT, env, 1)))
        }
        _ => (404, json(json!({"detail": "Not found."}))),
    }
}

/// Answers `request`: well-formed seven times in eight; else another status, a cut or
/// corrupted body, or the input's own bytes; the body in one to three pieces, one time in 32
/// left unended.
fn answer(
    engine: &mut Engine,
    choices: &mut Choices<'_>,
    id: RequestId,
    request: &HttpRequest,
    now: Time,
) {
    let (mut status, mut body) = well_formed(request, choices);
    // One answer in eight is bad: another status, cut, corrupted, or the input's own bytes.
    match choices.below(32) {
        0 => status = [400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504][choices.below(11)],
        1 => {
            let keep = choices.below(body.len().max(1));
            body.truncate(keep);
        }
        2 => {
            let at = choices.below(body.len().max(1));
            if let Some(byte) = body.get_mut(at) {
                *byte ^= choices.byte() | 1;
            }
        }
        3 => body = choices.bytes(255).to_vec(),
        _ => {}
    }
    engine.handle_response(id, head(status), now);
    let pieces = 1 + choices.below(3);
    let size = body.len().div_ceil(pieces).max(1);
    for piece in body.chunks(size) {
        engine.handle_body_chunk(id, Bytes::copy_from_slice(piece), now);
    }
    if choices.below(32) != 0 {
        engine.handle_body_end(id, now);
    }
}
