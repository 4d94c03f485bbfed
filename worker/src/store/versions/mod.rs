//! Storing one source version: `documents`, `source_versions`, all `chunks`
//! and the `chunking.completed` outbox row in ONE transaction.
//!
//! Concurrency: the document row is locked (`SELECT ... FOR UPDATE`) before
//! anything is decided, so two workers storing versions of the same document
//! serialize; the version ordering ([`is_newer`]) is then a plain comparison.
//! Idempotency: a version that is already stored is a no-op.
//! Links: a version that becomes current replaces its document's links in
//! the same transaction ([`crate::store::links`]).

mod chunks;
pub mod event;
mod first;
mod group;
mod lock;
mod precheck;
mod row;
mod turns;
mod types;
mod write;

pub use event::{change_set, completed_event_id, EVENTS_EXCHANGE, EVENT_NAMESPACE};
pub use first::{store_first_version, store_first_versions, FirstVersion};
pub use group::{FirstVersions, OwnedVersion};
pub use precheck::Prechecks;
pub use types::{
    is_newer, Existing, NewVersion, NewVersionKey, StoreError, StoreOutcome, VersionOrder,
};
pub use write::{store_later_version_with_links, store_version, store_version_with_links};

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;
    use time::OffsetDateTime;

    fn order(id: &str, seq: Option<i64>, at: Option<OffsetDateTime>) -> VersionOrder<'_> {
        VersionOrder {
            source_version_id: id,
            seq,
            occurred_at: at,
        }
    }

    #[test]
    fn sequence_numbers_decide_first() {
        let old = order("v9", Some(9), Some(datetime!(2026-01-02 0:00 UTC)));
        let new = order("v10", Some(10), Some(datetime!(2026-01-01 0:00 UTC)));
        assert!(is_newer(&new, &old));
        assert!(!is_newer(&old, &new));
    }

    #[test]
    fn occurred_at_decides_without_sequence_numbers() {
        let old = order("a", None, Some(datetime!(2026-01-01 0:00 UTC)));
        let new = order("b", None, Some(datetime!(2026-01-02 0:00 UTC)));
        assert!(is_newer(&new, &old));
        assert!(!is_newer(&old, &new));
    }

    #[test]
    fn ties_are_broken_by_version_id_whatever_the_order() {
        let a = order("a", Some(1), None);
        let b = order("b", Some(1), None);
        assert!(is_newer(&b, &a));
        assert!(!is_newer(&a, &b));
    }

    #[test]
    fn without_ordering_facts_the_later_arrival_wins() {
        assert!(is_newer(&order("a", None, None), &order("b", None, None)));
    }

    #[test]
    fn event_ids_are_stable() {
        assert_eq!(
            completed_event_id("t", "d", "v"),
            completed_event_id("t", "d", "v")
        );
        assert_ne!(
            completed_event_id("t", "d", "v"),
            completed_event_id("t", "d", "w")
        );
    }
}
