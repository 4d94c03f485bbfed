//! The memory budget of the messages in flight (`worker.memory_budget_mb`).
//!
//! `worker.concurrency` counts messages; what a message holds grows with
//! its document: from chunking until it is stored, about
//! [`HELD_PER_BYTE`] times the document's size (the bytes, the normalized
//! text, every chunk's text and embed text, the statement's arrays). So
//! that a high concurrency for the usual small documents cannot add up to
//! more memory than the budget when large ones arrive together, a message
//! holds its share of the budget from when its document is read until it
//! is stored; a message whose share does not fit waits for others to
//! finish. A document larger than the whole budget holds all of it (it
//! runs alone rather than never).

use tokio::sync::{Semaphore, SemaphorePermit};

/// Bytes a message in flight holds per byte of its document, at most
/// (about 9x; docs/benchmarks-log.md, issue 18).
pub const HELD_PER_BYTE: u64 = 9;

/// The budget's unit: KiB, so that a budget of terabytes still counts in
/// a `u32`.
const UNIT: u64 = 1024;

/// The budget of one worker process.
#[derive(Debug)]
pub struct MemoryBudget {
    permits: Semaphore,
    total: u32,
}

impl MemoryBudget {
    /// A budget of `bytes` (at least one unit).
    pub fn new(bytes: u64) -> Self {
        let total = u32::try_from((bytes / UNIT).max(1)).unwrap_or(u32::MAX);
        Self {
            permits: Semaphore::new(total as usize),
            total,
        }
    }

    /// The units a document of `document_bytes` holds: its share, at least
    /// one unit and at most the whole budget.
    fn units(&self, document_bytes: usize) -> u32 {
        let held = (document_bytes as u64).saturating_mul(HELD_PER_BYTE);
        let units = held.div_ceil(UNIT).clamp(1, u64::from(self.total));
        u32::try_from(units).unwrap_or(self.total)
    }

    /// Waits until a document of `document_bytes` fits in what is left of
    /// the budget and holds its share until the returned permit is dropped.
    pub async fn hold(&self, document_bytes: usize) -> Option<SemaphorePermit<'_>> {
        // The semaphore is never closed, so this only fails if it were.
        self.permits
            .acquire_many(self.units(document_bytes))
            .await
            .ok()
    }

    /// Units of the budget not held now.
    pub fn available_units(&self) -> usize {
        self.permits.available_permits()
    }

    /// Bytes of the budget the messages in flight hold now
    /// (`chunking_memory_budget_held_bytes`).
    pub fn held_bytes(&self) -> u64 {
        let available = u64::try_from(self.available_units()).unwrap_or(u64::MAX);
        u64::from(self.total).saturating_sub(available) * UNIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_holds_nine_times_its_size_rounded_up_and_at_most_all() {
        let budget = MemoryBudget::new(90 * 1024);
        assert_eq!(budget.units(0), 1);
        assert_eq!(budget.units(1), 1);
        assert_eq!(budget.units(1024), 9);
        assert_eq!(budget.units(1025), 10);
        assert_eq!(budget.units(10 * 1024), 90);
        assert_eq!(
            budget.units(usize::MAX),
            90,
            "larger than the budget: all of it"
        );
        assert_eq!(MemoryBudget::new(0).total, 1);
    }

    #[tokio::test]
    async fn a_document_that_does_not_fit_waits_until_another_is_done() {
        let budget = MemoryBudget::new(90 * 1024);
        assert_eq!(budget.held_bytes(), 0);
        let first = budget.hold(6 * 1024).await; // 54 units
        assert_eq!(budget.available_units(), 36);
        assert_eq!(budget.held_bytes(), 54 * 1024);
        let second =
            tokio::time::timeout(std::time::Duration::from_millis(50), budget.hold(6 * 1024)).await;
        assert!(second.is_err(), "54 more units do not fit in 36");
        drop(first);
        let second = budget.hold(6 * 1024).await;
        assert!(second.is_some());
        assert_eq!(budget.available_units(), 36);
        // A document larger than the budget waits for all of it, then runs.
        let huge =
            tokio::time::timeout(std::time::Duration::from_millis(50), budget.hold(1 << 30)).await;
        assert!(huge.is_err());
        drop(second);
        assert!(budget.hold(1 << 30).await.is_some());
    }
}
