//! `Engine.chunk_many`'s work: documents spread over threads, each taking
//! the next, results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use shared::ChunkError;

use crate::document::{prepare, Format, MetaArgs};

/// One result per input, in order; a failure carries the document id.
pub type Outcome = Result<Vec<shared::Chunk>, (String, ChunkError)>;

/// A document waiting for a thread to take it.
type Slot = Mutex<Option<(Vec<u8>, MetaArgs)>>;

/// Chunks `inputs` on `threads` threads, each taking the next document.
pub fn chunk_parallel(
    engine: &shared::Engine,
    profile: &str,
    format: Format,
    inputs: Vec<(Vec<u8>, MetaArgs)>,
    threads: usize,
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Slot> = inputs.into_iter().map(|i| Mutex::new(Some(i))).collect();
    // Each thread returns what it did, by input index; every index is taken
    // by exactly one thread.
    let work = || {
        let mut done: Vec<(usize, Outcome)> = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            let Some((bytes, args)) = taken else { continue };
            let id = args.document_id.clone();
            let outcome = prepare(bytes, format, &args)
                .and_then(|p| engine.chunk(&p.markdown, &p.meta, Some(profile)))
                .map(|d| d.chunks)
                .map_err(|e| (id, e));
            done.push((i, outcome));
        }
        done
    };
    let mut all = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in handles {
            match h.join() {
                Ok(done) => all.extend(done),
                // A panic stays a panic (PyO3 turns it into PanicException).
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, outcome)| outcome).collect()
}
