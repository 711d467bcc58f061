//! The engine's side of I/O: the request-id counter, the in-flight table, answer buffering, and
//! the intent and event queues. Machines reach it through their context
//! ([`crate::concerns::ctx::Ctx`]). It knows requests, not what they are for.

use litemap::LiteMap;
use std::collections::VecDeque;

use crate::time::Time;

use bytes::{Bytes, BytesMut};

use crate::api::ApiError;
use crate::api::chat::{RuntimeCall, refused_text};
use crate::event::Event;
use crate::http::CallLine;
use crate::intent::{ApiCall, Auth, Credential, Intent, Limits, Policy, RequestId};
use crate::response::{ResponseHead, TransportFailure};
use crate::rng::Rng;
use crate::source::LocalSource;

/// Which machine a request belongs to; answers are routed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    LatestSessions,
    DefaultSession,
    Opening,
    Hydration,
    Archive,
    RuntimeAccess,
    /// A turn of the send machine (its resolve, confirmation and message request).
    Send,
    /// A run cancel (its access resolution and the cancel request).
    Cancel,
    /// The model-provider catalog store.
    Catalog,
    /// A creation retried with a chosen model (MOD).
    ModelChoice,
    /// A picker's model change (PATCH).
    Picker,
    /// `unarchiveAgentSession(uid)`.
    Unarchive,
    /// The session explorer's archived list.
    ArchivedSessions,
    /// The session explorer's search.
    SessionSearch,
    /// The Agent icon projection and icon bytes (P13, P14).
    Icons,
    /// A local runtime's admission checks (ADR 099).
    LocalAdmission,
    /// A local runtime's conversation list.
    LocalSessions,
    /// The shown local conversation's transcript.
    LocalHistory,
    /// A local runtime's model catalog, and the model it holds for the conversation shown.
    LocalModels,
}

/// A platform call while a local source is set (ADR 099): refused before any request exists.
pub(crate) const LOCAL_SOURCE_TEXT: &str = "A local Agent source makes no platform request.";

/// Bodies never show in `Debug`: a runtime-access answer carries the runtime token.
struct Pending {
    owner: Owner,
    call: ApiCall,
    head: Option<ResponseHead>,
    body: BytesMut,
    /// A streamed answer whose 2xx head arrived: its chunks go to the owner as they come.
    streaming: bool,
    /// Bytes of a streamed answer so far (capped by `max_answer_bytes`).
    streamed: usize,
    /// The request's method and full address as the engine built it (before any rewrite by the
    /// host), for the text of a refused runtime request (RU-19). Boxed: an [`Answer`] carries it
    /// on, and [`Delivery`] stays small.
    line: Box<CallLine>,
}

/// What an answer part means for its owner.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// The request is over.
    Finished(Answer),
    /// A piece of a streamed 2xx answer; the request goes on until `End` or `Failed`.
    Stream(StreamPiece),
}

/// A piece of a streamed answer.
#[derive(Debug)]
pub(crate) struct StreamPiece {
    pub id: RequestId,
    pub owner: Owner,
    pub kind: PieceKind,
}

/// Which piece.
#[derive(Debug)]
pub(crate) enum PieceKind {
    /// The 2xx head: the answer streams from here.
    Head,
    /// Body bytes, in any slicing.
    Chunk(Bytes),
    /// The body ended.
    End,
    /// The body broke off, or grew past the limit.
    Failed(ApiError),
}

/// A finished request, ready for its owner.
#[derive(Debug)]
pub(crate) struct Answer {
    pub id: RequestId,
    pub owner: Owner,
    pub call: ApiCall,
    pub outcome: Outcome,
    /// `Content-Type` of the answer, when it had a head that gave one.
    pub content_type: Option<String>,
    /// `ETag` of the answer, when it had a head that gave one.
    pub etag: Option<String>,
    /// The request's method and address, and the answer's reason phrase.
    pub line: Box<CallLine>,
}

impl Answer {
    /// The 2xx body, or the typed error for anything else; a refusal's text is RU-19's full
    /// one, naming the request.
    pub(crate) fn ok_body(&self) -> Result<&[u8], ApiError> {
        self.outcome.ok_body(&self.call).map_err(|e| {
            // RU-19 pins P2's operation and its fallback message.
            let (operation_text, fallback) = match (&self.call, e.status()) {
                (ApiCall::GetSessionDetail { session_uid, .. }, Some(status)) => (
                    Some(format!(
                        "Agent session detail request failed for session {session_uid}"
                    )),
                    Some(format!("Session detail failed with status {status}.")),
                ),
                _ => (None, None),
            };
            e.with_call(crate::api::FailedCall {
                operation_text,
                fallback,
                method: self.line.method.as_str(),
                url: self.line.url.clone(),
                reason: self.line.reason.clone(),
            })
        })
    }

