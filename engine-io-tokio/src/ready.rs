//! What the shells' `wait_ready` returns, shared by both shells: the snapshot's
//! [`SendReadiness`] read as "ready", "blocked, for this cause" or "still waiting", and the
//! causes the wait adds itself ([`NotReadyCode::TimedOut`], [`NotReadyCode::Closed`]).

use std::time::Duration;

use engine_core::{NotReady, NotReadyCode, SendReadiness, Snapshot};

/// Whether `snapshot` ends a wait for readiness: `Some(Ok)` when a message can be sent now,
/// `Some(Err(cause))` when the engine is blocked (it will not get there by itself), `None`
/// while it is still getting there.
pub fn settled(snapshot: &Snapshot) -> Option<Result<(), NotReady>> {
    match &snapshot.send_readiness {
        SendReadiness::Ready => Some(Ok(())),
        SendReadiness::Blocked(cause) => Some(Err(cause.clone())),
        _ => None,
    }
}

/// The cause of a wait that ran out: [`NotReadyCode::TimedOut`], its message naming the wait's
/// length and what the engine still waited for in `snapshot` ("Not ready after 30 s: Loading
/// the sessions...").
pub fn timed_out(snapshot: &Snapshot, timeout: Duration) -> NotReady {
    let after = if timeout.subsec_nanos() == 0 {
        format!("{} s", timeout.as_secs())
    } else {
        format!("{} ms", timeout.as_millis())
    };
    let message = match &snapshot.send_readiness {
        SendReadiness::Waiting { waiting_for } => {
            format!("Not ready after {after}: {}", waiting_for.text())
        }
        _ => format!("Not ready after {after}."),
    };
    NotReady::new(NotReadyCode::TimedOut, message)
}

/// The cause of a wait on a shell that stopped: [`NotReadyCode::Closed`] with `message`.
pub fn closed(message: impl std::fmt::Display) -> NotReady {
    NotReady::new(NotReadyCode::Closed, message.to_string())
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)] // a test fails loudly
mod tests {
    use super::*;
    use engine_core::{Config, Engine, Input, Time};

    fn waiting_snapshot() -> Snapshot {
        let mut engine = Engine::new(
            Config::new("http://127.0.0.1:9").expect("a valid address"),
            Time::ZERO,
        );
        for input in [
            Input::IsVisible(true),
            Input::EnvironmentUid(Some("env-1".into())),
        ] {
            engine.handle_input(input, Time::ZERO);
        }
        engine.snapshot()
    }

    /// Issue 25 point 3: a wait that runs out says how long it waited and for what, in the
    /// engine's words (`Waiting::text`).
    #[test]
    fn a_timeout_names_what_it_waited_for() {
        let s = waiting_snapshot();
        assert!(settled(&s).is_none(), "{:?}", s.send_readiness);
        let cause = timed_out(&s, Duration::from_secs(30));
        assert_eq!(cause.code, NotReadyCode::TimedOut);
        assert_eq!(
            cause.message,
            "Not ready after 30 s: Loading the sessions..."
        );
        assert_eq!(
            timed_out(&s, Duration::from_millis(1500)).message,
            "Not ready after 1500 ms: Loading the sessions..."
        );
        assert_eq!(cause.status(), None);
    }

    /// Issue 25 point 3: a blocked engine ends the wait with its cause, unchanged.
    #[test]
    fn a_blocked_snapshot_ends_the_wait_with_its_cause() {
        let engine = Engine::new(
            Config::new("http://127.0.0.1:9").expect("a valid address"),
            Time::ZERO,
        );
        let s = engine.snapshot();
        let Some(Err(cause)) = settled(&s) else {
            panic!("not blocked: {:?}", s.send_readiness)
        };
        assert_eq!(cause.code, NotReadyCode::NotVisible);
        assert_eq!(closed("stopped").code, NotReadyCode::Closed);
    }
}
