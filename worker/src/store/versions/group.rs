//! Group writes of first versions: the handlers of one process that store
//! new documents at the same time share statements.
//!
//! Each handler puts its version in a queue; a handler that may start a
//! statement takes up to `max_batch` queued versions (its own or others')
//! and writes them with one statement
//! ([`super::first::store_first_versions`]). When no statement is running,
//! a version is written at once, alone if nothing else is queued: an idle
//! worker's latency is that of one statement. While one runs, the next
//! starts only once [`PARALLEL_MIN`] versions wait (at most `writers` run at
//! once); otherwise the queue grows until a statement ends, and the next
//! one takes what queued meanwhile. So batches grow with the load, and one
//! commit, one WAL flush and one statement start are shared by several
//! documents, which is what makes the database cheaper per document under
//! a backlog (docs/benchmarks-log.md, issue 18).
//!
//! Why no version is left behind: a handler leaves the queue's loop only
//! after writing a batch, which takes at least the oldest queued version,
//! or on finding the queue empty; so the queue never holds more versions
//! than handlers still in the loop, and it is empty once every handler has
//! left. A handler waits in the loop only while a statement runs, whose end
//! wakes it. A version whose batch failed, or whose document row existed,
//! goes back to its own handler, which stores it with the general
//! transaction: an error is then that version's own.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use shared::links::Link;
use shared::Chunk;
use sqlx::PgPool;
use time::OffsetDateTime;
use tokio::sync::{oneshot, Notify};

use crate::store::links::DocumentKeys;

use super::first::{store_first_versions, FirstVersion};
use super::turns::{take_turns, Turn};
use super::types::{NewVersion, StoreError, StoreOutcome};
use super::write::store_in_transaction;

/// A version with everything it stores, owned, so that another handler's
/// statement can write it.
#[derive(Debug)]
pub struct OwnedVersion {
    /// Owning tenant.
    pub tenant_id: String,
    /// Document id.
    pub document_id: String,
    /// Source version id.
    pub source_version_id: String,
    /// Upstream's version number, if any.
    pub source_version_seq: Option<i64>,
    /// Upstream's timestamp, if any.
    pub occurred_at: Option<OffsetDateTime>,
    /// `confluence` / `file` / `html`.
    pub source_type: Option<&'static str>,
    /// The input message's event id.
    pub causation_id: String,
    /// Correlation id.
    pub correlation_id: Option<String>,
    /// sha256 hex of the markdown bytes.
    pub content_sha256: String,
    /// The normalized document.
    pub normalized: String,
    /// The input's metadata object.
    pub metadata: serde_json::Value,
    /// Profile name.
    pub profile: String,
    /// `strategy:version`.
    pub chunker_version: String,
    /// Tokenizer name.
    pub tokenizer: String,
    /// The validated chunks, in ordinal order.
    pub chunks: Vec<Chunk>,
    /// AMQP headers of the event (trace context).
    pub event_headers: serde_json::Value,
    /// The links found in it.
    pub links: Vec<Link>,
}

impl OwnedVersion {
    /// The version as the store functions take it.
    pub fn view(&self) -> NewVersion<'_> {
        NewVersion {
            tenant_id: &self.tenant_id,
            document_id: &self.document_id,
            source_version_id: &self.source_version_id,
            source_version_seq: self.source_version_seq,
            occurred_at: self.occurred_at,
            source_type: self.source_type,
            causation_id: &self.causation_id,
            correlation_id: self.correlation_id.as_deref(),
            content_sha256: self.content_sha256.clone(),
            normalized: &self.normalized,
            metadata: self.metadata.clone(),
            profile: &self.profile,
            chunker_version: &self.chunker_version,
            tokenizer: &self.tokenizer,
            chunks: &self.chunks,
            event_headers: self.event_headers.clone(),
        }
    }
}

/// A queued version and where its outcome goes.
struct Job {
    version: OwnedVersion,
    keys: DocumentKeys,
    reply: oneshot::Sender<Reply>,
}

/// What a writer tells a queued version's handler.
enum Reply {
    /// Stored by the batch.
    Stored(StoreOutcome),
    /// Not written (its document row existed, or the batch failed): the
    /// handler stores it with the general transaction.
    Back(Box<(OwnedVersion, DocumentKeys)>),
    /// A batch of this version alone failed: its error.
    Failed(StoreError),
}

/// How many versions must wait before a statement starts beside one that
/// is running. A `pgbench` model of the write (docs/benchmarks-log.md, 2026-12-02
/// third session) put the database's cost per document at 1,565/s with one
/// document a statement, 2,383/s with 4 and 2,540/s with 8: a second
/// statement for fewer than 4 documents costs more than it gains.
pub const PARALLEL_MIN: usize = 4;