    /// RU-19's text of this answer refused with `status` ([`crate::api::chat::refused_text`]).
    pub(crate) fn refused_text(&self, call: RuntimeCall, status: u16, body: &[u8]) -> String {
        refused_text(call, &self.line, self.content_type.as_deref(), status, body)
    }
}

/// How a request ended.
pub(crate) enum Outcome {
    /// An HTTP answer with its whole body.
    Http { status: u16, body: Bytes },
    /// No answer, a broken answer, or an oversized body.
    Failed(ApiError),
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("owner", &self.owner)
            .field("call", &self.call)
            .field("head", &self.head)
            .field("body_bytes", &self.body.len())
            .field("streaming", &self.streaming)
            .field("line", &self.line)
            .finish()
    }
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Http { status, body } => f
                .debug_struct("Http")
                .field("status", status)
                .field("body_bytes", &body.len())
                .finish(),
            Outcome::Failed(e) => f.debug_tuple("Failed").field(e).finish(),
        }
    }
}

impl Outcome {
    /// A local runtime's answer (ADR 099): its status and body, or the text of a request that
    /// got none ("{operation}: the local Agent did not answer.").
    pub(crate) fn local(
        &self,
        route: &crate::api::local::LocalRoute,
    ) -> Result<(u16, &[u8]), String> {
        match self {
            Outcome::Http { status, body } => Ok((*status, body.as_ref())),
            Outcome::Failed(_) => Err(crate::api::local::local_failure_text(route, None, b"")),
        }
    }

    /// 2xx body, or the typed error for anything else.
    pub(crate) fn ok_body(&self, call: &ApiCall) -> Result<&[u8], ApiError> {
        match self {
            Outcome::Http { status, body } if (200..300).contains(status) => Ok(body),
            Outcome::Http { status, body } => Err(ApiError::http(call.operation(), *status, body)),
            Outcome::Failed(e) => Err(e.clone()),
        }
    }
}

/// Everything machines may touch besides their own state.
#[derive(Debug)]
pub(crate) struct Io {
    pub base: String,
    pub max_body_bytes: usize,
    /// The cap on one streamed answer.
    pub max_answer_bytes: usize,
    /// The cap on one ui-message-stream event.
    pub max_event_bytes: usize,
    /// `Config::platform_sender`: platform requests go without the person's credential.
    platform_sender: bool,
    pub rng: Rng,
    next_id: u64,
    /// A sorted vector (few entries; a `BTreeMap` node holds room for 11), boxed: spare
    /// capacity holds a pointer, not a request.
    in_flight: LiteMap<RequestId, Box<Pending>>,
    pub outbox: VecDeque<Intent>,
    pub events: VecDeque<Event>,
    /// Answer parts dropped because their request was not in flight, or repeated a head.
    pub ignored_answers: u64,
    /// The engine's time origin and the wall-clock reading (Unix ms) it stands for (OI-32).
    clock_origin: (Time, u64),
    /// Machine transitions that changed a state, counted by every machine's `after_transition`.
    pub transitions: u64,
}

/// Gives an emptied queue's room back (issue 12: a ready engine kept 3.6 KB of empty intent and
/// signal queues). Not for the event queue, which refills with every streamed piece.
pub(crate) fn release_if_empty<T>(queue: &mut VecDeque<T>) {
    if queue.is_empty() && queue.capacity() > 0 {
        *queue = VecDeque::new();
    }
}

impl Io {
    /// Wall-clock Unix milliseconds at `now`, for absolute values (OI-32).
    pub(crate) fn wall_ms(&self, now: Time) -> u64 {
        let (origin, unix_ms) = self.clock_origin;
        let elapsed =
            u64::try_from(now.saturating_duration_since(origin).as_millis()).unwrap_or(u64::MAX);
        unix_ms.saturating_add(elapsed)
    }

    /// The body caps every call's [`Policy`] is made of.
    fn limits(&self) -> Limits {
        Limits {
            body: self.max_body_bytes,
            answer: self.max_answer_bytes,
        }
    }

    pub(crate) fn new(config: &crate::config::Config, origin: Time) -> Io {
        let (base, max_body_bytes, seed) = (
            config.platform_base_url.clone(),
            config.max_body_bytes,
            config.seed,
        );
        Io {
            base,
            max_body_bytes,
            max_answer_bytes: config.max_answer_bytes,
            max_event_bytes: config.max_event_bytes,
            platform_sender: config.platform_sender,
            rng: Rng::new(seed),
            next_id: 0,
            in_flight: LiteMap::new(),
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            ignored_answers: 0,
            clock_origin: (origin, config.start_unix_ms),
            transitions: 0,
        }
    }

