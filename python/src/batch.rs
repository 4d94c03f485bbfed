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
    let results: Vec<Mutex<Option<Outcome>>> = slots.iter().map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = slots.get(i) else { break };
        let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some((bytes, args)) = taken else { continue };
        let id = args.document_id.clone();
        let outcome = prepare(bytes, format, &args)
            .and_then(|p| engine.chunk(&p.markdown, &p.meta, Some(profile)))
            .map(|d| d.chunks)
            .map_err(|e| (id, e));
        *results[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or_else(|| {
                    Err((
                        String::new(),
                        ChunkError::Embedding("a worker thread stopped".into()),
                    ))
                })
        })
        .collect()
}
