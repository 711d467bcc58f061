//! Removing and restoring sessions through the engine: `archiveAgentSession`,
//! `deleteAgentSession` and `unarchiveAgentSession` (adr-notes §6). The requests in flight, their
//! answers and failures live here; what the explorer shows after them is the caller's
//! ([`Follow`]).

use litemap::LiteMap;

use crate::concerns::Signal;
use crate::concerns::ctx::Ctx;
use crate::event::{Event, Notice, NoticeVariant};
use crate::http::check_id;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// An archive or delete in flight.
#[derive(Debug, Clone)]
struct Removal {
    session_uid: String,
    archived: bool,
}

/// What the session explorer does after a removal or a restoration succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Follow {
    /// A session was archived (`archived`) or deleted: the search drops it; the archived list
    /// is read again after an archive (as the reference does) and drops a deleted row.
    Removed { session_uid: String, archived: bool },
    /// A session was restored: the archived list is read again.
    Restored,
}

/// The archives, deletes and unarchives in flight, and the last delete failure.
#[derive(Debug, Default)]
pub(crate) struct Removals {
    removals: LiteMap<RequestId, Removal>,
    /// Unarchive requests in flight, by session.
    restorations: LiteMap<RequestId, String>,
    /// A delete failure, shown as `latestSessionsError` (the reference's choice).
    delete_error: Option<String>,
}

impl Removals {
    /// The last delete failure, until a delete succeeds or the scope changes.
    pub(crate) fn delete_error(&self) -> Option<&str> {
        self.delete_error.as_deref()
    }

    /// `archiveAgentSession(uid)` (`archived`) or `deleteAgentSession(uid)`.
    pub(crate) fn remove(&mut self, ctx: &mut Ctx<'_>, session_uid: String, archived: bool) {
        if check_id("session", &session_uid).is_err() {
            let message = "This session has no identifier.".to_owned();
            self.removal_failed(ctx, archived, Some(message));
            return;
        }
        let call = if archived {
            ApiCall::ArchiveSession {
                session_uid: session_uid.clone(),
            }
        } else {
            ApiCall::DeleteSession {
                session_uid: session_uid.clone(),
            }
        };
        match ctx.send(Owner::Archive, call) {
            Ok(id) => {
                let removal = Removal {
                    session_uid,
                    archived,
                };
                self.removals.insert(id, removal);
            }
            Err(e) => self.removal_failed(ctx, archived, Some(e.to_string())),
        }
    }

    /// `unarchiveAgentSession(uid)`.
    pub(crate) fn restore(&mut self, ctx: &mut Ctx<'_>, session_uid: String) {
        if let Err(e) = check_id("session", &session_uid) {
            restore_failed(ctx, Some(e.to_string()));
            return;
        }
        let call = ApiCall::UnarchiveSession {
            session_uid: session_uid.clone(),
        };
        match ctx.send(Owner::Unarchive, call) {
            Ok(id) => {
                self.restorations.insert(id, session_uid);
            }
            Err(e) => restore_failed(ctx, Some(e.to_string())),
        }
    }

    /// An archive or delete answered: on success the session leaves the lists (a signal) and
    /// the explorer follows.
    pub(crate) fn removed(&mut self, ctx: &mut Ctx<'_>, answer: &Answer) -> Option<Follow> {
        let removal = self.removals.remove(&answer.id)?;
        match answer.ok_body() {
            Ok(_) => {
                if !removal.archived {
                    self.delete_error = None;
                }
                ctx.memory.signals.push_back(Signal::Removed {
                    session_uid: removal.session_uid.clone(),
                    archived: removal.archived,
                });
                Some(Follow::Removed {
                    session_uid: removal.session_uid,
                    archived: removal.archived,
                })
            }
            Err(e) => {
                self.removal_failed(ctx, removal.archived, Some(e.to_string()));
                None
            }
        }
    }

    /// The unarchive answer: the restored record joins the list (OI-13: only an unarchived
    /// record of this Environment).
    pub(crate) fn restored(&mut self, ctx: &mut Ctx<'_>, answer: &Answer) -> Option<Follow> {
        self.restorations.remove(&answer.id)?;
        let env = ctx.inputs.environment_uid.clone().unwrap_or_default();
        let record = answer
            .ok_body()
            .and_then(crate::api::parse_session_record)
            .and_then(|r| r.check_created_in(&env).map(|()| r));
        match record {
            Ok(record) if !record.is_archived => {
                let summary = crate::input::SessionSummary::from(&record);
                ctx.memory.signals.push_back(Signal::Upsert(summary));
                Some(Follow::Restored)
            }
            Ok(_) => {
                restore_failed(ctx, None);
                None
            }
            Err(e) => {
                restore_failed(ctx, Some(e.to_string()));
                None
            }
        }
    }

    /// The person or the Environment changed: every request in flight is aborted and the
    /// delete failure cleared (ENV-2).
    pub(crate) fn reset(&mut self, ctx: &mut Ctx<'_>) {
        for (id, _) in std::mem::take(&mut self.removals) {
            ctx.io.abort(id);
        }
        for (id, _) in std::mem::take(&mut self.restorations) {
            ctx.io.abort(id);
        }
        self.delete_error = None;
    }

    fn removal_failed(&mut self, ctx: &mut Ctx<'_>, archived: bool, message: Option<String>) {
        if archived {
            let description =
                message.unwrap_or_else(|| "Unable to archive this session.".to_owned());
            ctx.emit(Event::Notify(Notice {
                title: "Session not archived".to_owned(),
                description: Some(description),
                variant: NoticeVariant::Error,
            }));
        } else {
            self.delete_error =
                Some(message.unwrap_or_else(|| "Delete session failed.".to_owned()));
        }
    }
}

fn restore_failed(ctx: &mut Ctx<'_>, message: Option<String>) {
    let description = message
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "Unable to restore this session.".to_owned());
    ctx.emit(Event::Notify(Notice {
        title: "Session not restored".to_owned(),
        description: Some(description),
        variant: NoticeVariant::Error,
    }));
}