    /// Issues a platform call, with the person's credential when there is one (and no host
    /// sender carries platform requests, RU-47). Fails, with
    /// nothing emitted, when there is a local source (ADR 099: the engine then makes no platform
    /// request at all) or the call cannot be rendered.
    pub(crate) fn send(
        &mut self,
        local: bool,
        credential: Option<Credential<'_>>,
        owner: Owner,
        call: ApiCall,
    ) -> Result<RequestId, ApiError> {
        if local {
            return Err(ApiError::Refused {
                message: LOCAL_SOURCE_TEXT.to_owned(),
            });
        }
        let credential = credential.filter(|_| !self.platform_sender);
        let request = call
            .render(&self.base, Auth::Platform(credential))
            .map_err(|e| ApiError::Refused {
                message: e.to_string(),
            })?;
        Ok(self.issue(owner, call, request))
    }

    fn issue(
        &mut self,
        owner: Owner,
        call: ApiCall,
        request: crate::http::HttpRequest,
    ) -> RequestId {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        let line = Box::new(CallLine {
            method: request.method,
            url: request.url(),
            reason: None,
        });
        self.in_flight.insert(
            id,
            Box::new(Pending {
                owner,
                call: call.clone(),
                head: None,
                body: BytesMut::new(),
                streaming: false,
                streamed: 0,
                line,
            }),
        );
        self.outbox.push_back(Intent::Http { id, call, request });
        id
    }

    /// Issues a request to the local runtime (ADR 099): no credential of any kind. Refused
    /// when no local source is set.
    pub(crate) fn send_local(
        &mut self,
        source: Option<&LocalSource>,
        owner: Owner,
        call: ApiCall,
    ) -> Result<RequestId, ApiError> {
        let refused = |message: String| ApiError::Refused { message };
        let (Some(source), ApiCall::Local { route }) = (source, &call) else {
            return Err(refused("No local Agent source is set.".to_owned()));
        };
        let request = route
            .render(source, &self.base)
            .map_err(|e| refused(e.to_string()))?;
        Ok(self.issue(owner, call, request))
    }

    /// Issues a request to an Agent runtime with its runtime token (never the person's
    /// credential), marked root-relative ([`crate::HttpRequest::root_relative`]) as told.
    pub(crate) fn send_runtime(
        &mut self,
        owner: Owner,
        call: ApiCall,
        token: &str,
        root_relative: bool,
    ) -> Result<RequestId, ApiError> {
        let mut request = call
            .render(&self.base, Auth::Runtime { token })
            .map_err(|e| ApiError::Refused {
                message: e.to_string(),
            })?;
        request.root_relative = root_relative;
        Ok(self.issue(owner, call, request))
    }

    /// The head of a request still in flight, once it came.
    pub(crate) fn head_of(&self, id: RequestId) -> Option<&ResponseHead> {
        self.in_flight.get(&id).and_then(|p| p.head.as_ref())
    }

    /// Aborts a request if it is still in flight; a no-op otherwise.
    pub(crate) fn abort(&mut self, id: RequestId) {
        if self.in_flight.remove(&id).is_some() {
            self.outbox.push_back(Intent::Abort { id });
        }
    }

    /// Stores the head. A request whose answer is its status alone (the Agent confirmation,
    /// RTA-16) is finished at once, and the rest of its body is dropped (an abort intent).
    pub(crate) fn on_head(&mut self, id: RequestId, head: ResponseHead) -> Option<Delivery> {
        let limits = self.limits();
        match self.in_flight.get_mut(&id) {
            Some(p) if p.head.is_none() => {
                let policy = p.call.policy(limits);
                let status_only = policy == Policy::StatusOnly;
                let streams = matches!(policy, Policy::StreamOn2xx { .. })
                    && (200..300).contains(&head.status);
                p.head = Some(head);
                if status_only {
                    self.outbox.push_back(Intent::Abort { id });
                    return self.finish(id, Ok(())).map(Delivery::Finished);
                }
                if streams {
                    p.streaming = true;
                    let owner = p.owner;
                    return Some(Delivery::Stream(StreamPiece {
                        id,
                        owner,
                        kind: PieceKind::Head,
                    }));
                }
                None
            }
            _ => {
                self.ignored_answers += 1;
                None
            }
        }
    }

