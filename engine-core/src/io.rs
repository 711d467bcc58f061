//! The engine's side of I/O: the request-id counter, the in-flight table, answer buffering, and
//! the intent and event queues. Machines reach it through [`Ctx`].

use std::collections::{BTreeMap, VecDeque};

use std::time::Instant;

use bytes::{Bytes, BytesMut};

use crate::api::ApiError;
use crate::event::Event;
use crate::inputs::Inputs;
use crate::intent::{ApiCall, Auth, Credential, Intent, RequestId};
use crate::response::{ResponseHead, TransportFailure};
use crate::rng::Rng;

/// Which machine a request belongs to; answers are routed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    LatestSessions,
    DefaultSession,
    Opening,
    Hydration,
    Archive,
    RuntimeAccess,
}

/// Bodies never show in `Debug`: a runtime-access answer carries the runtime token.
struct Pending {
    owner: Owner,
    call: ApiCall,
    head: Option<ResponseHead>,
    body: BytesMut,
}

/// A finished request, ready for its owner.
#[derive(Debug)]
pub(crate) struct Answer {
    pub id: RequestId,
    pub owner: Owner,
    pub call: ApiCall,
    pub outcome: Outcome,
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
    pub rng: Rng,
    next_id: u64,
    in_flight: BTreeMap<RequestId, Pending>,
    pub outbox: VecDeque<Intent>,
    pub signals: VecDeque<crate::machines::Signal>,
    pub events: VecDeque<Event>,
    /// Answer parts dropped because their request was not in flight, or repeated a head.
    pub ignored_answers: u64,
    /// The engine's time origin and the wall-clock reading (Unix ms) it stands for (OI-32).
    clock_origin: (Instant, u64),
}

impl Io {
    /// Wall-clock Unix milliseconds at `now`, for absolute values (OI-32).
    pub(crate) fn wall_ms(&self, now: Instant) -> u64 {
        let (origin, unix_ms) = self.clock_origin;
        let elapsed =
            u64::try_from(now.saturating_duration_since(origin).as_millis()).unwrap_or(u64::MAX);
        unix_ms.saturating_add(elapsed)
    }

    pub(crate) fn new(config: &crate::config::Config, origin: Instant) -> Io {
        let (base, max_body_bytes, seed) = (
            config.platform_base_url.clone(),
            config.max_body_bytes,
            config.seed,
        );
        Io {
            base,
            max_body_bytes,
            rng: Rng::new(seed),
            next_id: 0,
            in_flight: BTreeMap::new(),
            outbox: VecDeque::new(),
            signals: VecDeque::new(),
            events: VecDeque::new(),
            ignored_answers: 0,
            clock_origin: (origin, config.start_unix_ms),
        }
    }

    /// Issues a platform call. Fails, with nothing emitted, when the call cannot be rendered.
    pub(crate) fn send(
        &mut self,
        inputs: &Inputs,
        owner: Owner,
        call: ApiCall,
    ) -> Result<RequestId, ApiError> {
        let credential = inputs.person.token.as_ref().map(|t| Credential {
            token_type: inputs.person.token_type.as_deref().unwrap_or("Bearer"),
            token: t.expose(),
        });
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
        request: crate::intent::HttpRequest,
    ) -> RequestId {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        self.in_flight.insert(
            id,
            Pending {
                owner,
                call: call.clone(),
                head: None,
                body: BytesMut::new(),
            },
        );
        self.outbox.push_back(Intent::Http { id, call, request });
        id
    }

    /// Issues a request to an Agent runtime with its runtime token (never the person's
    /// credential).
    pub(crate) fn send_runtime(
        &mut self,
        owner: Owner,
        call: ApiCall,
        token: &str,
    ) -> Result<RequestId, ApiError> {
        let request = call
            .render(&self.base, Auth::Runtime { token })
            .map_err(|e| ApiError::Refused {
                message: e.to_string(),
            })?;
        Ok(self.issue(owner, call, request))
    }

    /// Aborts a request if it is still in flight; a no-op otherwise.
    pub(crate) fn abort(&mut self, id: RequestId) {
        if self.in_flight.remove(&id).is_some() {
            self.outbox.push_back(Intent::Abort { id });
        }
    }

    /// Stores the head. A request whose answer is its status alone (the Agent confirmation,
    /// RTA-16) is finished at once, and the rest of its body is dropped (an abort intent).
    pub(crate) fn on_head(&mut self, id: RequestId, head: ResponseHead) -> Option<Answer> {
        match self.in_flight.get_mut(&id) {
            Some(p) if p.head.is_none() => {
                let status_only = matches!(p.call, ApiCall::ConfirmAgent { .. });
                p.head = Some(head);
                if status_only {
                    self.outbox.push_back(Intent::Abort { id });
                    return self.finish(id, Ok(()));
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
    pub(crate) fn on_chunk(&mut self, id: RequestId, chunk: &Bytes) -> Option<Answer> {
        let limit = self.max_body_bytes;
        let Some(p) = self.in_flight.get_mut(&id) else {
            self.ignored_answers += 1;
            return None;
        };
        if p.head.is_none() {
            // A chunk before the head is a shell bug; treat the body as broken.
            return self.finish(
                id,
                Err(ApiError::Transport {
                    message: "Body before response head.".into(),
                }),
            );
        }
        if p.body.len().saturating_add(chunk.len()) > limit {
            self.outbox.push_back(Intent::Abort { id });
            return self.finish(id, Err(ApiError::BodyTooLarge { limit }));
        }
        p.body.extend_from_slice(chunk);
        None
    }

    pub(crate) fn on_end(&mut self, id: RequestId) -> Option<Answer> {
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
    ) -> Option<Answer> {
        if !self.in_flight.contains_key(&id) {
            self.ignored_answers += 1;
            return None;
        }
        self.finish(
            id,
            Err(ApiError::Transport {
                message: failure.message.clone(),
            }),
        )
    }

    fn finish(&mut self, id: RequestId, result: Result<(), ApiError>) -> Option<Answer> {
        let p = self.in_flight.remove(&id)?;
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
        })
    }
}

/// The context every machine handler receives.
pub(crate) struct Ctx<'a> {
    /// The time of the input being handled (monotonic).
    pub now: Instant,
    pub inputs: &'a Inputs,
    pub io: &'a mut Io,
}

impl Ctx<'_> {
    pub(crate) fn send(&mut self, owner: Owner, call: ApiCall) -> Result<RequestId, ApiError> {
        self.io.send(self.inputs, owner, call)
    }

    pub(crate) fn emit(&mut self, event: Event) {
        self.io.events.push_back(event);
    }
}
