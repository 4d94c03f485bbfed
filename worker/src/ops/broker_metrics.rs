//! Which broker node each of the worker's connections uses:
//! `chunking_broker_node{link, node}` is 1 for the node a link is connected
//! to and 0 for the other configured nodes (`amqp.urls`); every value is 0
//! while the link is down. `node` is the node's `host:port` (never a
//! credential), `link` is `consumer` or `outbox`. The label values are the
//! configured nodes only: bounded.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A connection of the worker to the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerLink {
    /// The consumer's connection (consuming, dead-lettering, parking).
    Consumer,
    /// The outbox relay's connection (publishing events).
    Outbox,
}

impl BrokerLink {
    fn as_str(self) -> &'static str {
        match self {
            Self::Consumer => "consumer",
            Self::Outbox => "outbox",
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    link: &'static str,
    node: String,
}

/// `chunking_broker_node`.
#[derive(Debug, Default)]
pub struct BrokerMetrics {
    nodes: Family<NodeLabels, Gauge>,
}

impl BrokerMetrics {
    /// Registers the series in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self::default();
        registry.register(
            "chunking_broker_node",
            "1 for the broker node (host:port) a link (consumer, outbox) is connected to, \
             0 for the other configured nodes",
            m.nodes.clone(),
        );
        m
    }

    /// `link` is connected to `nodes[connected]` (`None`: to no node).
    pub fn connected<'a>(
        &self,
        link: BrokerLink,
        nodes: impl IntoIterator<Item = &'a str>,
        connected: Option<usize>,
    ) {
        for (i, node) in nodes.into_iter().enumerate() {
            self.nodes
                .get_or_create(&NodeLabels {
                    link: link.as_str(),
                    node: node.to_owned(),
                })
                .set(i64::from(connected == Some(i)));
        }
    }
}
