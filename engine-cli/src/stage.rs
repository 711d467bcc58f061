//! What the person is told about the session and its Agent, from the snapshot alone.

use engine_core::{DefaultSessionStatus, ReadinessStatus, Snapshot};

/// The notice code of a local runtime that does not pass its checks (ADR 099).
const LOCAL_UNAVAILABLE: &str = "local_agent_unavailable";

/// A local runtime does not pass its checks yet (the engine looks for it again every 5 s);
/// not one that runs in managed mode, which will not pass them by waiting.
pub fn local_unavailable(s: &Snapshot) -> bool {
    s.active_runtime_interaction.as_ref().is_some_and(|i| {
        !i.can_submit
            && i.notice.as_ref().is_some_and(|n| {
                n.code == LOCAL_UNAVAILABLE
                    && n.message != engine_core::api::local::MANAGED_MODE_TEXT
            })
    })
}

/// Where the chat stands, as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// Still getting ready: shown with a spinner.
    Waiting(String),
    /// The person can write.
    Ready(String),
    /// Something the person must act on, or a failure.
    Blocked(String),
}

impl Stage {
    /// What the person can do about it in the interactive chat, when there is something.
    pub fn hint(&self, s: &Snapshot) -> Option<&'static str> {
        match self {
            Stage::Blocked(_) if s.session_model_selection_request.is_some() => {
                Some("Type /models, then /choose ID [LEVEL].")
            }
            Stage::Blocked(_) if s.default_session_status == DefaultSessionStatus::Error => {
                Some("Type /retry to try again.")
            }
            _ => None,
        }
    }

    /// The line to print.
    pub fn text(&self) -> &str {
        match self {
            Stage::Waiting(t) | Stage::Ready(t) | Stage::Blocked(t) => t,
        }
    }
}

/// The stage of the snapshot (SHR-8 to SHR-12 as a terminal shows them). While it waits, the
/// line is the composer's reason where it has one (RU-38: the reference's texts, "Loading
/// session...", "Select or start a session to continue."), else this program's own.
pub fn of(s: &Snapshot) -> Stage {
    let waiting = |own: String| Stage::Waiting(s.composer_state.reason.clone().unwrap_or(own));
    let agent = s
        .active_session_detail
        .as_ref()
        .and_then(|d| d.record.as_ref())
        .and_then(|r| {
            let record = r.value();
            record.get("agent_name")?.as_str().map(str::to_owned)
        })
        .unwrap_or_else(|| "the agent".to_owned());
    if s.session_model_selection_request.is_some() {
        return Stage::Blocked("A model is needed to start this session.".into());
    }
    match s.default_session_status {
        DefaultSessionStatus::Missing => {
            return Stage::Blocked("No default Agent is configured (use --agent).".into());
        }
        DefaultSessionStatus::Error => {
            let e = s.default_session_error.clone().unwrap_or_default();
            return Stage::Blocked(crate::failure::session_not_opened(&e));
        }
        DefaultSessionStatus::Loading | DefaultSessionStatus::Opening => {
            return Stage::Waiting("Connecting...".into());
        }
        _ => {}
    }
    let readiness = &s.active_session_readiness;
    match readiness.status {
        ReadinessStatus::Loading => return waiting("Loading the session...".into()),
        ReadinessStatus::Error | ReadinessStatus::NotFound => {
            let e = readiness.error.clone().unwrap_or_default();
            return Stage::Blocked(format!("The session is not available. {e}"));
        }
        ReadinessStatus::Idle => return waiting("Choosing a session...".into()),
        ReadinessStatus::Ready => {}
        // A status newer than this command: not ready yet.
        _ => return waiting("Loading the session...".into()),
    }
    match &s.active_runtime_interaction {
        Some(i) if s.is_assistant_runtime_starting => {
            // The platform's notice says most; else the composer's "{Agent} is waking up".
            match i.notice.as_ref() {
                Some(n) => Stage::Waiting(n.message.clone()),
                None => waiting(format!("Checking that {agent} is ready...")),
            }
        }
        // ADR 099: a local runtime that does not pass its checks is looked for again every
        // 5 s, so it is waited for (a runtime still loading its model comes up by itself).
        Some(i) if local_unavailable(s) => {
            let text = i
                .notice
                .as_ref()
                .map(|n| format!("{}: {} (looking again every 5 s)", n.title, n.message))
                .unwrap_or_default();
            Stage::Waiting(text)
        }
        Some(i) if !i.can_submit => {
            let mut text = i
                .notice
                .as_ref()
                .map(|n| n.message.clone())
                .unwrap_or_else(|| "The agent cannot take a new message right now.".into());
            // RU-44: the support reference goes beside an error notice only.
            if let Some(r) = &s.composer_state.support_reference {
                text.push_str(&format!(" Support reference: {r}"));
            }
            Stage::Blocked(text)
        }
        _ if s.composer_admission || s.is_direct_launch_session => {
            Stage::Ready(format!("Connected to {agent}. Write a message (/help)."))
        }
        _ => waiting(format!("Checking that {agent} is ready...")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use engine_core::{Config, Engine, Input, Person, Secret, Time};

    use super::*;

    fn engine(inputs: Vec<Input>) -> Engine {
        let mut engine = Engine::new(Config::new("https://platform.test").unwrap(), Time::ZERO);
        for input in inputs {
            engine.handle_input(input, Time::ZERO);
        }
        engine
    }

    /// Point 8 of issue 27 (RU-38): while the chat waits, the line is the composer's reason.
    #[test]
    fn a_waiting_line_is_the_composers_reason() {
        let person = Input::Person(Person::new("user-1", Secret::new("t")));
        let env = Input::EnvironmentUid(Some("env-1".into()));
        let visible = Input::IsVisible(true);
        let e = engine(vec![
            person.clone(),
            env.clone(),
            visible.clone(),
            Input::RequestedSessionId(Some("s-1".into())),
        ]);
        let s = e.snapshot();
        assert_eq!(
            s.composer_state.reason.as_deref(),
            Some("Loading session...")
        );
        assert_eq!(of(&s), Stage::Waiting("Loading session...".into()));
    }
}
