//! What stands between a request and the engine: GCRA rate limits per
//! tenant and per user (`governor`), and a circuit breaker per strategy
//! (seed 001): 5 consecutive failures (internal errors, time-outs; never bad
//! input) open it; while open, calls fail fast; after a backoff (1 s,
//! doubling to 60 s) one trial call is let through (half-open), and its
//! success closes the circuit, its failure opens it again for longer.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, MonotonicClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::RateLimits;

/// Per-tenant and per-user GCRA limiters.
#[derive(Debug)]
pub struct Limiter {
    tenants: KeyedLimiter,
    users: KeyedLimiter,
    /// One cell of the user quota: how long a user who just spent their
    /// last one waits.
    user_interval: Duration,
    clock: MonotonicClock,
}

/// A keyed GCRA limiter on `std::time::Instant` (the OS's monotonic clock),
/// not governor's default TSC clock: Retry-After is computed on it, and a
/// client that sleeps that long on the OS clock must find its cell back;
/// the two clocks drift apart by microseconds on virtual machines, enough to
/// refuse a retry after a wait rounded up to just over the exact one.
type KeyedLimiter = RateLimiter<
    String,
    DefaultKeyedStateStore<String>,
    MonotonicClock,
    NoOpMiddleware<std::time::Instant>,
>;

/// Which limit refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The tenant's.
    Tenant,
    /// The user's.
    User,
}

impl Scope {
    /// The `scope` label of `chunking_rate_limited_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Tenant => "tenant",
            Scope::User => "user",
        }
    }
}

fn quota(per_minute: u32, burst: u32) -> Quota {
    let rate = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::per_minute(rate).allow_burst(burst)
}

impl Limiter {
    /// Limiters with `limits`.
    pub fn new(limits: RateLimits) -> Self {
        let user = quota(limits.per_user_per_minute, limits.burst);
        Self {
            tenants: RateLimiter::new(
                quota(limits.per_tenant_per_minute, limits.burst),
                DefaultKeyedStateStore::default(),
                MonotonicClock,
            ),
            users: RateLimiter::new(user, DefaultKeyedStateStore::default(), MonotonicClock),
            user_interval: user.replenish_interval(),
            clock: MonotonicClock,
        }
    }

    /// Takes one operation from the user's and the tenant's allowance, or
    /// says which refused and when a retry will pass (whole seconds, rounded
    /// up). Honest for both limits: the user's is checked first (a refusal
    /// there spends nothing of the tenant's); when the tenant's refuses, the
    /// user's cell was spent, so the wait covers one user interval too.
    pub fn check(&self, tenant: &str, user: &str) -> Result<(), (Scope, u64)> {
        let now = self.clock.now();
        let seconds = |d: Duration| d.as_nanos().div_ceil(1_000_000_000).max(1) as u64;
        if let Err(not_until) = self.users.check_key(&user.to_owned()) {
            return Err((Scope::User, seconds(not_until.wait_time_from(now))));
        }
        if let Err(not_until) = self.tenants.check_key(&tenant.to_owned()) {
            let wait = not_until.wait_time_from(now).max(self.user_interval);
            return Err((Scope::Tenant, seconds(wait)));
        }
        Ok(())
    }
}

/// Consecutive failures that open a circuit.
pub const OPEN_AFTER: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// A circuit's state (`chunking_circuit_breaker_state`: 0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Calls go through.
    Closed = 0,
    /// Calls fail fast until the backoff has passed.
    Open = 1,
    /// One trial call is under way.
    HalfOpen = 2,
}

#[derive(Debug, Clone, Copy)]
struct Circuit {
    state: State,
    failures: u32,
    backoff: Duration,
    open_until: Instant,
}

impl Default for Circuit {
    fn default() -> Self {
        Self {
            state: State::Closed,
            failures: 0,
            backoff: FIRST_BACKOFF,
            open_until: Instant::now(),
        }
    }
}

/// Circuit breakers by strategy name.
#[derive(Debug, Default)]
pub struct Breakers {
    circuits: Mutex<HashMap<String, Circuit>>,
}

/// Whether a call may go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Yes (`trial`: it is the half-open trial).
    Go {
        /// The half-open trial call.
        trial: bool,
    },
    /// No: open, retry after this many seconds.
    Refused(u64),
}

