//! Why the engine asks to be woken: every timer states its reason ([`TimeoutReason`]), and the
//! earliest one is [`crate::Engine::poll_timeout`] with [`crate::Engine::timeout_reason`].

use serde::Serialize;

use crate::time::Time;

/// What the next [`crate::Engine::handle_timeout`] is for. For diagnostics and logs: a host
/// never needs it to drive the engine.
///
/// ```
/// use engine_core::TimeoutReason;
///
/// assert_eq!(TimeoutReason::RuntimePoll.as_str(), "runtime_poll");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TimeoutReason {
    /// Runtime access reads the selected session's runtime again (RTA-10: not while hidden).
    RuntimePoll,
    /// Runtime access gives up waiting for the Agent to confirm the runtime.
    RuntimeConfirmLimit,
    /// The model catalog is read again after a failure.
    CatalogRetry,
    /// A turn gives up waiting for the Agent to confirm the runtime.
    TurnConfirmLimit,
    /// A held turn reads the runtime again before it sends.
    TurnHoldCheck,
    /// A cancel that got no answer is given up.
    CancelGiveUp,
    /// SND-25: the session's detail is read again while another writer works.
    WriterPoll,
    /// OI-4: the selected session's wake is late enough to say so.
    WakeOverdue,
    /// ADR 099: the local runtime is looked at again while it cannot take a message.
    LocalRecheck,
}

impl TimeoutReason {
    /// A stable name, as in the serialized form.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutReason::RuntimePoll => "runtime_poll",
            TimeoutReason::RuntimeConfirmLimit => "runtime_confirm_limit",
            TimeoutReason::CatalogRetry => "catalog_retry",
            TimeoutReason::TurnConfirmLimit => "turn_confirm_limit",
            TimeoutReason::TurnHoldCheck => "turn_hold_check",
            TimeoutReason::CancelGiveUp => "cancel_give_up",
            TimeoutReason::WriterPoll => "writer_poll",
            TimeoutReason::WakeOverdue => "wake_overdue",
            TimeoutReason::LocalRecheck => "local_recheck",
        }
    }
}

impl std::fmt::Display for TimeoutReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A timer: when, and why. The earliest wins; at the same time, the reason listed first in
/// [`TimeoutReason`] (an order kept inside the crate: the public enum has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub(crate) at: Time,
    pub(crate) reason: TimeoutReason,
}

impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.reason as u8).cmp(&(other.at, other.reason as u8))
    }
}

impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Deadline {
    pub(crate) fn new(at: Time, reason: TimeoutReason) -> Deadline {
        Deadline { at, reason }
    }
}
