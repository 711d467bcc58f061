//! [`Time`]: the engine's notion of "now", a plain value the host supplies.
//!
//! The core reads no clock. Every call that needs the time takes a [`Time`]: monotonic
//! microseconds since an origin of the host's choosing (its process start, a page load, zero in
//! a test). Only differences between times matter to the engine, so any origin works as long as
//! it stays the same for one engine. A host without `std::time::Instant` (wasm32, a C or Python
//! host) passes its own monotonic reading; a Rust host can use [`InstantClock`].

use std::fmt;
use std::ops::{Add, AddAssign};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A point on the host's monotonic clock: microseconds since an origin the host chooses.
///
/// Arithmetic saturates (it never panics): `Time::from_micros(u64::MAX) + d` stays at the
/// maximum, and [`Time::saturating_duration_since`] of an earlier time is zero.
///
/// ```
/// use std::time::Duration;
/// use engine_core::Time;
///
/// let t = Time::from_millis(5_000);
/// assert_eq!(t.as_micros(), 5_000_000);
/// let later = t + Duration::from_millis(250);
/// assert_eq!(later.saturating_duration_since(t), Duration::from_millis(250));
/// assert_eq!(t.saturating_duration_since(later), Duration::ZERO);
/// assert!(later > t);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Time(u64);

impl Time {
    /// The origin itself.
    pub const ZERO: Time = Time(0);

    /// `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Time {
        Time(micros)
    }

    /// `millis` milliseconds after the origin (saturating).
    pub const fn from_millis(millis: u64) -> Time {
        Time(millis.saturating_mul(1000))
    }

    /// Microseconds since the origin.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the origin (truncated).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1000
    }

    /// The time passed since the origin.
    pub const fn since_origin(self) -> Duration {
        Duration::from_micros(self.0)
    }

    /// The time from `earlier` to `self`; zero when `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: Time) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }

    /// The time from `earlier` to `self`; `None` when `earlier` is later.
    pub const fn checked_duration_since(self, earlier: Time) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(us) => Some(Duration::from_micros(us)),
            None => None,
        }
    }

    /// `self + d`, `None` past the largest time.
    pub fn checked_add(self, d: Duration) -> Option<Time> {
        let us = u64::try_from(d.as_micros()).ok()?;
        self.0.checked_add(us).map(Time)
    }

    /// `self + d`, at most the largest time. Sub-microsecond parts of `d` are dropped.
    pub fn saturating_add(self, d: Duration) -> Time {
        self.checked_add(d).unwrap_or(Time(u64::MAX))
    }
}

impl Add<Duration> for Time {
    type Output = Time;

    /// Saturating: see [`Time::saturating_add`].
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl fmt::Debug for Time {
    /// `Time(5000.250ms)`: milliseconds since the origin, three decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Time({}.{:03}ms)", self.0 / 1000, self.0 % 1000)
    }
}

/// The convenience for Rust hosts with `std::time::Instant`: a fixed origin instant, and the
/// conversions between instants and [`Time`]s on it. It never reads the clock itself; the host
/// calls `Instant::now()` and converts.
///
/// ```
/// use std::time::{Duration, Instant};
/// use engine_core::{InstantClock, Time};
///
/// let origin = Instant::now();
/// let clock = InstantClock::new(origin);
/// assert_eq!(clock.time(origin), Time::ZERO);
/// let later = origin + Duration::from_millis(15);
/// assert_eq!(clock.time(later), Time::from_millis(15));
/// assert_eq!(clock.instant(Time::from_millis(15)), later);
/// ```
// The one place engine-core names `Instant` (engine-core/clippy.toml disallows it elsewhere):
// a conversion the host drives, never a clock read.
#[allow(clippy::disallowed_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstantClock {
    origin: std::time::Instant,
}

#[allow(clippy::disallowed_types)]
impl InstantClock {
    /// A clock whose [`Time::ZERO`] is `origin`.
    pub fn new(origin: std::time::Instant) -> InstantClock {
        InstantClock { origin }
    }

    /// The origin instant.
    pub fn origin(&self) -> std::time::Instant {
        self.origin
    }

    /// `at` as a [`Time`] (truncated to microseconds); an instant before the origin is
    /// [`Time::ZERO`].
    pub fn time(&self, at: std::time::Instant) -> Time {
        let since = at.saturating_duration_since(self.origin);
        Time(u64::try_from(since.as_micros()).unwrap_or(u64::MAX))
    }

    /// `t` as an instant (for sleeping until [`crate::Engine::poll_timeout`]); a time too far to
    /// represent is clamped to the latest representable one within a century of the origin.
    pub fn instant(&self, t: Time) -> std::time::Instant {
        let d = t.since_origin();
        self.origin
            .checked_add(d)
            .or_else(|| self.origin.checked_add(CENTURY))
            .unwrap_or(self.origin)
    }
}

/// A far-away but representable distance, for clamping.
const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let max = Time::from_micros(u64::MAX);
        assert_eq!(max + Duration::from_secs(1), max);
        assert_eq!(Time::from_millis(u64::MAX), max);
        assert_eq!(max.checked_add(Duration::from_micros(1)), None);
        assert_eq!(
            Time::ZERO.checked_duration_since(Time::from_micros(1)),
            None
        );
        let mut t = Time::from_micros(7);
        t += Duration::from_nanos(2_500);
        assert_eq!(t.as_micros(), 9);
        assert_eq!(format!("{t:?}"), "Time(0.009ms)");
        assert_eq!(serde_json::to_string(&t).ok().as_deref(), Some("9"));
    }
}
