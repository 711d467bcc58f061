//! ENV: one session list per person and Environment, the storage port, and the latest-sessions
//! read of the current pair (FAIL-6, ENV-6 to ENV-8).

use litemap::LiteMap;

use statig::prelude::*;

use crate::api::{ApiError, parse_session_list_in};
use crate::concerns::ctx::Ctx;
use crate::http::check_id;
use crate::input::SessionSummary;
use crate::inputs::ScopeKey;
use crate::intent::{AgentFilter, ApiCall, Intent, RequestId, StorageRequest};
use crate::io::{Answer, Owner};
use crate::timestamp::unix_ms;

/// One pair's list.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopeList {
    pub sessions: Vec<SessionSummary>,
    /// Read from the platform in this engine's life (not only restored from storage).
    pub from_platform: bool,
}

/// Shared storage of the machine.
#[derive(Debug, Default)]
pub(crate) struct Environment {
    scope: Option<ScopeKey>,
    lists: LiteMap<ScopeKey, ScopeList>,
    /// Set by `startAgentSession(agent)`: later reads are narrowed to that Agent (OI-16).
    agent_filter: Option<AgentFilter>,
    /// What the engine learned while a read was in flight: the answer describes the platform
    /// as of the read's start, so sessions added since are kept and sessions removed since stay
    /// removed.
    since_read: Option<Vec<Change>>,
}

#[derive(Debug, Clone)]
enum Change {
    Added(Box<SessionSummary>),
    Removed(String),
}

