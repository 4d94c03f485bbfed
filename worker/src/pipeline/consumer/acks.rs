//! Acks, coalesced: one task per consume session sends every ack of the
//! channel, and acks a run of finished deliveries with one `multiple` ack.
//!
//! Why: a quorum queue appends each settle to its Raft log, and every ack
//! is a frame, a wake of the connection's writer and work for the broker's
//! channel process. Deliveries of one channel mostly finish in the order
//! they arrived, so most acks can ride on a later one.
//!
//! What it costs: an ack that waits keeps its delivery counted against the
//! prefetch. So a finished delivery waits only while the prefetch has room
//! beyond the worker's concurrency: up to half of `prefetch - concurrency`
//! acks (the batch; 1, no waiting, when the prefetch is not larger), and
//! never longer than [`LINGER`]. The worker's slots stay fed.
//!
//! The rule that keeps it safe: a `multiple` ack up to tag `t` settles every
//! unacked delivery of the channel at or below `t`, so it is only sent when
//! no delivery at or below `t` is still open (being handled, or held
//! without an ack because it is to be redelivered). A finished delivery
//! behind an open one waits too, and is acked on its own once a batch of
//! them waits or after [`LINGER`]: a slow document never holds more than a
//! batch of acks. Acks leave in the order they were decided, from one task,
//! so a `multiple` ack never overtakes one it covers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use lapin::options::BasicAckOptions;
use lapin::Channel;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::ops::metrics::Metrics;

/// How long a finished delivery waits for its ack at most.
const LINGER: Duration = Duration::from_millis(10);

/// How many acks may wait: half the prefetch beyond the concurrency, at
/// least 1 (every ack sent at once).
pub(super) fn batch(prefetch: u16, concurrency: usize) -> usize {
    (usize::from(prefetch).saturating_sub(concurrency) / 2).max(1)
}

/// What the consume loop and the settling tasks tell the ack task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    /// The channel delivered this tag; it is open until [`Note::Done`].
    Delivered(u64),
    /// This delivery may be acked.
    Done(u64),
}

/// One ack frame: `multiple` settles every delivery up to `tag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ack {
    tag: u64,
    multiple: bool,
    /// How many deliveries it settles.
    count: usize,
}

/// The open and finished tags of one channel (pure: no I/O).
#[derive(Debug)]
struct Window {
    /// How many finished deliveries wait before their acks go.
    batch: usize,
    /// Delivered, not yet finished (or never to be acked).
    open: BTreeSet<u64>,
    /// Finished, ack not yet sent.
    done: BTreeSet<u64>,
}

impl Window {
    fn new(batch: usize) -> Self {
        Self {
            batch: batch.max(1),
            open: BTreeSet::new(),
            done: BTreeSet::new(),
        }
    }

    fn note(&mut self, note: Note) {
        match note {
            Note::Delivered(tag) => {
                self.open.insert(tag);
            }
            Note::Done(tag) => {
                if self.open.remove(&tag) {
                    self.done.insert(tag);
                }
            }
        }
    }

    /// The acks to send now: one `multiple` ack for the finished deliveries
    /// below the oldest open one once a batch of them waits, and those
    /// behind it, each on its own, once a batch of them waits; everything
    /// on `flush`. At most `2 * batch - 2` acks wait.
    fn acks(&mut self, flush: bool) -> Vec<Ack> {
        let mut acks = Vec::new();
        let floor = self.open.first().copied().unwrap_or(u64::MAX);
        let behind = self.done.split_off(&floor);
        let below = std::mem::take(&mut self.done);
        if flush || below.len() >= self.batch {
            if let Some(&last) = below.last() {
                acks.push(Ack {
                    tag: last,
                    multiple: below.len() > 1,
                    count: below.len(),
                });
            }
        } else {
            self.done.extend(below);
        }
        if flush || behind.len() >= self.batch {
            acks.extend(behind.into_iter().map(|tag| Ack {
                tag,
                multiple: false,
                count: 1,
            }));
        } else {
            self.done.extend(behind);
        }
        acks
    }
}

/// The sending side, cloned into every settling task.
#[derive(Debug, Clone)]
pub(super) struct Acker {
    notes: mpsc::UnboundedSender<Note>,
}

impl Acker {
    /// Starts the ack task of `channel`; it ends, having sent every ack it
    /// was given, once every `Acker` is dropped.
    /// `batch`: see [`batch`].
    pub(super) fn start(
        channel: Channel,
        metrics: Arc<Metrics>,
        batch: usize,
    ) -> (Self, JoinHandle<()>) {
        let (notes, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(channel, metrics, Window::new(batch), rx));
        (Self { notes }, task)
    }

    /// Called by the consume loop for each delivery, before it is handled.
    pub(super) fn delivered(&self, tag: u64) {
        let _ = self.notes.send(Note::Delivered(tag));
    }

    /// The delivery may be acked (it is, soon, by the ack task).
    pub(super) fn ack(&self, tag: u64) {
        let _ = self.notes.send(Note::Done(tag));
    }
}

