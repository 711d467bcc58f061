//! Whether a message can be sent now, for a C host: the snapshot's `sendReadiness` as views
//! ([`ae_send_readiness`]) or as JSON ([`ae_send_readiness_json`]), read again only when the
//! engine changed.

use engine_core::{Revisions, SendReadiness};

use crate::{AE_OK, AeBuf, AeEngine, AeStr, Failure, owned, to_json, view, with_engine};

/// [`AeReadiness::state`]: a message can be sent now.
pub const AE_SEND_READY: u32 = 0;
/// [`AeReadiness::state`]: not yet; the engine is getting there by itself (keep driving it).
pub const AE_SEND_WAITING: u32 = 1;
/// [`AeReadiness::state`]: not without something changing (a failure, or an input the host
/// has not given); `code`, `message` and `status` say why.
pub const AE_SEND_BLOCKED: u32 = 2;

/// Whether a message can be sent now ([`ae_send_readiness`]), as views: the snapshot's
/// `sendReadiness` without its JSON.
#[repr(C)]
#[derive(Debug)]
pub struct AeReadiness {
    /// `AE_SEND_READY`, `AE_SEND_WAITING` or `AE_SEND_BLOCKED`.
    pub state: u32,
    /// Blocked: the cause's code (`sessions_failed`, `default_session_failed`, `not_visible`,
    /// ...); waiting: what the engine waits for (`sessions`, `default_session`, ...); ready:
    /// empty.
    pub code: AeStr,
    /// Blocked: the cause's text to show (the engine's text for the failure); waiting: a short
    /// status line ("Loading the sessions..."); ready: empty.
    pub message: AeStr,
    /// Blocked by a platform read the server refused: its HTTP status (401, 404, ...); else 0.
    pub status: u16,
    /// Blocked by a failing platform read: that read's own text ("Session get-or-create failed.
    /// Status: HTTP 401 Unauthorized. Call: POST {url}. Server response: Invalid token.", or the
    /// transport's message such as
    /// "Connection refused"); else empty.
    pub failure: AeStr,
}

/// `sendReadiness` as [`ae_send_readiness`] last read it.
pub(crate) struct Readiness {
    /// The engine's revisions then: while they stay, so does `sendReadiness` (SHR-1).
    seen: Revisions,
    value: SendReadiness,
    /// A waiting engine's `waitingFor` (its serde name).
    waiting_for: String,
    /// A blocked engine's failing read, as text.
    failure: String,
    json: Vec<u8>,
}

/// Whether a message can be sent now, into `*out` (always [`AE_OK`] on success): ready,
/// waiting (for what) or blocked (the cause's code and text, the failing read's own text and,
/// when the server refused it, its HTTP status). The snapshot's `sendReadiness` with no JSON to
/// read; a second call before the engine changed costs no more than a comparison. The views
/// last until the next `ae_send_readiness` or [`ae_send_readiness_json`].
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_send_readiness(engine: *mut AeEngine, out: *mut AeReadiness) -> i32 {
    with_engine(engine, |e| {
        let out = crate::out(out, "The readiness")?;
        let r = e.read_readiness()?;
        *out = match &r.value {
            SendReadiness::Ready => AeReadiness {
                state: AE_SEND_READY,
                code: view(&[]),
                message: view(&[]),
                status: 0,
                failure: view(&[]),
            },
            SendReadiness::Waiting { waiting_for } => AeReadiness {
                state: AE_SEND_WAITING,
                code: view(r.waiting_for.as_bytes()),
                message: view(waiting_for.text().as_bytes()),
                status: 0,
                failure: view(&[]),
            },
            SendReadiness::Blocked(cause) => AeReadiness {
                state: AE_SEND_BLOCKED,
                code: view(cause.code.as_str().as_bytes()),
                message: view(cause.message.as_bytes()),
                status: cause.status().unwrap_or(0),
                failure: view(r.failure.as_bytes()),
            },
            _ => AeReadiness {
                state: AE_SEND_WAITING,
                code: view(r.waiting_for.as_bytes()),
                message: view(&[]),
                status: 0,
                failure: view(&[]),
            },
        };
        Ok(AE_OK)
    })
}

/// The snapshot's `sendReadiness` as JSON, into `*out`: `{"state": "ready"}`, `{"state":
/// "waiting", "waitingFor": "sessions"}`, or `{"state": "blocked", "code": "sessions_failed",
/// "message": "...", "failure": {"kind": "http", "operation": "session_list", "status": 401,
/// "server_message": "..."}, "noticeCode": null}` (`failure` is the failing read: its
/// operation, status and the server's message, or `{"kind": "transport", "message": "..."}`).
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_send_readiness_json(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = crate::out(out, "The out buffer")?;
        *out = owned(e.read_readiness()?.json.clone());
        Ok(AE_OK)
    })
}

impl AeEngine {
    /// `sendReadiness`, read again only when the engine's revisions moved since the last read.
    fn read_readiness(&mut self) -> Result<&Readiness, Failure> {
        let now = self.engine.revisions();
        let readiness = match self.readiness.take() {
            Some(r) if r.seen == now => r,
            _ => {
                let value = self.engine.snapshot().send_readiness;
                let waiting_for = match &value {
                    SendReadiness::Waiting { waiting_for } => serde_json::to_value(waiting_for)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let failure = match &value {
                    SendReadiness::Blocked(cause) => {
                        cause.failure.as_ref().map(ToString::to_string)
                    }
                    _ => None,
                };
                Readiness {
                    seen: now,
                    json: to_json(&value)?,
                    value,
                    waiting_for,
                    failure: failure.unwrap_or_default(),
                }
            }
        };
        Ok(self.readiness.insert(readiness))
    }
}