pub(crate) enum EnvEvent<'a> {
    /// The person or Environment changed (or was first set).
    ScopeChanged(ScopeKey),
    /// Read the list if it is wanted and not read yet.
    Evaluate {
        want_read: bool,
    },
    /// Forget the read state and read again when wanted.
    Reread,
    NarrowToAgent(AgentFilter),
    Answer(&'a Answer),
    Upsert(&'a SessionSummary),
    Remove(&'a str),
    StoredLoaded {
        key: &'a str,
        sessions: &'a [SessionSummary],
    },
}

#[state_machine(
    initial = "State::unread()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Environment {
    /// Common handling of every state.
    #[superstate]
    fn scoped(&mut self, context: &mut Ctx<'_>, event: &EnvEvent<'_>) -> Outcome<State> {
        match event {
            EnvEvent::ScopeChanged(scope) => {
                self.switch_scope(context, scope.clone());
                Transition(State::unread())
            }
            EnvEvent::Reread => Transition(State::unread()),
            EnvEvent::NarrowToAgent(filter) => {
                self.agent_filter = Some(filter.clone());
                Handled
            }
            EnvEvent::Upsert(session) => {
                self.upsert(context, session);
                Handled
            }
            EnvEvent::Remove(uid) => {
                self.remove(context, uid);
                Handled
            }
            EnvEvent::StoredLoaded { key, sessions } => {
                self.restore_stored(key, sessions);
                Handled
            }
            EnvEvent::Evaluate { .. } | EnvEvent::Answer(_) => Handled,
        }
    }

    /// Not read from the platform yet for this pair.
    #[state(superstate = "scoped")]
    fn unread(&mut self, context: &mut Ctx<'_>, event: &EnvEvent<'_>) -> Outcome<State> {
        match event {
            EnvEvent::Evaluate { want_read: true } => {
                let Some(environment_uid) = context.inputs.environment_uid.clone() else {
                    return Handled;
                };
                let call = ApiCall::ListSessions {
                    environment_uid,
                    created_by_user_uid: self.scope.as_ref().and_then(|s| s.person.clone()),
                    agent: self.agent_filter.clone(),
                };
                match context.send(Owner::LatestSessions, call) {
                    Ok(pending) => {
                        self.since_read = Some(Vec::new());
                        Transition(State::reading(pending))
                    }
                    Err(e) => {
                        self.since_read = None;
                        Transition(State::failed(e))
                    }
                }
            }
            _ => Super,
        }
    }

    /// A read is in flight.
    #[state(superstate = "scoped", exit_action = "abort_read")]
    fn reading(
        &mut self,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &EnvEvent<'_>,
    ) -> Outcome<State> {
        match event {
            EnvEvent::Answer(a) if a.id == *pending => {
                let env = context
                    .inputs
                    .environment_uid
                    .as_deref()
                    .unwrap_or_default();
                match a
                    .ok_body()
                    .and_then(|body| parse_session_list_in(body, env))
                {
                    Ok(records) => {
                        let sessions = records.iter().map(SessionSummary::from).collect();
                        self.replace_current(context, sessions);
                        Transition(State::read())
                    }
                    Err(e) => {
                        self.since_read = None;
                        Transition(State::failed(e))
                    }
                }
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_read(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }

    /// The platform's list of this pair has loaded.
    #[state(superstate = "scoped")]
    fn read(event: &EnvEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// The read failed (`latestSessionsError`).
    #[state(superstate = "scoped")]
    fn failed(error: &ApiError, event: &EnvEvent<'_>) -> Outcome<State> {
        let _ = (error, event);
        Super
    }
}

/// `latestSessionsError`: the failed read's text.
pub(crate) fn message_of(e: &ApiError) -> String {
    let m = e.to_string();
    if m.trim().is_empty() {
        "Latest agent sessions request failed.".to_owned()
    } else {
        m
    }
}

/// Newest first by updated time (OI-13); equal or unknown times keep their order, unknown last.
fn sort_newest_first(sessions: &mut [SessionSummary]) {
    sessions
        .sort_by_key(|s| std::cmp::Reverse(s.updated_at().and_then(unix_ms).unwrap_or(i64::MIN)));
}

impl Environment {
    fn switch_scope(&mut self, context: &mut Ctx<'_>, scope: ScopeKey) {
        self.agent_filter = None;
        self.since_read = None;
        if !self.lists.contains_key(&scope) {
            self.lists.insert(scope.clone(), ScopeList::default());
            // Without an Environment no list can be read, so there is nothing to restore.
            if scope.environment.is_some() {
                let key = scope.storage_key();
                context
                    .io
                    .outbox
                    .push_back(Intent::Storage(StorageRequest::Load { key }));
            }
        }
        self.scope = Some(scope);
    }

    fn current_mut(&mut self) -> Option<&mut ScopeList> {
        let scope = self.scope.as_ref()?;
        self.lists.get_mut(scope)
    }

    /// The current pair's list.
    pub(crate) fn current(&self) -> Option<&ScopeList> {
        self.lists.get(self.scope.as_ref()?)
    }

    pub(crate) fn sessions(&self) -> &[SessionSummary] {
        self.current().map(|l| l.sessions.as_slice()).unwrap_or(&[])
    }

    fn save(&self, context: &mut Ctx<'_>) {
        if let (Some(scope), Some(list)) = (&self.scope, self.current()) {
            context
                .io
                .outbox
                .push_back(Intent::Storage(StorageRequest::Save {
                    key: scope.storage_key(),
                    sessions: list.sessions.clone(),
                }));
        }
    }

    fn replace_current(&mut self, context: &mut Ctx<'_>, mut sessions: Vec<SessionSummary>) {
        for change in self.since_read.take().unwrap_or_default() {
            match change {
                Change::Added(s) => {
                    if !sessions.iter().any(|x| x.uid == s.uid) {
                        sessions.push(*s);
                    }
                }
                Change::Removed(uid) => sessions.retain(|x| x.uid != uid),
            }
        }
        // A row whose uid could never be placed in a path is not a session the engine can show.
        sessions.retain(|s| check_id("session", &s.uid).is_ok());
        sort_newest_first(&mut sessions);
        let Some(list) = self.current_mut() else {
            return;
        };
        list.from_platform = true;
        if list.sessions != sessions {
            list.sessions = sessions;
            self.save(context);
        }
    }

    fn upsert(&mut self, context: &mut Ctx<'_>, session: &SessionSummary) {
        if check_id("session", &session.uid).is_err() {
            return;
        }
        if let Some(changes) = self.since_read.as_mut() {
            changes.push(Change::Added(Box::new(session.clone())));
        }
        let Some(list) = self.current_mut() else {
            return;
        };
        if let Some(existing) = list.sessions.iter_mut().find(|s| s.uid == session.uid) {
            if existing == session {
                return;
            }
            *existing = session.clone();
        } else {
            list.sessions.push(session.clone());
        }
        sort_newest_first(&mut list.sessions);
        self.save(context);
    }

    fn remove(&mut self, context: &mut Ctx<'_>, uid: &str) {
        if let Some(changes) = self.since_read.as_mut() {
            changes.push(Change::Removed(uid.to_owned()));
        }
        let Some(list) = self.current_mut() else {
            return;
        };
        let before = list.sessions.len();
        list.sessions.retain(|s| s.uid != uid);
        if list.sessions.len() != before {
            self.save(context);
        }
    }

    fn restore_stored(&mut self, key: &str, sessions: &[SessionSummary]) {
        let Some(scope) = &self.scope else { return };
        if scope.storage_key() != key {
            return;
        }
        if let Some(list) = self.current_mut()
            && !list.from_platform
            && list.sessions.is_empty()
        {
            let mut restored: Vec<SessionSummary> = sessions.to_vec();
            restored.retain(|s| check_id("session", &s.uid).is_ok());
            sort_newest_first(&mut restored);
            list.sessions = restored;
        }
    }
}

super::count_transitions!(Environment);

#[cfg(test)]
mod tests {
    use super::sort_newest_first;
    use crate::input::SessionSummary;

    fn row(uid: &str, ended_at: Option<&str>) -> SessionSummary {
        SessionSummary {
            uid: uid.to_owned(),
            agent_uid: None,
            agent_name: None,
            title: uid.to_owned(),
            status: None,
            started_at: None,
            ended_at: ended_at.map(str::to_owned),
            handle_unique_id: None,
            llm_provider: None,
            llm_model: None,
        }
    }

    /// OI-13: a timestamp the strict reader refuses (a day past its month's end, an offset out
    /// of range, a wrong separator) counts as unknown, like a missing one: such rows go last, in
    /// their order.
    #[test]
    fn refused_timestamps_sort_as_unknown() {
        let mut rows = vec![
            row("feb-31", Some("2026-02-31T10:00:00Z")),
            row("old", Some("2026-01-01T10:00:00Z")),
            row("offset", Some("2026-03-01T10:00:00+99:99")),
            row("none", None),
            row("new", Some("2026-03-01T10:00:00Z")),
            row("slash", Some("2026/03/02T10:00:00Z")),
        ];
        sort_newest_first(&mut rows);
        let order: Vec<&str> = rows.iter().map(|r| r.uid.as_str()).collect();
        assert_eq!(order, ["new", "old", "feb-31", "offset", "none", "slash"]);
    }
}
