//! The session explorer's reads (adr-notes sections 6 and 7): one Agent's archived sessions and
//! the session search. Each is one instance of [`ExplorerRead`], with its own rows, loading flag
//! and error; neither touches the latest list or the selection. A newer read of the same kind
//! aborts the one in flight; a change of person or Environment drops both (ENV-2, INV-10).

use statig::prelude::*;

use crate::api::{ApiError, parse_session_list, parse_session_list_in};
use crate::concerns::ctx::Ctx;
use crate::http::check_id;
use crate::input::SessionSummary;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// The page size when the host names none (adr-notes section 7).
pub(crate) const DEFAULT_LIMIT: u32 = 20;

/// `limit`: 20 when absent, clamped to 1 to 100 (adr-notes section 7).
pub(crate) fn clamp_limit(limit: Option<u32>) -> u32 {
    limit.unwrap_or(DEFAULT_LIMIT).clamp(1, 100)
}

/// Which read an instance serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ReadKind {
    /// `is_archived=true`, one Agent, ordered by `-archived_at`.
    #[default]
    Archived,
    /// `q`, `is_archived=false`, ordered by `-started_at`.
    Search,
}

impl ReadKind {
    fn owner(self) -> Owner {
        match self {
            ReadKind::Archived => Owner::ArchivedSessions,
            ReadKind::Search => Owner::SessionSearch,
        }
    }

    /// The text shown when a failure carries no message of its own.
    fn fallback(self) -> &'static str {
        match self {
            ReadKind::Archived => "Unable to load archived sessions.",
            ReadKind::Search => "Unable to search conversations right now.",
        }
    }
}

/// One row: the session, and when it was archived (archived reads only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub session: SessionSummary,
    pub archived_at: Option<String>,
}

/// Shared storage of one read.
#[derive(Debug, Default)]
pub(crate) struct ExplorerRead {
    kind: ReadKind,
    /// The rows of the last successful read (empty while loading and after a failure).
    pub rows: Vec<Row>,
    /// What the rows are for: the Agent uid (archived) or the trimmed query (search).
    pub subject: Option<String>,
    /// The call of the last read, asked again by [`ExplorerEvent::Reload`].
    last: Option<ApiCall>,
}

impl ExplorerRead {
    /// A read of this kind, idle.
    pub(crate) fn new(kind: ReadKind) -> ExplorerRead {
        ExplorerRead {
            kind,
            ..ExplorerRead::default()
        }
    }
}

pub(crate) enum ExplorerEvent<'a> {
    /// Read with this call (for this Agent or query).
    Read {
        call: &'a ApiCall,
        subject: &'a str,
    },
    /// Refused before any request: show this error.
    Refuse {
        message: &'a str,
        subject: Option<&'a str>,
    },
    /// Forget everything (a blank search, or a change of person or Environment).
    Clear,
    /// Ask the last read again, if one was made (after an archive or a restore).
    Reload,
    /// A session left the platform's active or archived set: drop its row.
    Drop(&'a str),
    Answer(&'a Answer),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl ExplorerRead {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &ExplorerEvent<'_>) -> Outcome<State> {
        match event {
            ExplorerEvent::Read { call, subject } => {
                self.subject = Some((*subject).to_owned());
                self.last = Some((*call).clone());
                self.start(context)
            }
            ExplorerEvent::Refuse { message, subject } => {
                self.rows.clear();
                self.subject = subject.map(str::to_owned);
                self.last = None;
                Transition(State::failed((*message).to_owned()))
            }
            ExplorerEvent::Clear => {
                self.rows.clear();
                self.subject = None;
                self.last = None;
                Transition(State::idle())
            }
            ExplorerEvent::Reload if self.last.is_some() => self.start(context),
            ExplorerEvent::Reload => Handled,
            ExplorerEvent::Drop(uid) => {
                self.rows.retain(|r| r.session.uid != *uid);
                Handled
            }
            ExplorerEvent::Answer(_) => Handled,
        }
    }

    /// Nothing read (or cleared).
    #[state(superstate = "any")]
    fn idle(event: &ExplorerEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// A read is in flight; a newer one aborts it first.
    #[state(superstate = "any", exit_action = "abort_read")]
    fn loading(
        &mut self,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &ExplorerEvent<'_>,
    ) -> Outcome<State> {
        match event {
            ExplorerEvent::Answer(a) if a.id == *pending => match self.read(context, a) {
                Ok(rows) => {
                    self.rows = rows;
                    Transition(State::loaded())
                }
                Err(e) => Transition(State::failed(self.message_of(&e))),
            },
            ExplorerEvent::Answer(_) | ExplorerEvent::Drop(_) => Super,
            _ => {
                // Superseded: the abort goes out before the newer request.
                context.io.abort(*pending);
                Super
            }
        }
    }

    #[action]
    fn abort_read(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }

    /// The rows of the last read.
    #[state(superstate = "any")]
    fn loaded(event: &ExplorerEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// The last read failed.
    #[state(superstate = "any")]
    fn failed(message: &String, event: &ExplorerEvent<'_>) -> Outcome<State> {
        let _ = (message, event);
        Super
    }
}

impl ExplorerRead {
    /// Sends the last call; the rows are emptied while it runs.
    fn start(&mut self, context: &mut Ctx<'_>) -> Outcome<State> {
        self.rows.clear();
        let Some(call) = self.last.clone() else {
            return Transition(State::idle());
        };
        match context.send(self.kind.owner(), call) {
            Ok(pending) => Transition(State::loading(pending)),
            Err(e) => Transition(State::failed(self.message_of(&e))),
        }
    }

    fn message_of(&self, e: &ApiError) -> String {
        let m = e.to_string();
        if m.trim().is_empty() {
            self.kind.fallback().to_owned()
        } else {
            m
        }
    }

    /// Every row must name the active Environment, or the whole read fails (`platform-api.md`
    /// section 1); rows whose uid cannot be a path segment are left out. The search, like the
    /// latest list, leaves archived rows out (OI-13).
    fn read(&self, context: &Ctx<'_>, a: &Answer) -> Result<Vec<Row>, ApiError> {
        let env = context
            .inputs
            .environment_uid
            .as_deref()
            .unwrap_or_default();
        let body = a.ok_body()?;
        let records = match self.kind {
            ReadKind::Search => parse_session_list_in(body, env)?,
            ReadKind::Archived => {
                let records = parse_session_list(body)?;
                records.iter().try_for_each(|r| r.check_environment(env))?;
                records
                    .into_iter()
                    .filter(|r| check_id("session", &r.uid).is_ok())
                    .collect()
            }
        };
        Ok(records
            .iter()
            .map(|r| Row {
                session: SessionSummary::from(r),
                archived_at: match self.kind {
                    ReadKind::Archived => r.archived_at.clone(),
                    ReadKind::Search => None,
                },
            })
            .collect())
    }
}

/// A read is in flight.
pub(crate) fn is_loading(state: &State) -> bool {
    matches!(state, State::Loading { .. })
}

/// The last read's error.
pub(crate) fn error(state: &State) -> Option<&str> {
    match state {
        State::Failed { message } => Some(message),
        _ => None,
    }
}

super::count_transitions!(ExplorerRead);

#[cfg(test)]
mod tests {
    use super::clamp_limit;

    #[test]
    fn limit_defaults_to_20_and_is_clamped() {
        assert_eq!(clamp_limit(None), 20);
        assert_eq!(clamp_limit(Some(0)), 1);
        assert_eq!(clamp_limit(Some(1)), 1);
        assert_eq!(clamp_limit(Some(100)), 100);
        assert_eq!(clamp_limit(Some(101)), 100);
    }
}
