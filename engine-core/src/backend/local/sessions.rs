//! A local runtime's conversation list (ADR 099; `platform-api.md` section 8): `GET
//! /api/local/v1/chat-sessions?limit=50`, read while the chat is visible and the runtime is
//! ready, and again on `refreshSessionDetail()` and after a turn ends. A 404 or 405 means the
//! runtime cannot list yet: the conversation is live-only (`capabilities.sessionHistory`
//! false), which is not an error.

use statig::prelude::*;

use crate::api::local::{LocalRoute, LocalSession, local_failure_text, parse_local_sessions};
use crate::concerns::ctx::Ctx;
use crate::input::SessionSummary;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// What the list holds besides its state.
#[derive(Debug, Default)]
pub(crate) struct LocalSessions {
    /// The conversations, newest first.
    pub sessions: Vec<SessionSummary>,
    /// The runtime answered 404/405: it cannot list (or reload) conversations.
    pub live_only: bool,
    /// The last read failed (`latestSessionsError`).
    pub error: Option<String>,
    /// A read is wanted (first read, refresh, a turn ended).
    wanted: bool,
    /// This page's conversations (started here, or that sent a turn from here), listed even
    /// when the runtime does not list them (a live-only runtime lists none).
    pub page: Vec<SessionSummary>,
}

/// How much of a conversation's first message names it (the reference's page titles: cut,
/// with no ellipsis).
const PAGE_TITLE_CHARS: usize = 80;

pub(crate) enum SessionsEvent<'a> {
    /// The level rules: read when wanted and the runtime can be asked.
    Evaluate {
        may_read: bool,
    },
    /// Read again (a refresh, a turn ended).
    Reread,
    Answer {
        answer: &'a Answer,
        agent: &'a str,
    },
    /// A conversation of this page: started here (no text), or a turn of it starts with
    /// `text`, at wall-clock `at` (ISO-8601).
    Page {
        uid: &'a str,
        text: Option<&'a str>,
        at: String,
        agent: &'a str,
    },
    /// The runtime named the conversation `from` ran in `to`.
    Rekey {
        from: &'a str,
        to: &'a str,
    },
    /// A new source, or none.
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalSessions {
    #[superstate]
    fn any(&mut self, event: &SessionsEvent<'_>) -> Outcome<State> {
        match event {
            SessionsEvent::Page {
                uid,
                text,
                at,
                agent,
            } => {
                self.page_turn(uid, *text, at, agent);
                Handled
            }
            SessionsEvent::Rekey { from, to } => {
                if self.page.iter().any(|r| r.uid == *to) {
                    self.page.retain(|r| r.uid != *from);
                } else if let Some(row) = self.page.iter_mut().find(|r| r.uid == *from) {
                    row.uid = (*to).to_owned();
                }
                Handled
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &SessionsEvent<'_>) -> Outcome<State> {
        match event {
            SessionsEvent::Evaluate { may_read: true, .. } if self.wanted => {
                self.wanted = false;
                let call = ApiCall::Local {
                    route: LocalRoute::Sessions,
                };
                match context.send_local(Owner::LocalSessions, call) {
                    Ok(pending) => Transition(State::reading(pending)),
                    Err(e) => {
                        self.error = Some(e.to_string());
                        Handled
                    }
                }
            }
            SessionsEvent::Reread => {
                self.wanted = true;
                Handled
            }
            SessionsEvent::Reset => {
                *self = LocalSessions::fresh();
                Handled
            }
            _ => Super,
        }
    }

    #[state(superstate = "any", exit_action = "abort_pending")]
    fn reading(&mut self, pending: &RequestId, event: &SessionsEvent<'_>) -> Outcome<State> {
        match event {
            SessionsEvent::Answer { answer, agent } if answer.id == *pending => {
                self.read(answer, agent);
                Transition(State::idle())
            }
            SessionsEvent::Reread => {
                self.wanted = true;
                Handled
            }
            SessionsEvent::Reset => {
                *self = LocalSessions::fresh();
                Transition(State::idle())
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl LocalSessions {
    /// A list not read yet: the first read is wanted.
    pub(crate) fn fresh() -> LocalSessions {
        LocalSessions {
            wanted: true,
            ..LocalSessions::default()
        }
    }

    /// A conversation of this page, its title from its first message (once), its time the
    /// latest turn's start.
    fn page_turn(&mut self, uid: &str, text: Option<&str>, at: &str, agent: &str) {
        let title = text
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| t.chars().take(PAGE_TITLE_CHARS).collect::<String>());
        match self.page.iter_mut().find(|r| r.uid == uid) {
            Some(row) => {
                if let Some(title) = title
                    && row.title == default_title(uid)
                {
                    row.title = title;
                }
                row.ended_at = Some(at.to_owned());
            }
            None => self.page.push(SessionSummary {
                uid: uid.to_owned(),
                agent_uid: None,
                agent_name: Some(agent.to_owned()),
                title: title.unwrap_or_else(|| default_title(uid).to_owned()),
                status: None,
                started_at: Some(at.to_owned()),
                ended_at: Some(at.to_owned()),
                handle_unique_id: None,
                llm_provider: None,
                llm_model: None,
            }),
        }
    }

    fn read(&mut self, answer: &Answer, agent: &str) {
        let route = LocalRoute::Sessions;
        let (status, body) = match answer.outcome.local(&route) {
            Ok(answered) => answered,
            Err(text) => {
                self.error = Some(text);
                return;
            }
        };
        match status {
            200..=299 => match parse_local_sessions(body) {
                Ok(rows) => {
                    self.error = None;
                    self.live_only = false;
                    self.sessions = summaries(&rows, agent);
                }
                Err(e) => self.error = Some(format!("{}: {e}", route.operation_name())),
            },
            404 | 405 => {
                self.error = None;
                self.live_only = true;
                self.sessions.clear();
            }
            _ => self.error = Some(local_failure_text(&route, Some(status), body)),
        }
    }
}

/// The conversations as session summaries, newest first (by `updatedAt`, else `createdAt`):
/// the title, else the latest message, else "New conversation"; the runtime's default
/// conversation is "Conversation".
pub(crate) fn summaries(rows: &[LocalSession], agent: &str) -> Vec<SessionSummary> {
    let mut summaries: Vec<SessionSummary> = rows
        .iter()
        .map(|row| SessionSummary {
            uid: row.session_uid.clone(),
            agent_uid: None,
            agent_name: Some(agent.to_owned()),
            title: row
                .title
                .clone()
                .or_else(|| row.latest_message_preview.clone())
                .unwrap_or_else(|| default_title(&row.session_uid).to_owned()),
            status: Some(if row.working { "running" } else { "completed" }.to_owned()),
            started_at: row.created_at.clone(),
            ended_at: row.updated_at.clone().or_else(|| row.created_at.clone()),
            handle_unique_id: None,
            llm_provider: None,
            llm_model: None,
        })
        .collect();
    let at = |s: &SessionSummary| s.updated_at().and_then(crate::timestamp::unix_ms);
    summaries.sort_by_key(|s| std::cmp::Reverse(at(s)));
    summaries
}

/// The title of a conversation the runtime has not named.
pub(crate) fn default_title(uid: &str) -> &'static str {
    if uid == crate::source::DEFAULT_CONVERSATION {
        "Conversation"
    } else {
        "New conversation"
    }
}

crate::concerns::count_transitions!(LocalSessions);

/// A read is in flight (`isLoadingLatestSessions`).
pub(crate) fn is_reading(state: &State) -> bool {
    matches!(state, State::Reading { .. })
}
