//! SEL and REQ: the one selected session, what selected it, and `sessionNotice`.
//!
//! Selecting events (a requested id, an opened or created session) arrive as `Choose`; the level
//! rules (the default session in the default-session state, the implicit newest session) are
//! applied on `Evaluate`. Together with the engine (which keeps a requested id off the default
//! surface) this gives the precedence of OI-14.

use statig::prelude::*;

use crate::api::ApiError;
use crate::model::Origin;

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// `sessionNotice`.
    pub notice: Option<String>,
    /// The requested session's detail has loaded: it is never replaced by the newest (REQ-4).
    requested_loaded: bool,
    /// A requested session that could not be loaded: not chosen as "newest" again.
    failed_request: Option<String>,
    /// REQ-5 wants the newest session as soon as the list has one.
    newest_wanted: bool,
    /// Transitions that changed the selection (the settle loop's fixed point).
    pub transitions: u64,
}

pub(crate) enum SelEvent<'a> {
    Choose {
        session_uid: &'a str,
        origin: Origin,
    },
    /// ENV-2: the person or Environment changed.
    Clear,
    Evaluate(&'a Facts<'a>),
    DetailLoaded {
        session_uid: &'a str,
    },
    DetailFailed {
        session_uid: &'a str,
        error: &'a ApiError,
        facts: &'a Facts<'a>,
    },
    Removed {
        session_uid: &'a str,
        facts: &'a Facts<'a>,
    },
    Notice(Option<&'a str>),
}

/// What the level rules look at.
#[derive(Debug)]
pub(crate) struct Facts<'a> {
    /// showsDefaultSession, and the selection is not launched.
    pub default_state: bool,
    /// The default session of the current combination, when known (DEF-1, DEF-7).
    pub default_uid: Option<&'a str>,
    /// avoidImplicitSessionSelection is not set.
    pub implicit_allowed: bool,
    /// The platform-read list, newest first (OI-13); `None` until it has loaded.
    pub list: Option<&'a [crate::input::SessionSummary]>,
}

#[state_machine(
    initial = "State::empty()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Selection {
    /// Nothing is selected.
    #[state]
    fn empty(&mut self, event: &SelEvent<'_>) -> Outcome<State> {
        self.on_event(None, event)
    }

    /// One session is selected (SEL-1).
    #[allow(clippy::ptr_arg)] // statig hands state-local fields by reference
    #[state]
    fn selected(
        &mut self,
        session_uid: &String,
        origin: &Origin,
        event: &SelEvent<'_>,
    ) -> Outcome<State> {
        self.on_event(Some((session_uid.as_str(), *origin)), event)
    }
}

const UNAVAILABLE_PREFIX: &str = "The session referenced by this link is unavailable.";

impl Selection {
    fn on_event(
        &mut self,
        current: Option<(&str, Origin)>,
        event: &SelEvent<'_>,
    ) -> Outcome<State> {
        match event {
            SelEvent::Choose {
                session_uid,
                origin,
            } => {
                if *origin == Origin::Requested {
                    self.failed_request = None;
                }
                self.go(current, Some((session_uid, *origin)))
            }
            SelEvent::Clear => {
                self.newest_wanted = false;
                self.failed_request = None;
                self.go(current, None)
            }
            SelEvent::Evaluate(facts) => self.evaluate(current, facts),
            SelEvent::DetailLoaded { session_uid } => {
                if current == Some((session_uid, Origin::Requested)) {
                    self.requested_loaded = true;
                }
                Handled
            }
            SelEvent::DetailFailed {
                session_uid,
                error,
                facts,
            } => {
                // REQ-5, REQ-6: a requested session that cannot be loaded gives way to the newest.
                if current != Some((session_uid, Origin::Requested)) || self.requested_loaded {
                    return Handled;
                }
                self.failed_request = Some((*session_uid).to_owned());
                let reason = error.to_string();
                let reason = if reason.trim().is_empty() {
                    "The requested session could not be loaded.".to_owned()
                } else {
                    reason
                };
                let next = self.newest(facts);
                self.newest_wanted = next.is_none();
                let outcome = self.go(current, next.map(|n| (n, Origin::Newest)));
                self.notice = Some(format!("{UNAVAILABLE_PREFIX} {reason}"));
                outcome
            }
            SelEvent::Removed { session_uid, facts } => {
                if current.map(|c| c.0) != Some(*session_uid) {
                    return Handled;
                }
                // The newest remaining session, unless implicit selection is avoided (SEL-3).
                let next = facts
                    .list
                    .filter(|_| facts.implicit_allowed)
                    .and_then(|l| l.iter().find(|s| s.uid != *session_uid))
                    .map(|s| (s.uid.as_str(), Origin::Newest));
                self.go(current, next)
            }
            SelEvent::Notice(text) => {
                self.notice = text.map(str::to_owned);
                Handled
            }
        }
    }

    fn evaluate(&mut self, current: Option<(&str, Origin)>, facts: &Facts<'_>) -> Outcome<State> {
        if facts.default_state {
            // DEF-1, DEF-2, DEF-3: the default session or nothing, a requested session included.
            return match (current, facts.default_uid) {
                (Some((uid, Origin::Default)), Some(d)) if uid == d => Handled,
                (None, None) => Handled,
                (_, desired) => self.go(current, desired.map(|d| (d, Origin::Default))),
            };
        }
        if current.is_none()
            && (facts.implicit_allowed || self.newest_wanted)
            && let Some(newest) = self.newest(facts)
        {
            self.newest_wanted = false;
            return self.go(current, Some((newest, Origin::Newest)));
        }
        Handled
    }

    /// The first session of the loaded list, skipping a requested session that failed.
    fn newest<'f>(&self, facts: &Facts<'f>) -> Option<&'f str> {
        facts
            .list?
            .iter()
            .map(|s| s.uid.as_str())
            .find(|uid| self.failed_request.as_deref() != Some(*uid))
    }

    /// Moves the selection; a move to another session clears the notice (SHR-7).
    fn go(
        &mut self,
        current: Option<(&str, Origin)>,
        next: Option<(&str, Origin)>,
    ) -> Outcome<State> {
        if current == next {
            return Handled;
        }
        if current.map(|c| c.0) != next.map(|n| n.0) {
            self.notice = None;
            self.requested_loaded = false;
        }
        if next.is_some() {
            self.newest_wanted = false;
        }
        match next {
            Some((uid, origin)) => Transition(State::selected(uid.to_owned(), origin)),
            None => Transition(State::empty()),
        }
    }
}

/// The selected session and its origin, read from a state.
pub(crate) fn selected(state: &State) -> Option<(&str, Origin)> {
    match state {
        State::Selected {
            session_uid,
            origin,
        } => Some((session_uid.as_str(), *origin)),
        State::Empty {} => None,
    }
}

impl Selection {
    /// Counts a transition that changed the selection.
    fn after_transition(&mut self, source: &State, target: &State) {
        crate::revision::count_transition(&mut self.transitions, source, target);
    }
}
