//! Group pre-checks: the handlers of one process that check for their
//! versions at the same time share one query.
//!
//! Before reading and chunking a message, its handler asks whether the
//! version is stored already (a redelivery is then acknowledged without
//! being chunked again), whether its document belongs to another tenant,
//! and whether the document has a row at all (which decides the write path,
//! see [`super::first`]). Asked one by one, that is a round trip a document
//! (and a wake-up of the server's backend, and the pool's ping of the
//! connection given back). Here a handler queues its key; when no check is
//! running it checks everything queued (its key and others', up to
//! [`MAX_BATCH`]) with one query, otherwise it waits for the running check
//! to end, and the next check takes what queued meanwhile. An idle worker's
//! check is still one query; under load one query answers several
//! handlers.
//!
//! Why no key is left behind: as in [`super::group`], a handler leaves the
//! loop only after running a check, which takes at least the oldest queued
//! key, or on finding the queue empty; so the queue never holds more keys
//! than handlers still in the loop. A check of several keys that fails
//! sends each key back to its own handler, which checks it alone: an
//! error is then that version's own, as it was with one query a document.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use sqlx::{PgPool, Row};
use tokio::sync::{oneshot, Notify};

use super::turns::{take_turns, Turn};
use super::types::{Existing, NewVersionKey};

/// Most keys one query checks.
pub const MAX_BATCH: usize = 64;

/// The query: one row per key whose document row exists, with the owning
/// tenant and whether the version is stored. Each key is looked up by the
/// unique index on `documents.document_id` (a subquery per key, kept apart
/// by `OFFSET 0`) and the primary key of `source_versions` (a scalar
/// subquery, which Postgres never turns into a hash of the whole table, as
/// it may an `EXISTS` planned while the table was young), so the plan does
/// not depend on the tables' size or statistics.
///
/// The arrays are read through scalar subqueries so that a custom plan
/// cannot see their length: its estimate is then the generic plan's, and
/// after its first five executions on a connection Postgres keeps the
/// generic plan instead of planning each check anew. Given the arrays
/// directly, every custom plan looked cheaper than the generic one (its
/// estimate counted the few keys of that check, the generic one 100), so
/// every check was planned: 0.13 ms of planning against 0.02 ms of
/// execution (`pg_stat_statements` with `track_planning`, docs/benchmarks-log.md,
/// issue 18, 2026-12-03 second session).
const SQL: &str = "SELECT k.n, d.tenant_id, coalesce((SELECT true FROM source_versions s \
       WHERE s.tenant_id = d.tenant_id AND s.document_id = k.document_id \
         AND s.source_version_id = k.source_version_id), false) \
     FROM UNNEST((SELECT $1::text[]), (SELECT $2::text[])) \
       WITH ORDINALITY AS k(document_id, source_version_id, n) \
     CROSS JOIN LATERAL (SELECT tenant_id FROM documents \
       WHERE document_id = k.document_id OFFSET 0) d";

/// The pre-checker of one process (see the module docs).
#[derive(Debug, Default)]
pub struct Prechecks {
    state: Mutex<State>,
    /// Woken when a check ends.
    ended: Notify,
    /// Queries run so far, and the keys they checked (`/metrics`).
    queries: AtomicU64,
    keys: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Job>,
    running: bool,
}

/// A queued key and where its answer goes.
#[derive(Debug)]
struct Job {
    tenant_id: String,
    document_id: String,
    source_version_id: String,
    reply: oneshot::Sender<Answer>,
}

impl Job {
    /// A job for `key`, and where its answer arrives.
    fn new(key: &NewVersionKey<'_>) -> (Self, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        let job = Self {
            tenant_id: key.tenant_id.to_owned(),
            document_id: key.document_id.to_owned(),
            source_version_id: key.source_version_id.to_owned(),
            reply,
        };
        (job, answer)
    }
}

/// What a check tells a queued key's handler.
#[derive(Debug)]
enum Answer {
    /// The key's answer.
    Known(Existing),
    /// The check of several keys failed: check this one alone.
    Alone,
    /// The check of this key alone failed: its error.
    Failed(sqlx::Error),
}

/// Marks the check as running until dropped (also when the handler's
/// future is dropped mid-query), then wakes the waiting handlers.
struct Running<'a>(&'a Prechecks);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.lock().running = false;
        self.0.ended.notify_waiters();
    }
}

