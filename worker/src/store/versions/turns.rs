//! The queue loop that the group writer ([`super::group`]) and the group
//! pre-check ([`super::precheck`]) share: a handler that has queued its job
//! asks for its turn until it has run a batch (its own job or others') or
//! found the queue empty, and waits for a running batch to end in between.

use std::future::Future;

use tokio::sync::Notify;

/// What a handler in the loop does next.
pub(super) enum Turn<B> {
    /// Run this batch, then leave the loop.
    Run(B),
    /// Nothing queued: its job was taken by another's batch.
    Done,
    /// Wait for a running batch to end.
    Wait,
}

/// Asks `turn` until it says run (then runs the batch with `run`) or done;
/// waits for `ended` in between. `ended` is registered before each `turn`,
/// so an end between the two still wakes the handler.
pub(super) async fn take_turns<B, F, Fut>(ended: &Notify, mut turn: impl FnMut() -> Turn<B>, run: F)
where
    F: FnOnce(B) -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        let notified = ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        match turn() {
            Turn::Run(batch) => {
                run(batch).await;
                return;
            }
            Turn::Done => return,
            Turn::Wait => notified.await,
        }
    }
}
