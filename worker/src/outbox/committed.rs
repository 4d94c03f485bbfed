//! The hand-over from the store to the relay: events of outbox rows this
//! process committed, and the relay's wake-up. It depends on nothing else of
//! the worker, so the shared `Context` can hold it without depending on the
//! relay.

use std::collections::VecDeque;

use uuid::Uuid;

/// At most this many committed events wait in memory; past it, an event
/// is left to the scan, which finds it once its lease ([`super::HANDOVER_LEASE_SECS`])
/// has run out. It bounds the memory a relay cut off from the broker holds.
pub const MAX_HANDED_OVER: usize = 2_000;

/// A committed outbox row, as the relay publishes it: the same values as
/// the row, so the relay needs no database read to publish.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Pending {
    /// The outbox row's id.
    pub id: i64,
    /// The event's id (the AMQP message id).
    pub event_id: Uuid,
    /// Logical exchange name.
    pub exchange: String,
    /// Routing key.
    pub routing_key: String,
    /// The exact JSON bytes of the event.
    pub payload: String,
    /// AMQP headers (a JSON object of strings).
    pub headers: serde_json::Value,
    /// Delivery attempts so far (0 for a new row).
    pub attempts: i32,
}

/// Events committed by this process and not yet handed to the relay, and
/// the relay's wake-up.
#[derive(Debug, Default)]
pub struct Committed {
    // std Mutex: held for a push or a drain, never across an await.
    events: std::sync::Mutex<VecDeque<Pending>>,
    scan_requested: std::sync::atomic::AtomicBool,
    wakeup: tokio::sync::Notify,
}

impl Committed {
    /// The row of `event` was committed (with its lease): publish it soon.
    pub fn push(&self, event: Pending) {
        {
            let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
            if events.len() < MAX_HANDED_OVER {
                events.push_back(event);
            } else {
                // Left to the scan once its lease runs out.
                self.scan_requested
                    .store(true, std::sync::atomic::Ordering::Release);
            }
        }
        self.wakeup.notify_one();
    }

    /// Rows were committed that are not handed over here: scan for them.
    pub fn wake(&self) {
        self.scan_requested
            .store(true, std::sync::atomic::Ordering::Release);
        self.wakeup.notify_one();
    }

    pub(super) fn take_scan_request(&self) -> bool {
        self.scan_requested
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    /// Resolves when `push` or `wake` is called (or was, since the last wait).
    pub(super) async fn notified(&self) {
        self.wakeup.notified().await;
    }

    /// Up to `max` events, oldest first.
    pub(super) fn take(&self, max: usize) -> Vec<Pending> {
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let n = events.len().min(max);
        events.drain(..n).collect()
    }

    /// Puts events that could not be published back in front, in order;
    /// past the bound, the newest are left to the scan, as in `push`.
    pub(super) fn put_back(&self, back: Vec<Pending>) {
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        for event in back.into_iter().rev() {
            events.push_front(event);
        }
        if events.len() > MAX_HANDED_OVER {
            events.truncate(MAX_HANDED_OVER);
            self.scan_requested
                .store(true, std::sync::atomic::Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    fn event(id: i64) -> Pending {
        Pending {
            id,
            event_id: Uuid::nil(),
            exchange: "x".into(),
            routing_key: "r".into(),
            payload: "{}".into(),
            headers: serde_json::json!({}),
            attempts: 0,
        }
    }

    fn ids(events: &[Pending]) -> Vec<i64> {
        events.iter().map(|e| e.id).collect()
    }

    #[test]
    fn events_come_out_in_commit_order_and_put_back_ones_first() {
        let c = Committed::default();
        for id in 1..=5 {
            c.push(event(id));
        }
        let first = c.take(2);
        assert_eq!(ids(&first), [1, 2]);
        c.put_back(first);
        assert_eq!(ids(&c.take(10)), [1, 2, 3, 4, 5]);
        assert!(c.take(10).is_empty());
        assert!(!c.take_scan_request());
    }

    #[test]
    fn past_the_bound_events_are_left_to_the_scan() {
        let c = Committed::default();
        for id in 0..=i64::try_from(MAX_HANDED_OVER).unwrap() {
            c.push(event(id));
        }
        let held = c.take(usize::MAX);
        assert_eq!(held.len(), MAX_HANDED_OVER);
        assert_eq!(held.last().unwrap().id, MAX_HANDED_OVER as i64 - 1);
        assert!(c.take_scan_request(), "the dropped event is scanned for");
    }

    #[test]
    fn events_put_back_past_the_bound_leave_the_newest_to_the_scan() {
        let c = Committed::default();
        let bound = i64::try_from(MAX_HANDED_OVER).unwrap();
        for id in 10..10 + bound {
            c.push(event(id));
        }
        assert!(!c.take_scan_request());
        // Events taken earlier, not confirmed, come back in front of a full
        // hand-over: the newest held events are dropped and scanned for.
        c.put_back((0..10).map(event).collect());
        let held = c.take(usize::MAX);
        assert_eq!(held.len(), MAX_HANDED_OVER);
        assert_eq!(ids(&held[..3]), [0, 1, 2]);
        assert_eq!(held.last().unwrap().id, bound - 1);
        assert!(c.take_scan_request(), "the dropped events are scanned for");
    }
}