/// The group writer of one process (see the module docs).
#[derive(Debug)]
pub struct FirstVersions {
    state: Mutex<State>,
    /// Woken when a statement ends.
    ended: Notify,
    writers: usize,
    max_batch: usize,
    /// Statements started, and the versions they took (`/metrics`).
    statements: AtomicU64,
    documents: AtomicU64,
}

/// The queue and the statements running.
#[derive(Debug, Default)]
struct State {
    queue: VecDeque<JobSlot>,
    running: usize,
}

/// Counts a statement as running until dropped, even when the handler's
/// future is dropped mid-statement, and then wakes the waiting handlers.
struct Running<'a>(&'a FirstVersions);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.lock().running -= 1;
        self.0.ended.notify_waiters();
    }
}

/// `Job` without a `Debug` of its document text.
struct JobSlot(Job);

impl std::fmt::Debug for JobSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("document_id", &self.0.version.document_id)
            .finish_non_exhaustive()
    }
}

impl FirstVersions {
    /// At most `writers` statements at once, each of at most `max_batch`
    /// versions (both at least 1).
    pub fn new(writers: usize, max_batch: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            ended: Notify::new(),
            writers: writers.max(1),
            max_batch: max_batch.max(1),
            statements: AtomicU64::new(0),
            documents: AtomicU64::new(0),
        }
    }

    /// Statements started so far, and the versions they took: their
    /// ratio is the mean batch.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.statements.load(Ordering::Relaxed),
            self.documents.load(Ordering::Relaxed),
        )
    }

    /// Stores `version`, a version whose document row a check did not
    /// find: with others' in one statement when it fits that path, else
    /// (or when its row turns out to exist) by the general transaction.
    pub async fn store(
        &self,
        pool: &PgPool,
        version: OwnedVersion,
    ) -> Result<StoreOutcome, StoreError> {
        let keys = DocumentKeys::from_metadata(&version.metadata);
        if keys.takes_part_in_resolution(&version.links) {
            return store_in_transaction(pool, &version.view(), &version.links, &keys).await;
        }
        let (reply, answer) = oneshot::channel();
        self.lock().queue.push_back(JobSlot(Job {
            version,
            keys,
            reply,
        }));
        take_turns(
            &self.ended,
            || self.turn(),
            |batch| async move {
                let _running = Running(self);
                write(pool, batch).await;
            },
        )
        .await;
        match answer.await {
            Ok(Reply::Stored(outcome)) => Ok(outcome),
            Ok(Reply::Back(back)) => {
                let (version, keys) = *back;
                store_in_transaction(pool, &version.view(), &version.links, &keys).await
            }
            Ok(Reply::Failed(e)) => Err(e),
            // The writer that held it was cancelled mid-statement (the
            // worker is stopping): retried, and idempotent if it committed.
            Err(_) => Err(StoreError::Db(sqlx::Error::WorkerCrashed)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the calling handler writes a batch now (then counted as
    /// running), leaves the loop, or waits.
    fn turn(&self) -> Turn<Vec<Job>> {
        let mut state = self.lock();
        let queued = state.queue.len();
        if queued == 0 {
            return Turn::Done;
        }
        let may_start =
            state.running == 0 || (state.running < self.writers && queued >= PARALLEL_MIN);
        if !may_start {
            return Turn::Wait;
        }
        state.running += 1;
        let batch = self.take(&mut state.queue);
        self.statements.fetch_add(1, Ordering::Relaxed);
        self.documents
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        Turn::Run(batch)
    }

    /// Up to `max_batch` queued jobs, oldest first, no two of one document
    /// id (a later one stays queued for the next batch); the oldest is
    /// always taken.
    fn take(&self, queue: &mut VecDeque<JobSlot>) -> Vec<Job> {
        let mut ids = HashSet::new();
        let mut batch = Vec::new();
        let mut kept = VecDeque::new();
        while let Some(JobSlot(job)) = queue.pop_front() {
            if batch.len() == self.max_batch {
                kept.push_back(JobSlot(job));
                break;
            }
            if ids.insert(job.version.document_id.clone()) {
                batch.push(job);
            } else {
                kept.push_back(JobSlot(job));
            }
        }
        kept.append(queue);
        *queue = kept;
        batch
    }
}

/// Writes `batch` with one statement and answers each job.
async fn write(pool: &PgPool, batch: Vec<Job>) {
    let views: Vec<NewVersion<'_>> = batch.iter().map(|j| j.version.view()).collect();
    let items: Vec<FirstVersion<'_>> = batch
        .iter()
        .zip(&views)
        .map(|(j, v)| FirstVersion {
            version: v,
            links: &j.version.links,
            keys: &j.keys,
        })
        .collect();
    let result = store_first_versions(pool, &items).await;
    drop(items);
    drop(views);
    match result {
        Ok(outcomes) => {
            for (job, outcome) in batch.into_iter().zip(outcomes) {
                let reply = match outcome {
                    Some(stored) => Reply::Stored(stored),
                    None => Reply::Back(Box::new((job.version, job.keys))),
                };
                // A handler that went away has nothing to be told.
                let _ = job.reply.send(reply);
            }
        }
        Err(e) if batch.len() == 1 => {
            if let Some(job) = batch.into_iter().next() {
                let _ = job.reply.send(Reply::Failed(e));
            }
        }
        Err(_) => {
            for job in batch {
                let _ = job
                    .reply
                    .send(Reply::Back(Box::new((job.version, job.keys))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(document_id: &str) -> JobSlot {
        let (reply, _) = oneshot::channel();
        JobSlot(Job {
            version: OwnedVersion {
                tenant_id: "acme".into(),
                document_id: document_id.into(),
                source_version_id: "v1".into(),
                source_version_seq: None,
                occurred_at: None,
                source_type: None,
                causation_id: "c".into(),
                correlation_id: None,
                content_sha256: String::new(),
                normalized: String::new(),
                metadata: serde_json::Value::Null,
                profile: "spec-v1".into(),
                chunker_version: "x".into(),
                tokenizer: "cl100k_base".into(),
                chunks: Vec::new(),
                event_headers: serde_json::Value::Null,
                links: Vec::new(),
            },
            keys: DocumentKeys::default(),
            reply,
        })
    }

    fn writer(running: usize, queued: &[&str]) -> FirstVersions {
        let w = FirstVersions::new(3, 16);
        let mut state = w.lock();
        state.running = running;
        state.queue.extend(queued.iter().map(|d| job(d)));
        drop(state);
        w
    }

    fn batch_ids(turn: Turn<Vec<Job>>) -> Option<Vec<String>> {
        match turn {
            Turn::Run(batch) => Some(batch.into_iter().map(|j| j.version.document_id).collect()),
            Turn::Done | Turn::Wait => None,
        }
    }

    #[test]
    fn with_nothing_running_one_version_is_written_at_once() {
        let w = writer(0, &["a"]);
        assert_eq!(batch_ids(w.turn()), Some(vec!["a".to_string()]));
        assert_eq!(w.lock().running, 1);
        assert!(matches!(w.turn(), Turn::Done));
    }

    #[test]
    fn beside_a_running_statement_a_few_versions_wait_for_it() {
        let w = writer(1, &["a", "b", "c"]);
        assert!(matches!(w.turn(), Turn::Wait));
        assert_eq!(w.lock().running, 1);
        w.lock().queue.push_back(job("d"));
        assert_eq!(
            batch_ids(w.turn()),
            Some(
                vec!["a", "b", "c", "d"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(w.lock().running, 2);
    }

    #[test]
    fn no_more_statements_than_writers_however_long_the_queue() {
        let w = writer(3, &["a", "b", "c", "d", "e", "f"]);
        assert!(matches!(w.turn(), Turn::Wait));
        // One ends: the waiting handler takes the queue.
        drop(Running(&w));
        assert_eq!(batch_ids(w.turn()).map(|b| b.len()), Some(6));
        assert_eq!(w.totals(), (1, 6));
    }

    #[test]
    fn a_batch_holds_one_version_of_a_document_and_at_most_max_batch() {
        let w = FirstVersions::new(1, 2);
        w.lock()
            .queue
            .extend(["a", "a", "b", "c"].iter().map(|d| job(d)));
        assert_eq!(
            batch_ids(w.turn()),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        let left: Vec<String> = w
            .lock()
            .queue
            .iter()
            .map(|j| j.0.version.document_id.clone())
            .collect();
        assert_eq!(left, vec!["a".to_string(), "c".to_string()]);
    }

    #[tokio::test]
    async fn a_statement_that_ends_wakes_a_waiting_handler() {
        let w = writer(1, &["a"]);
        let ended = w.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        assert!(matches!(w.turn(), Turn::Wait));
        drop(Running(&w));
        tokio::time::timeout(std::time::Duration::from_secs(5), ended)
            .await
            .expect("woken");
        assert!(matches!(w.turn(), Turn::Run(_)));
    }
}
