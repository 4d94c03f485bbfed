//! The retry queue: a quorum queue (RabbitMQ 3.10 or later) whose messages
//! expire after `amqp.retry_delay_ms` into the requests queue, dead-lettered
//! at least once; and telling a refusal apart, above all a classic retry
//! queue left by a worker from before issue 52.
//!
//! The broker's refusal of a redeclaration names only the first argument
//! that differs, in its own order (`x-message-ttl` and `x-overflow` come
//! before `x-queue-type`), so the reply alone cannot say that the queue is
//! a classic one. [`Topology::declare_on`] asks the broker instead: it
//! declares the queue again, on a fresh channel, exactly as an older worker
//! did (classic, the TTL, the dead-letter exchange and routing key), which
//! changes nothing and succeeds only for that queue. When the TTL differs
//! (`amqp.retry_delay_ms` changed since), the reply gives the queue's own,
//! and the probe is made once more with it.

use std::time::Duration;

use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, Connection, ErrorKind};

use super::names::{declare_error, durable_queue, long_str, short, Topology, TopologyError};

/// AMQP's PRECONDITION_FAILED: a declaration that does not match the
/// existing queue, or an argument the broker does not accept.
const PRECONDITION_FAILED: u16 = 406;

/// What a refused declaration of the quorum retry queue means, from the
/// broker's reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryRefusal {
    /// The queue exists with other arguments (RabbitMQ's `inequivalent
    /// arg`): a classic queue, or another TTL.
    Exists,
    /// The broker does not accept an argument (RabbitMQ before 3.10:
    /// `invalid arg 'x-message-ttl'` for a quorum queue).
    Unsupported,
    /// Anything else.
    Other,
}

/// Reads a PRECONDITION_FAILED reply, e.g. RabbitMQ 3.10's `inequivalent
/// arg 'x-overflow' for queue 'chunking.retry' in vhost '/': received
/// 'reject-publish' but current is none`.
pub fn classify_retry_refusal(reply: &str) -> RetryRefusal {
    if reply.contains("inequivalent arg") {
        RetryRefusal::Exists
    } else if reply.contains("invalid arg") {
        RetryRefusal::Unsupported
    } else {
        RetryRefusal::Other
    }
}

