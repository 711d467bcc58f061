//! The engine in a loop of your own, against a real HTTP platform: platform-sim on loopback.
//! It opens the demo Agent's default session, waits for `sendReadiness` (or prints the cause),
//! sends one message and prints its answer as it streams. The loop is single-threaded: it
//! carries the requests out one at a time with a small blocking HTTP client, answers the
//! storage port's reads with "nothing stored", and sleeps until `poll_timeout` when idle.
//!
//! Run: `cargo run -p engine-core --example own_loop`

// The host owns the clock: `Instant` is kept out of the core only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::VecDeque;
use std::error::Error;
use std::io::Write;
use std::time::Instant;

use engine_core::stream::StreamDelta;
use engine_core::{
    Command, Config, DefaultSession, Engine, Event, HttpRequest, Input, InstantClock, Intent,
    Person, RequestId, ResponseHead, Secret, SendReadiness, StorageRequest, TransportFailure,
};
use platform_sim::{BlockingSim, DEFAULT_AGENT_UID, DEFAULT_PLATFORM_TOKEN, SimConfig};

fn main() -> Result<(), Box<dyn Error>> {
    let sim = BlockingSim::start(SimConfig::default())?;
    let http = Http::new()?;
    let clock = InstantClock::new(Instant::now());
    let now = || clock.time(Instant::now());
    let mut engine = Engine::new(Config::new(&sim.url())?, now());
    let default_session = DefaultSession {
        agent_uid: Some(DEFAULT_AGENT_UID.into()),
        handle_unique_id: "own-loop".into(),
        name: "Own loop".into(),
        ..DefaultSession::default()
    };
    let person = Person::new("user-demo", Secret::new(DEFAULT_PLATFORM_TOKEN));
    let inputs = [
        Input::Person(person),
        Input::EnvironmentUid(Some("env-demo".into())),
        Input::DefaultSession(Some(default_session)),
        Input::ShowsDefaultSession(true),
        Input::IsVisible(true),
    ];
    for input in inputs {
        engine.handle_input(input, now());
    }
    let mut requests = VecDeque::new();
    let mut sent = false;
    loop {
        // The drive contract: drain after every handle_* call.
        if drain(&mut engine, &mut requests, now())? {
            println!();
            return Ok(());
        }
        if !sent {
            match engine.snapshot().send_readiness {
                SendReadiness::Ready => {
                    let send = Command::SendMessage {
                        text: "Hello".into(),
                    };
                    engine.handle_input(Input::Command(send), now());
                    sent = true;
                    continue;
                }
                SendReadiness::Blocked(cause) => return Err(cause.into()),
                _ => {}
            }
        }
        if let Some((id, request)) = requests.pop_front() {
            // Each piece of the answer is fed, then drained: the text prints as it streams.
            let mut ended = false;
            let mut feed = |engine: &mut Engine, piece: Piece| -> Result<(), Box<dyn Error>> {
                match piece {
                    Piece::Head(head) => engine.handle_response(id, head, now()),
                    Piece::Body(bytes) => engine.handle_body_chunk(id, bytes, now()),
                    Piece::End => engine.handle_body_end(id, now()),
                    Piece::Failed(failure) => engine.handle_failure(id, failure, now()),
                }
                ended |= drain(engine, &mut requests, now())?;
                Ok(())
            };
            http.exchange(&mut engine, &request, &mut feed)?;
            if ended {
                println!();
                return Ok(());
            }
        } else if let Some(deadline) = engine.poll_timeout() {
            std::thread::sleep(
                clock
                    .instant(deadline)
                    .saturating_duration_since(Instant::now()),
            );
            engine.handle_timeout(now());
        } else {
            return Err("nothing left to wait for".into());
        }
    }
}

/// Takes every intent and event: requests are queued, aborted ones dropped, storage reads
/// answered with nothing stored; the answer's text is printed. True once the answer ended.
fn drain(
    engine: &mut Engine,
    requests: &mut VecDeque<(RequestId, HttpRequest)>,
    now: engine_core::Time,
) -> Result<bool, Box<dyn Error>> {
    let mut answers = Vec::new();
    while let Some(intent) = engine.poll_intent() {
        match intent {
            Intent::Http { id, request, .. } => requests.push_back((id, request)),
            Intent::Abort { id } => requests.retain(|(queued, _)| *queued != id),
            Intent::Storage(StorageRequest::Load { key }) => {
                answers.push(Input::StoredSessionsLoaded {
                    key,
                    sessions: None,
                });
            }
            Intent::Storage(StorageRequest::LoadQueue { key }) => {
                answers.push(Input::StoredQueueLoaded { key, rows: None });
            }
            Intent::Storage(StorageRequest::LoadSelection { key }) => {
                answers.push(Input::StoredSelectionLoaded {
                    key,
                    session_uid: None,
                });
            }
            Intent::Storage(_) => {} // writes: this host keeps nothing
        }
    }
    let mut ended = false;
    while let Some(event) = engine.poll_event() {
        match event {
            Event::Answer {
                delta: StreamDelta::TextDelta { delta, .. },
                ..
            } => {
                print!("{delta}");
                std::io::stdout().flush()?;
            }
            Event::Answer {
                delta: StreamDelta::Ended { .. },
                ..
            } => ended = true,
            Event::RunFailed { failure, .. } => return Err(failure.message.into()),
            _ => {}
        }
    }
    for answer in answers {
        engine.handle_input(answer, now);
        ended |= drain(engine, requests, now)?;
    }
    Ok(ended)
}

/// One step of an answer, as the engine takes it.
enum Piece {
    Head(ResponseHead),
    Body(bytes::Bytes),
    End,
    Failed(TransportFailure),
}

/// What is done with each [`Piece`] of an answer.
type Feed<'a> = dyn FnMut(&mut Engine, Piece) -> Result<(), Box<dyn Error>> + 'a;

/// A small blocking HTTP client: reqwest on a current-thread tokio runtime of its own.
struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    fn new() -> Result<Http, Box<dyn Error>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
        Ok(Http {
            runtime,
            client: client.build()?,
        })
    }

    /// Carries `request` out and hands each piece of its answer to `feed` as it arrives: the
    /// head, the body's pieces, the end; or the failure (before the head: no answer). A late
    /// answer to a request the engine aborted meanwhile is ignored by the engine.
    fn exchange(
        &self,
        engine: &mut Engine,
        request: &HttpRequest,
        feed: &mut Feed<'_>,
    ) -> Result<(), Box<dyn Error>> {
        let method = reqwest::Method::from_bytes(request.method.as_str().as_bytes())?;
        let mut builder = self.client.request(method, request.url());
        for header in &request.headers {
            builder = builder.header(header.name(), header.value());
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let mut response = match self.runtime.block_on(builder.send()) {
            Ok(response) => response,
            Err(e) => {
                return feed(
                    engine,
                    Piece::Failed(TransportFailure::no_answer(e.to_string())),
                );
            }
        };
        let header = |name: &str| {
            let value = response.headers().get(name)?.to_str().ok()?;
            Some(value.to_owned())
        };
        let head = ResponseHead::new(response.status().as_u16(), header("content-type"))
            .with_agent_session_uid(header("x-agent-session-uid"));
        feed(engine, Piece::Head(head))?;
        loop {
            let piece = match self.runtime.block_on(response.chunk()) {
                Ok(Some(bytes)) => Piece::Body(bytes),
                Ok(None) => return feed(engine, Piece::End),
                Err(e) => {
                    return feed(
                        engine,
                        Piece::Failed(TransportFailure::broken(e.to_string())),
                    );
                }
            };
            feed(engine, piece)?;
        }
    }
}
