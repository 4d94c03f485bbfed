//! The hand-over from the store to the relay: ids of outbox rows this
//! process committed, and the relay's wake-up. It depends on nothing else of
//! the worker, so the shared `Context` can hold it without depending on the
//! relay.

/// Outbox rows committed by this process and not yet handed to the relay,
/// and the relay's wake-up.
#[derive(Debug, Default)]
pub struct Committed {
    // std Mutex: held for a push or a drain, never across an await.
    ids: std::sync::Mutex<Vec<i64>>,
    scan_requested: std::sync::atomic::AtomicBool,
    wakeup: tokio::sync::Notify,
}

impl Committed {
    /// The row `id` was committed: publish it soon.
    pub fn push(&self, id: i64) {
        self.ids.lock().unwrap_or_else(|p| p.into_inner()).push(id);
        self.wakeup.notify_one();
    }

    /// Rows were committed whose ids are not known here: scan for them.
    pub fn wake(&self) {
        self.scan_requested
            .store(true, std::sync::atomic::Ordering::Release);
        self.wakeup.notify_one();
    }

    pub(super) fn take_scan_request(&self) -> bool {
        self.scan_requested
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    /// Whether no handed-over id waits.
    pub(super) fn is_idle(&self) -> bool {
        self.ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// Resolves when `push` or `wake` is called (or was, since the last wait).
    pub(super) async fn notified(&self) {
        self.wakeup.notified().await;
    }

    /// Up to `max` ids, oldest first.
    pub(super) fn take(&self, max: usize) -> Vec<i64> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        let n = ids.len().min(max);
        ids.drain(..n).collect()
    }
}