impl Prechecks {
    /// A pre-checker with nothing queued.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queries run so far, and the keys they checked: their ratio is the
    /// mean batch.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.queries.load(Ordering::Relaxed),
            self.keys.load(Ordering::Relaxed),
        )
    }

    /// Whether `key`'s version is stored (see [`Existing`]), checked with
    /// the keys of other handlers asking at the same time.
    pub async fn check(
        &self,
        pool: &PgPool,
        key: &NewVersionKey<'_>,
    ) -> Result<Existing, sqlx::Error> {
        let (job, answer) = Job::new(key);
        self.lock().queue.push_back(job);
        take_turns(
            &self.ended,
            || self.turn(),
            |batch| async move {
                let _running = Running(self);
                run(pool, batch).await;
            },
        )
        .await;
        match answer.await {
            Ok(Answer::Alone) => {
                let (job, answer) = Job::new(key);
                self.queries.fetch_add(1, Ordering::Relaxed);
                run(pool, vec![job]).await;
                settle(answer.await)
            }
            other => settle(other),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the calling handler checks a batch now (then marked as
    /// running), leaves the loop, or waits.
    fn turn(&self) -> Turn<Vec<Job>> {
        let mut state = self.lock();
        if state.queue.is_empty() {
            return Turn::Done;
        }
        if state.running {
            return Turn::Wait;
        }
        state.running = true;
        let n = state.queue.len().min(MAX_BATCH);
        let batch: Vec<Job> = state.queue.drain(..n).collect();
        self.queries.fetch_add(1, Ordering::Relaxed);
        self.keys.fetch_add(batch.len() as u64, Ordering::Relaxed);
        Turn::Run(batch)
    }
}

/// Checks `batch` with one query and answers each job.
async fn run(pool: &PgPool, batch: Vec<Job>) {
    let documents: Vec<&str> = batch.iter().map(|j| j.document_id.as_str()).collect();
    let versions: Vec<&str> = batch.iter().map(|j| j.source_version_id.as_str()).collect();
    let found = sqlx::query(SQL)
        .bind(&documents)
        .bind(&versions)
        .fetch_all(pool)
        .await
        .and_then(|rows| {
            let mut owners: Vec<Option<(String, bool)>> = vec![None; batch.len()];
            for row in rows {
                let n: i64 = row.try_get(0)?;
                let slot = usize::try_from(n - 1)
                    .ok()
                    .and_then(|i| owners.get_mut(i))
                    .ok_or_else(|| sqlx::Error::Protocol(format!("pre-check: no key {n}")))?;
                *slot = Some((row.try_get(1)?, row.try_get(2)?));
            }
            Ok(owners)
        });
    match found {
        Ok(owners) => {
            for (job, owner) in batch.into_iter().zip(owners) {
                let existing = decide(&job.tenant_id, owner);
                // A handler that went away has nothing to be told.
                let _ = job.reply.send(Answer::Known(existing));
            }
        }
        Err(e) if batch.len() == 1 => {
            if let Some(job) = batch.into_iter().next() {
                let _ = job.reply.send(Answer::Failed(e));
            }
        }
        Err(_) => {
            for job in batch {
                let _ = job.reply.send(Answer::Alone);
            }
        }
    }
}

/// A handler's result from its answer. No answer means the handler that
/// held the key was cancelled mid-query (the worker is stopping): retried.
/// `Alone` comes only from a check of several keys, never from a check of
/// one key alone.
fn settle(answer: Result<Answer, oneshot::error::RecvError>) -> Result<Existing, sqlx::Error> {
    match answer {
        Ok(Answer::Known(existing)) => Ok(existing),
        Ok(Answer::Failed(e)) => Err(e),
        Ok(Answer::Alone) | Err(_) => Err(sqlx::Error::WorkerCrashed),
    }
}

/// The answer for a key of `tenant_id`, given its document's owner and
/// whether the version is stored (`None`: no document row).
fn decide(tenant_id: &str, owner: Option<(String, bool)>) -> Existing {
    match owner {
        None => Existing::NewDocument,
        Some((owner, _)) if owner != tenant_id => Existing::OtherTenant,
        Some((_, true)) => Existing::Yes,
        Some((_, false)) => Existing::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_with_answer(document_id: &str) -> (Job, oneshot::Receiver<Answer>) {
        Job::new(&NewVersionKey {
            tenant_id: "acme",
            document_id,
            source_version_id: "v1",
        })
    }

    fn job(document_id: &str) -> Job {
        job_with_answer(document_id).0
    }

    fn checker(running: bool, queued: &[&str]) -> Prechecks {
        let c = Prechecks::new();
        let mut state = c.lock();
        state.running = running;
        state.queue.extend(queued.iter().map(|d| job(d)));
        drop(state);
        c
    }

    fn batch_ids(turn: Turn<Vec<Job>>) -> Option<Vec<String>> {
        match turn {
            Turn::Run(batch) => Some(batch.into_iter().map(|j| j.document_id).collect()),
            Turn::Done | Turn::Wait => None,
        }
    }

    #[test]
    fn with_nothing_running_a_key_is_checked_at_once() {
        let c = checker(false, &["a"]);
        assert_eq!(batch_ids(c.turn()), Some(vec!["a".to_string()]));
        assert!(c.lock().running);
        assert!(matches!(c.turn(), Turn::Done));
        assert_eq!(c.totals(), (1, 1));
    }

    #[test]
    fn while_a_check_runs_keys_wait_and_the_next_takes_them_all() {
        let c = checker(true, &["a", "b", "c"]);
        assert!(matches!(c.turn(), Turn::Wait));
        drop(Running(&c));
        assert!(!c.lock().running);
        assert_eq!(
            batch_ids(c.turn()),
            Some(vec!["a".to_string(), "b".to_string(), "c".to_string()])
        );
        assert_eq!(c.totals(), (1, 3));
    }

    #[test]
    fn a_check_takes_at_most_max_batch_keys_oldest_first() {
        let ids: Vec<String> = (0..MAX_BATCH + 3).map(|i| format!("d{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let c = checker(false, &refs);
        assert_eq!(batch_ids(c.turn()), Some(ids[..MAX_BATCH].to_vec()));
        drop(Running(&c));
        assert_eq!(batch_ids(c.turn()), Some(ids[MAX_BATCH..].to_vec()));
    }

    #[test]
    fn the_answer_follows_the_owner_and_the_stored_flag() {
        assert_eq!(decide("acme", None), Existing::NewDocument);
        assert_eq!(
            decide("acme", Some(("other".into(), true))),
            Existing::OtherTenant
        );
        assert_eq!(decide("acme", Some(("acme".into(), true))), Existing::Yes);
        assert_eq!(decide("acme", Some(("acme".into(), false))), Existing::No);
    }

    /// A pool whose every query fails: nothing listens on port 1.
    fn unreachable_pool() -> PgPool {
        sqlx::postgres::PgPoolOptions::new()
            .acquire_timeout(std::time::Duration::from_secs(2))
            .connect_lazy_with(
                sqlx::postgres::PgConnectOptions::new()
                    .host("127.0.0.1")
                    .port(1)
                    .database("none"),
            )
    }

    #[tokio::test]
    async fn a_failed_check_of_several_keys_sends_each_back_to_check_alone() {
        let pool = unreachable_pool();
        let (a, a_answer) = job_with_answer("a");
        let (b, b_answer) = job_with_answer("b");
        run(&pool, vec![a, b]).await;
        assert!(matches!(a_answer.await, Ok(Answer::Alone)));
        assert!(matches!(b_answer.await, Ok(Answer::Alone)));
        // Alone, the key gets its own error.
        let (c, c_answer) = job_with_answer("c");
        run(&pool, vec![c]).await;
        assert!(matches!(c_answer.await, Ok(Answer::Failed(_))));
    }

    #[tokio::test]
    async fn a_key_sent_back_is_checked_alone_and_gets_its_own_error() {
        let pool = unreachable_pool();
        let c = Prechecks::new();
        let key = NewVersionKey {
            tenant_id: "acme",
            document_id: "a",
            source_version_id: "v1",
        };
        let (other, _other_answer) = job_with_answer("b");
        c.lock().queue.push_back(other);
        // The batch (the other key and this one) fails; this key is then
        // checked alone, and its error is an I/O error, not a shared one.
        let e = c.check(&pool, &key).await.err();
        assert!(
            matches!(e, Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut)),
            "{e:?}"
        );
        assert_eq!(c.totals(), (2, 2));
    }

    #[tokio::test]
    async fn a_check_that_ends_wakes_a_waiting_handler() {
        let c = checker(true, &["a"]);
        let ended = c.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        assert!(matches!(c.turn(), Turn::Wait));
        drop(Running(&c));
        tokio::time::timeout(std::time::Duration::from_secs(5), ended)
            .await
            .expect("woken");
        assert!(matches!(c.turn(), Turn::Run(_)));
    }
}