/// The existing queue's TTL from a refusal about `x-message-ttl`
/// (`... received '5000' but current is '600000'`).
fn current_ttl(reply: &str) -> Option<i64> {
    if !reply.contains("'x-message-ttl'") {
        return None;
    }
    let rest = reply.split("current is ").nth(1)?;
    let rest = rest.strip_prefix("the value ").unwrap_or(rest);
    let digits: String = rest
        .trim_start_matches('\'')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The reply text of a PRECONDITION_FAILED refusal (empty for any other
/// error).
fn precondition_reply(e: &lapin::Error) -> String {
    match e.kind() {
        ErrorKind::ProtocolError(p) if p.get_id() == PRECONDITION_FAILED => {
            p.get_message().as_str().to_owned()
        }
        _ => String::new(),
    }
}

impl Topology {
    /// The retry queue's arguments: a quorum queue whose messages expire
    /// after `retry_delay` into the requests queue, at least once.
    pub fn retry_arguments(&self, retry_delay: Duration) -> FieldTable {
        let mut retry = FieldTable::default();
        retry.insert(short("x-queue-type"), long_str("quorum"));
        retry.insert(
            short("x-message-ttl"),
            AMQPValue::LongLongInt(i64::try_from(retry_delay.as_millis()).unwrap_or(i64::MAX)),
        );
        retry.insert(short("x-dead-letter-exchange"), long_str(""));
        retry.insert(
            short("x-dead-letter-routing-key"),
            long_str(&self.requests_queue()),
        );
        retry.insert(short("x-dead-letter-strategy"), long_str("at-least-once"));
        retry.insert(short("x-overflow"), long_str("reject-publish"));
        retry
    }

    /// The arguments a worker from before issue 52 declared its classic
    /// retry queue with.
    pub fn classic_retry_arguments(&self, ttl_ms: i64) -> FieldTable {
        let mut retry = FieldTable::default();
        retry.insert(short("x-queue-type"), long_str("classic"));
        retry.insert(short("x-message-ttl"), AMQPValue::LongLongInt(ttl_ms));
        retry.insert(short("x-dead-letter-exchange"), long_str(""));
        retry.insert(
            short("x-dead-letter-routing-key"),
            long_str(&self.requests_queue()),
        );
        retry
    }

    /// Declares the retry queue on `channel`. A refusal is
    /// [`TopologyError::Unsupported`] for a broker before 3.10, else
    /// [`TopologyError::Declare`] (without a connection at hand a classic
    /// queue is not told apart: [`Topology::declare_on`] does that).
    pub async fn declare_retry(
        &self,
        channel: &Channel,
        retry_delay: Duration,
    ) -> Result<(), TopologyError> {
        let queue = self.retry_queue();
        let Err(source) = channel
            .queue_declare(&queue, durable_queue(), self.retry_arguments(retry_delay))
            .await
        else {
            return Ok(());
        };
        let reply = precondition_reply(&source);
        Err(match classify_retry_refusal(&reply) {
            RetryRefusal::Unsupported => TopologyError::Unsupported { queue, reply },
            RetryRefusal::Exists | RetryRefusal::Other => {
                declare_error(format!("the queue {queue}"))(source)
            }
        })
    }

    /// Declares exchanges, queues and bindings on a channel of `conn`; a
    /// retry queue that exists with other arguments is probed (module
    /// documentation): a classic one left by an older worker is
    /// [`TopologyError::ClassicRetryQueue`], which names the command that
    /// replaces it.
    pub async fn declare_on(
        &self,
        conn: &Connection,
        delivery_limit: u32,
        retry_delay: Duration,
    ) -> Result<(), TopologyError> {
        let channel = conn
            .create_channel()
            .await
            .map_err(declare_error("a channel"))?;
        self.declare_core(&channel, delivery_limit).await?;
        let refused = match self.declare_retry(&channel, retry_delay).await {
            Ok(()) => {
                let _ = channel.close(200, "declared").await;
                return Ok(());
            }
            Err(e) => e,
        };
        let TopologyError::Declare { source, .. } = &refused else {
            return Err(refused);
        };
        let reply = precondition_reply(source);
        if classify_retry_refusal(&reply) == RetryRefusal::Exists
            && self.is_classic_retry(conn, retry_delay, &reply).await
        {
            return Err(TopologyError::ClassicRetryQueue {
                queue: self.retry_queue(),
            });
        }
        Err(refused)
    }

    /// Whether the retry queue, which exists (`reply` refused the quorum
    /// declaration), is the classic queue of an older worker.
    async fn is_classic_retry(
        &self,
        conn: &Connection,
        retry_delay: Duration,
        reply: &str,
    ) -> bool {
        let mut ttl = i64::try_from(retry_delay.as_millis()).unwrap_or(i64::MAX);
        if let Some(current) = current_ttl(reply) {
            ttl = current;
        }
        for _ in 0..2 {
            let Ok(channel) = conn.create_channel().await else {
                return false;
            };
            let probe = channel
                .queue_declare(
                    &self.retry_queue(),
                    durable_queue(),
                    self.classic_retry_arguments(ttl),
                )
                .await;
            match probe {
                Ok(_) => {
                    let _ = channel.close(200, "probed").await;
                    return true;
                }
                // A refusal closes the channel.
                Err(e) => match current_ttl(&precondition_reply(&e)) {
                    Some(current) if current != ttl => ttl = current,
                    _ => return false,
                },
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_queue_is_a_quorum_queue_dead_lettering_at_least_once() {
        let args = Topology::new("p.").retry_arguments(Duration::from_millis(5000));
        let get = |k: &str| args.inner().get(k).cloned();
        assert_eq!(get("x-queue-type"), Some(long_str("quorum")));
        assert_eq!(get("x-message-ttl"), Some(AMQPValue::LongLongInt(5000)));
        assert_eq!(get("x-dead-letter-exchange"), Some(long_str("")));
        assert_eq!(
            get("x-dead-letter-routing-key"),
            Some(long_str("p.chunking.requests"))
        );
        assert_eq!(
            get("x-dead-letter-strategy"),
            Some(long_str("at-least-once"))
        );
        assert_eq!(get("x-overflow"), Some(long_str("reject-publish")));
    }

    #[test]
    fn a_refused_retry_queue_is_told_apart_by_the_brokers_reply() {
        // RabbitMQ 3.10's replies.
        assert_eq!(
            classify_retry_refusal(
                "PRECONDITION_FAILED - inequivalent arg 'x-overflow' for queue \
                 'p.chunking.retry' in vhost '/': received 'reject-publish' but current is none"
            ),
            RetryRefusal::Exists
        );
        assert_eq!(
            classify_retry_refusal(
                "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'p.chunking.retry'"
            ),
            RetryRefusal::Unsupported
        );
        assert_eq!(
            classify_retry_refusal("NOT_FOUND - no exchange"),
            RetryRefusal::Other
        );
        let e = TopologyError::ClassicRetryQueue {
            queue: "p.chunking.retry".into(),
        };
        assert!(e.needs_operator());
        assert!(
            e.to_string().contains(super::super::MIGRATE_RETRY_COMMAND),
            "{e}"
        );
    }

    #[test]
    fn the_queues_own_ttl_is_read_from_a_refusal_about_it() {
        let reply = "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue \
                     'p.chunking.retry' in vhost '/': received '5000' but current is '600000'";
        assert_eq!(current_ttl(reply), Some(600_000));
        assert_eq!(
            current_ttl(
                "inequivalent arg 'x-message-ttl' ... but current is the value '42' of type 'long'"
            ),
            Some(42)
        );
        assert_eq!(
            current_ttl("inequivalent arg 'x-overflow' ... but current is none"),
            None
        );
        assert_eq!(
            current_ttl("inequivalent arg 'x-message-ttl' ... but current is none"),
            None
        );
    }
}
