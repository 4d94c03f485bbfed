//! Group writes of first versions: the handlers of one process that store
//! new documents at the same time share statements.
//!
//! Each handler puts its version in a queue, then waits for one of
//! `writers` slots; whoever gets a slot takes up to `max_batch` queued
//! versions (its own or others') and writes them with one statement
//! ([`super::first::store_first_versions`]). Nothing waits for a batch to
//! fill: a version that finds a slot free is written at once, alone, so an
//! idle worker's latency is that of one statement, and batches form only
//! while every slot is busy — under a backlog, where one commit, one WAL
//! flush and one statement start shared by several documents is what makes
//! the database cheaper per document (BENCHMARKS.md, issue 18).
//!
//! Why no version is left behind: every handler that queued a version
//! takes at least the oldest queued one once it has a slot, so the queue
//! is empty once every handler has had its turn. A version whose batch
//! failed, or whose document row existed, goes back to its own handler,
//! which stores it with the general transaction: an error is then that
//! version's own.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use shared::links::Link;
use shared::Chunk;
use sqlx::PgPool;
use time::OffsetDateTime;
use tokio::sync::{oneshot, Semaphore};

use crate::store::links::DocumentKeys;

use super::first::{store_first_versions, FirstVersion};
use super::{store_in_transaction, NewVersion, StoreError, StoreOutcome};

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

/// The group writer of one process (see the module docs).
#[derive(Debug)]
pub struct FirstVersions {
    queue: Mutex<VecDeque<JobSlot>>,
    writers: Semaphore,
    max_batch: usize,
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
            queue: Mutex::new(VecDeque::new()),
            writers: Semaphore::new(writers.max(1)),
            max_batch: max_batch.max(1),
        }
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
        self.lock().push_back(JobSlot(Job {
            version,
            keys,
            reply,
        }));
        {
            // Never closed: acquiring fails only after `close`.
            let _slot = self
                .writers
                .acquire()
                .await
                .map_err(|_| StoreError::Db(sqlx::Error::PoolClosed))?;
            let batch = self.take();
            if !batch.is_empty() {
                write(pool, batch).await;
            }
        }
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

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<JobSlot>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Up to `max_batch` queued jobs, oldest first, no two of one document
    /// id (a later one stays queued for the next batch); the oldest is
    /// always taken.
    fn take(&self) -> Vec<Job> {
        let mut queue = self.lock();
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
        kept.append(&mut queue);
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