impl Breakers {
    /// Asks to call `strategy` now.
    pub fn admit(&self, strategy: &str) -> Admission {
        let Ok(mut all) = self.circuits.lock() else {
            return Admission::Go { trial: false };
        };
        let c = all.entry(strategy.to_owned()).or_default();
        let now = Instant::now();
        match c.state {
            State::Closed => Admission::Go { trial: false },
            State::Open if now >= c.open_until => {
                c.state = State::HalfOpen;
                Admission::Go { trial: true }
            }
            State::Open | State::HalfOpen => {
                let left = c.open_until.saturating_duration_since(now);
                Admission::Refused(left.as_nanos().div_ceil(1_000_000_000).max(1) as u64)
            }
        }
    }

    /// Records how a call of `strategy` ended (`failed`: an internal error
    /// or a time-out); returns the new state when it changed.
    pub fn record(&self, strategy: &str, failed: bool) -> Option<State> {
        let Ok(mut all) = self.circuits.lock() else {
            return None;
        };
        let c = all.entry(strategy.to_owned()).or_default();
        let before = c.state;
        if failed {
            c.failures += 1;
            if c.state == State::HalfOpen {
                c.backoff = (c.backoff * 2).min(MAX_BACKOFF);
                c.state = State::Open;
                c.open_until = Instant::now() + c.backoff;
            } else if c.state == State::Closed && c.failures >= OPEN_AFTER {
                c.state = State::Open;
                c.open_until = Instant::now() + c.backoff;
            }
        } else {
            *c = Circuit::default();
        }
        (c.state != before).then_some(c.state)
    }

    /// Gives back a half-open trial that ended without a verdict (the call
    /// was abandoned): the next call is a new trial.
    pub fn release_trial(&self, strategy: &str) {
        if let Ok(mut all) = self.circuits.lock() {
            if let Some(c) = all.get_mut(strategy).filter(|c| c.state == State::HalfOpen) {
                c.state = State::Open;
                c.open_until = Instant::now();
            }
        }
    }

    /// Whether `strategy`'s circuit is open (or half-open).
    pub fn is_open(&self, strategy: &str) -> bool {
        self.circuits
            .lock()
            .ok()
            .and_then(|all| all.get(strategy).map(|c| c.state != State::Closed))
            .unwrap_or(false)
    }

    /// Every known circuit's state.
    pub fn states(&self) -> Vec<(String, State)> {
        self.circuits
            .lock()
            .map(|all| all.iter().map(|(k, c)| (k.clone(), c.state)).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    #[test]
    fn five_failures_open_a_circuit_and_a_trial_closes_it() {
        let b = Breakers::default();
        for _ in 0..4 {
            assert_eq!(b.admit("structural"), Admission::Go { trial: false });
            assert_eq!(b.record("structural", true), None);
        }
        assert_eq!(b.record("structural", true), Some(State::Open));
        assert!(matches!(b.admit("structural"), Admission::Refused(1)));
        assert_eq!(
            b.admit("recursive"),
            Admission::Go { trial: false },
            "per strategy"
        );
        std::thread::sleep(FIRST_BACKOFF);
        assert_eq!(b.admit("structural"), Admission::Go { trial: true });
        assert!(
            matches!(b.admit("structural"), Admission::Refused(_)),
            "one trial at a time"
        );
        assert_eq!(b.record("structural", true), Some(State::Open));
        assert!(
            matches!(b.admit("structural"), Admission::Refused(2)),
            "backoff doubled"
        );
        std::thread::sleep(FIRST_BACKOFF * 2);
        assert_eq!(b.admit("structural"), Admission::Go { trial: true });
        assert_eq!(b.record("structural", false), Some(State::Closed));
        assert_eq!(b.admit("structural"), Admission::Go { trial: false });
    }

    #[test]
    fn a_rate_limit_says_honestly_when_to_retry() {
        let l = Limiter::new(RateLimits {
            per_tenant_per_minute: 60,
            per_user_per_minute: 600,
            burst: 3,
        });
        // The tenant's burst, spent by three users.
        for user in ["u1", "u2", "u3"] {
            assert!(l.check("acme-prod", user).is_ok());
        }
        let (scope, wait) = l.check("acme-prod", "u4").unwrap_err();
        assert_eq!((scope, wait), (Scope::Tenant, 1));
        assert!(l.check("beta-corp", "u5").is_ok(), "per tenant");
        std::thread::sleep(Duration::from_secs(wait));
        assert!(
            l.check("acme-prod", "u4").is_ok(),
            "a retry after Retry-After passes"
        );
        // One user's burst: refused by the user limit, honestly too.
        for _ in 0..3 {
            assert!(l.check("gamma-corp", "bob").is_ok());
        }
        let (scope, wait) = l.check("gamma-corp", "bob").unwrap_err();
        assert_eq!((scope, wait), (Scope::User, 1));
        std::thread::sleep(Duration::from_secs(wait));
        assert!(l.check("gamma-corp", "bob").is_ok());
    }
}
