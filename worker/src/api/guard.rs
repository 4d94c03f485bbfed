//! Rate limits between a request and the engine: GCRA per tenant and per
//! user of a tenant (`governor`). The circuit breakers the API shares with
//! the queue consumer are [`crate::breaker`].

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, MonotonicClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::RateLimits;

/// Per-tenant and per-user GCRA limiters. A user's allowance is keyed by
/// (tenant, `sub`): the same `sub` in two tenants is two users.
#[derive(Debug)]
pub struct Limiter {
    tenants: KeyedLimiter<String>,
    users: KeyedLimiter<(String, String)>,
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
type KeyedLimiter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, MonotonicClock, NoOpMiddleware<std::time::Instant>>;

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
        if let Err(not_until) = self.users.check_key(&(tenant.to_owned(), user.to_owned())) {
            return Err((Scope::User, seconds(not_until.wait_time_from(now))));
        }
        if let Err(not_until) = self.tenants.check_key(&tenant.to_owned()) {
            let wait = not_until.wait_time_from(now).max(self.user_interval);
            return Err((Scope::Tenant, seconds(wait)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

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
        // The same user name in another tenant has an allowance of its own.
        for _ in 0..3 {
            assert!(l.check("delta-corp", "bob").is_ok());
        }
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
