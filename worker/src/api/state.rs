//! What the API's handlers share ([`ApiState`]).

use std::sync::Arc;

use shared::Engine;
use tokio::sync::Semaphore;

use super::auth::Verifier;
use super::guard::Limiter;
use crate::breaker::Breakers;
use crate::config::Settings;
use crate::ops::metrics::Metrics;

/// What the API's handlers share.
#[derive(Debug)]
pub struct ApiState {
    pub(super) engine: Arc<Engine>,
    pub(super) settings: Settings,
    pub(super) verifier: Verifier,
    pub(super) limiter: Limiter,
    pub(super) breakers: Arc<Breakers>,
    pub(super) slots: Arc<Semaphore>,
    pub(super) metrics: Arc<Metrics>,
}

impl ApiState {
    /// The API of `settings` (`None` when `api.enabled` is off); a key file
    /// that does not load is an error.
    pub fn new(
        settings: &Settings,
        metrics: Arc<Metrics>,
        breakers: Arc<Breakers>,
    ) -> Result<Option<Arc<Self>>, String> {
        if !settings.api.enabled {
            return Ok(None);
        }
        Ok(Some(Arc::new(Self {
            engine: Arc::clone(&settings.chunking.engine),
            verifier: Verifier::new(&settings.api.jwt)?,
            limiter: Limiter::new(settings.api.rate_limits),
            breakers,
            slots: Arc::new(Semaphore::new(settings.api.max_concurrent)),
            settings: settings.clone(),
            metrics,
        })))
    }
}