    /// Buffers a chunk; an oversized body finishes the request as failed.
    pub(crate) fn on_chunk(&mut self, id: RequestId, chunk: &Bytes) -> Option<Delivery> {
        let limits = self.limits();
        let Some(p) = self.in_flight.get_mut(&id) else {
            self.ignored_answers += 1;
            return None;
        };
        let (limit, answer_limit) = match p.call.policy(limits) {
            Policy::Buffered { cap } => (cap, limits.answer),
            Policy::StatusOnly => (limits.body, limits.answer),
            Policy::StreamOn2xx { cap, error_cap } => (error_cap, cap),
        };
        if p.head.is_none() {
            // A chunk before the head is a shell bug; treat the body as broken.
            return self
                .finish(
                    id,
                    Err(ApiError::Transport {
                        message: "Body before response head.".into(),
                    }),
                )
                .map(Delivery::Finished);
        }
        if p.streaming {
            p.streamed = p.streamed.saturating_add(chunk.len());
            let owner = p.owner;
            if p.streamed > answer_limit {
                self.in_flight.remove(&id);
                self.outbox.push_back(Intent::Abort { id });
                let kind = PieceKind::Failed(ApiError::BodyTooLarge {
                    limit: answer_limit,
                });
                return Some(Delivery::Stream(StreamPiece { id, owner, kind }));
            }
            let kind = PieceKind::Chunk(chunk.clone());
            return Some(Delivery::Stream(StreamPiece { id, owner, kind }));
        }
        if p.body.len().saturating_add(chunk.len()) > limit {
            self.outbox.push_back(Intent::Abort { id });
            if self.error_head(id) {
                // An oversized error body: the answer is its status and what fits.
                return self.finish(id, Ok(())).map(Delivery::Finished);
            }
            return self
                .finish(id, Err(ApiError::BodyTooLarge { limit }))
                .map(Delivery::Finished);
        }
        p.body.extend_from_slice(chunk);
        None
    }

    /// Ends a streamed answer (removing it from the table); `None` for buffered requests.
    fn stream_over(&mut self, id: RequestId, kind: PieceKind) -> Result<Delivery, PieceKind> {
        match self.in_flight.get(&id) {
            Some(p) if p.streaming => {
                let owner = p.owner;
                self.in_flight.remove(&id);
                Ok(Delivery::Stream(StreamPiece { id, owner, kind }))
            }
            _ => Err(kind),
        }
    }

    pub(crate) fn on_end(&mut self, id: RequestId) -> Option<Delivery> {
        if let Ok(d) = self.stream_over(id, PieceKind::End) {
            return Some(d);
        }
        self.on_buffered_end(id).map(Delivery::Finished)
    }

    fn on_buffered_end(&mut self, id: RequestId) -> Option<Answer> {
        match self.in_flight.get(&id).map(|p| p.head.clone()) {
            None => {
                self.ignored_answers += 1;
                None
            }
            Some(None) => self.finish(
                id,
                Err(ApiError::Transport {
                    message: "The answer ended before its head.".into(),
                }),
            ),
            Some(Some(_)) => self.finish(id, Ok(())),
        }
    }

    pub(crate) fn on_failure(
        &mut self,
        id: RequestId,
        failure: &TransportFailure,
    ) -> Option<Delivery> {
        if !self.in_flight.contains_key(&id) {
            self.ignored_answers += 1;
            return None;
        }
        let error = ApiError::Transport {
            message: failure.message.clone(),
        };
        match self.stream_over(id, PieceKind::Failed(error.clone())) {
            Ok(d) => Some(d),
            // An error answer whose body broke off is still that answer (its status is known):
            // a refused message request was answered, not lost (SND-14, SND-23).
            Err(_) if self.error_head(id) => self.finish(id, Ok(())).map(Delivery::Finished),
            Err(_) => self.finish(id, Err(error)).map(Delivery::Finished),
        }
    }

    /// The request has a non-2xx head.
    fn error_head(&self, id: RequestId) -> bool {
        self.in_flight
            .get(&id)
            .and_then(|p| p.head.as_ref())
            .is_some_and(|h| !(200..300).contains(&h.status))
    }

    fn finish(&mut self, id: RequestId, result: Result<(), ApiError>) -> Option<Answer> {
        let p = self.in_flight.remove(&id)?;
        let content_type = p.head.as_ref().and_then(|h| h.content_type.clone());
        // A blank ETag (a head given as JSON skips `with_etag`) is none.
        let etag = p
            .head
            .as_ref()
            .and_then(|h| h.etag.clone())
            .filter(|e| !e.trim().is_empty());
        let mut line = p.line;
        line.reason = p.head.as_ref().and_then(|h| h.reason.clone());
        let outcome = match (result, p.head) {
            (Ok(()), Some(head)) => Outcome::Http {
                status: head.status,
                body: p.body.freeze(),
            },
            (Err(e), _) => Outcome::Failed(e),
            (Ok(()), None) => Outcome::Failed(ApiError::Transport {
                message: "No response head.".into(),
            }),
        };
        Some(Answer {
            id,
            owner: p.owner,
            call: p.call,
            outcome,
            content_type,
            etag,
            line,
        })
    }
}
