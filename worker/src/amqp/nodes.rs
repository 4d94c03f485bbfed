//! Failover over the broker nodes of `amqp.urls`: a connection goes to the
//! first node that answers, in the configured order; after a connection to
//! node `i` is lost, the next attempt starts at node `i + 1` (wrapping), so
//! a node that just went away is tried last. Each attempt walks the whole
//! list once; when no node answers, the caller waits its back-off and walks
//! it again from the same place. A node that comes back is not preferred:
//! connections stay where they are until that node is lost in turn.

use std::time::Duration;

use lapin::Connection;

use crate::config::AmqpSettings;

/// How long one node may take to accept a connection (TCP, TLS, AMQP
/// handshake) before the next is tried: a node that is down but whose
/// address swallows packets must not hold the walk for minutes.
pub const NODE_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the next connection attempt starts, and the node in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failover {
    count: usize,
    next: usize,
    current: Option<usize>,
}

impl Failover {
    /// A walk over `count` nodes (at least one), starting at the first.
    pub fn new(count: usize) -> Self {
        Self {
            count: count.max(1),
            next: 0,
            current: None,
        }
    }

    /// The nodes the next attempt tries, in order: every node once, from
    /// where the last lost connection leaves off.
    pub fn order(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.count).map(|k| (self.next + k) % self.count)
    }

    /// A connection to node `i` is up: it is the node in use.
    pub fn connected(&mut self, i: usize) {
        self.current = Some(i % self.count);
        self.next = i % self.count;
    }

    /// The connection in use was lost (or its session failed): the next
    /// attempt starts at the node after it. Without a node in use (no node
    /// answered), the next attempt starts where the last one did.
    pub fn lost(&mut self) {
        if let Some(i) = self.current.take() {
            self.next = (i + 1) % self.count;
        }
    }

    /// The node in use, if any.
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    /// Connects to the first node of [`Failover::order`] that answers and
    /// records it as the node in use.
    pub async fn connect(
        &mut self,
        settings: &AmqpSettings,
        name: &str,
    ) -> Result<Connected, ConnectError> {
        let mut refused = Vec::new();
        let order: Vec<usize> = self.order().collect();
        for i in order {
            let Some(node) = settings.nodes.get(i) else {
                continue;
            };
            let attempt = tokio::time::timeout(
                NODE_CONNECT_TIMEOUT,
                super::open::connect_node(settings, node, name),
            )
            .await;
            match attempt {
                Ok(Ok(connection)) => {
                    self.connected(i);
                    return Ok(Connected {
                        connection,
                        node: i,
                        label: node.label.clone(),
                    });
                }
                Ok(Err(e)) => {
                    tracing::debug!(node = %node.label, error = %e, "broker node did not answer; trying the next");
                    refused.push(NodeFailure {
                        node: node.label.clone(),
                        reason: e.to_string(),
                    });
                }
                Err(_) => {
                    tracing::debug!(node = %node.label, "broker node did not answer in time; trying the next");
                    refused.push(NodeFailure {
                        node: node.label.clone(),
                        reason: format!("no answer within {NODE_CONNECT_TIMEOUT:?}"),
                    });
                }
            }
        }
        Err(ConnectError { refused })
    }
}

/// A connection and the node it went to.
#[derive(Debug)]
pub struct Connected {
    /// The connection.
    pub connection: Connection,
    /// The node's index in `amqp.urls`.
    pub node: usize,
    /// The node's `host:port` (no credentials).
    pub label: String,
}

/// Why one node did not take a connection.
#[derive(Debug, Clone)]
pub struct NodeFailure {
    /// The node's `host:port`.
    pub node: String,
    /// The error (the AMQP library's, or the timeout).
    pub reason: String,
}

/// No broker node answered; each node's reason, in the order tried.
#[derive(Debug, thiserror::Error)]
#[error("no broker node answered ({})", describe(.refused))]
pub struct ConnectError {
    /// Every node tried, with its reason.
    pub refused: Vec<NodeFailure>,
}

fn describe(refused: &[NodeFailure]) -> String {
    refused
        .iter()
        .map(|f| format!("{}: {}", f.node, f.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(f: &Failover) -> Vec<usize> {
        f.order().collect()
    }

    #[test]
    fn the_first_attempt_walks_the_list_in_its_order() {
        assert_eq!(order(&Failover::new(3)), [0, 1, 2]);
        assert_eq!(order(&Failover::new(1)), [0]);
        // No nodes is one node: the settings never give none.
        assert_eq!(order(&Failover::new(0)), [0]);
    }

    #[test]
    fn after_a_lost_connection_the_next_node_comes_first_and_the_lost_one_last() {
        let mut f = Failover::new(3);
        f.connected(0);
        assert_eq!(f.current(), Some(0));
        f.lost();
        assert_eq!(f.current(), None);
        assert_eq!(order(&f), [1, 2, 0]);
        f.connected(1);
        f.lost();
        assert_eq!(order(&f), [2, 0, 1]);
        // The last node's successor is the first: the walk wraps.
        f.connected(2);
        f.lost();
        assert_eq!(order(&f), [0, 1, 2]);
    }

    #[test]
    fn a_walk_where_no_node_answered_starts_again_where_it_started() {
        let mut f = Failover::new(3);
        f.connected(1);
        f.lost();
        assert_eq!(order(&f), [2, 0, 1]);
        // Nothing answered: no node in use, nothing moves.
        f.lost();
        f.lost();
        assert_eq!(order(&f), [2, 0, 1]);
    }

    #[test]
    fn a_node_that_comes_back_is_not_preferred() {
        // Connected to node 1 after node 0 was lost: as long as node 1
        // holds, a session ending some other way is a loss of node 1, and
        // node 0 is tried only after node 2.
        let mut f = Failover::new(3);
        f.connected(0);
        f.lost();
        f.connected(1);
        f.lost();
        assert_eq!(order(&f), [2, 0, 1]);
    }

    #[test]
    fn one_node_is_always_tried_again() {
        let mut f = Failover::new(1);
        f.connected(0);
        f.lost();
        assert_eq!(order(&f), [0]);
    }

    #[test]
    fn the_error_names_each_node_and_its_reason_in_order() {
        let e = ConnectError {
            refused: vec![
                NodeFailure {
                    node: "mq-1:5672".into(),
                    reason: "connection refused".into(),
                },
                NodeFailure {
                    node: "mq-2:5672".into(),
                    reason: "no answer within 10s".into(),
                },
            ],
        };
        assert_eq!(
            e.to_string(),
            "no broker node answered (mq-1:5672: connection refused; mq-2:5672: no answer within 10s)"
        );
    }
}