async fn run(
    channel: Channel,
    metrics: Arc<Metrics>,
    mut window: Window,
    mut rx: mpsc::UnboundedReceiver<Note>,
) {
    let mut notes = Vec::new();
    // When the oldest ack still waiting started to wait.
    let mut since: Option<Instant> = None;
    loop {
        let received = match since {
            Some(t) => tokio::time::timeout_at(t + LINGER, rx.recv_many(&mut notes, 256))
                .await
                .ok(),
            None => Some(rx.recv_many(&mut notes, 256).await),
        };
        let closed = received == Some(0);
        for note in notes.drain(..) {
            window.note(note);
        }
        // The linger ran out (None), or the session ends: send what waits.
        let flush = received.is_none() || closed;
        for ack in window.acks(flush) {
            let options = BasicAckOptions {
                multiple: ack.multiple,
            };
            match channel.basic_ack(ack.tag, options).await {
                Ok(()) => metrics.acked(ack.count as u64),
                Err(e) => {
                    tracing::warn!(error = %e, "ack failed; the broker redelivers the message and storing it again is a no-op");
                }
            }
        }
        since = match (window.done.is_empty(), since) {
            (true, _) => None,
            (false, Some(t)) => Some(t),
            (false, None) => Some(Instant::now()),
        };
        if closed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(window: &mut Window, notes: &[Note], flush: bool) -> Vec<(u64, bool, usize)> {
        for &n in notes {
            window.note(n);
        }
        window
            .acks(flush)
            .into_iter()
            .map(|a| (a.tag, a.multiple, a.count))
            .collect()
    }

    use Note::{Delivered as D, Done as F};

    fn delivered(window: &mut Window, tags: std::ops::RangeInclusive<u64>) {
        for tag in tags {
            window.note(D(tag));
        }
    }

    #[test]
    fn the_batch_is_half_the_prefetch_beyond_the_concurrency() {
        assert_eq!(batch(16, 8), 4);
        assert_eq!(batch(8, 4), 2);
        assert_eq!(batch(8, 8), 1);
        assert_eq!(batch(1, 1), 1);
        assert_eq!(batch(4, 8), 1);
    }

    #[test]
    fn in_order_runs_go_in_one_multiple_ack_once_a_batch_waits() {
        let mut w = Window::new(3);
        delivered(&mut w, 1..=5);
        assert_eq!(run(&mut w, &[F(1), F(2)], false), vec![]);
        assert_eq!(run(&mut w, &[F(3)], false), vec![(3, true, 3)]);
        // Fewer than a batch goes on the flush (linger, end of session).
        assert_eq!(run(&mut w, &[F(4)], false), vec![]);
        assert_eq!(run(&mut w, &[], true), vec![(4, false, 1)]);
        assert_eq!(w.open.iter().copied().collect::<Vec<_>>(), vec![5]);
    }

    #[test]
    fn out_of_order_finishes_still_go_in_one_ack() {
        let mut w = Window::new(4);
        delivered(&mut w, 1..=8);
        assert_eq!(run(&mut w, &[F(2), F(1), F(4)], false), vec![]);
        assert_eq!(run(&mut w, &[F(3)], false), vec![(4, true, 4)]);
        assert!(w.done.is_empty());
    }

    #[test]
    fn a_batch_of_one_acks_at_once() {
        let mut w = Window::new(0);
        delivered(&mut w, 1..=2);
        assert_eq!(run(&mut w, &[F(1)], false), vec![(1, false, 1)]);
        assert_eq!(run(&mut w, &[F(2)], false), vec![(2, false, 1)]);
    }

    #[test]
    fn a_multiple_ack_never_covers_an_open_delivery() {
        let mut w = Window::new(3);
        delivered(&mut w, 1..=6);
        // 2 is still open: 1 waits below it, 3 and 4 behind it.
        assert_eq!(run(&mut w, &[F(1), F(3), F(4)], false), vec![]);
        // A batch behind it: 3, 4 and 5 go, each on its own; 1 still waits.
        assert_eq!(
            run(&mut w, &[F(5)], false),
            vec![(3, false, 1), (4, false, 1), (5, false, 1)]
        );
        // 2 finishes; on the flush one multiple ack up to 2 covers 1 and 2
        // (3 to 5 are acked already).
        assert_eq!(run(&mut w, &[F(2)], true), vec![(2, true, 2)]);
        assert_eq!(w.open.iter().copied().collect::<Vec<_>>(), vec![6]);
        // 6 and a later run: one ack up to the highest, covering 6 too.
        delivered(&mut w, 7..=8);
        assert_eq!(run(&mut w, &[F(8), F(7), F(6)], false), vec![(8, true, 3)]);
    }

    #[test]
    fn a_delivery_held_without_an_ack_is_never_covered() {
        let mut w = Window::new(2);
        delivered(&mut w, 1..=10);
        // 1 never finishes (it is to be redelivered): what finishes behind
        // it goes on its own, a batch at a time.
        for pair in [[2, 3], [4, 5], [6, 7]] {
            assert_eq!(
                run(&mut w, &[F(pair[0]), F(pair[1])], false),
                vec![(pair[0], false, 1), (pair[1], false, 1)]
            );
        }
        assert_eq!(run(&mut w, &[F(8)], true), vec![(8, false, 1)]);
        assert!(w.open.contains(&1) && w.done.is_empty());
    }

    #[test]
    fn a_done_without_a_delivery_or_twice_sends_nothing() {
        let mut w = Window::new(1);
        assert_eq!(run(&mut w, &[F(9)], true), vec![]);
        w.note(D(1));
        assert_eq!(run(&mut w, &[F(1)], false), vec![(1, false, 1)]);
        assert_eq!(run(&mut w, &[F(1)], true), vec![]);
    }
}
