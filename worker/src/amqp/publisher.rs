//! A publisher on a confirm-mode channel: every publish is `mandatory` and
//! waits for the broker's confirm, so "published" means routed and stored.

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::publisher_confirm::{Confirmation, PublisherConfirm};
use lapin::{BasicProperties, Channel, Connection};

/// Why a publish did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The channel or connection failed.
    #[error("broker error: {0}")]
    Amqp(#[from] lapin::Error),
    /// The broker refused the message (nack).
    #[error("broker nacked the publish to {exchange:?} with routing key {routing_key:?}")]
    Nacked {
        /// Target exchange.
        exchange: String,
        /// Routing key.
        routing_key: String,
    },
    /// No queue is bound for the routing key (the `mandatory` return).
    #[error("unroutable: no queue bound to {exchange:?} for routing key {routing_key:?}")]
    Unroutable {
        /// Target exchange.
        exchange: String,
        /// Routing key.
        routing_key: String,
    },
}

/// A confirm-mode channel. Cheap to clone; clones share the channel.
#[derive(Clone)]
pub struct Publisher {
    channel: Channel,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("channel", &self.channel.id())
            .finish()
    }
}

impl Publisher {
    /// Opens a channel on `connection` and puts it in confirm mode.
    pub async fn open(connection: &Connection) -> lapin::Result<Self> {
        let channel = connection.create_channel().await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        Ok(Self { channel })
    }

    /// Whether the channel is still open.
    pub fn is_open(&self) -> bool {
        self.channel.status().connected()
    }

    /// Publishes `body` and waits for the broker's confirm.
    pub async fn publish(
        &self,
        exchange: &str,
        routing_key: &str,
        body: &[u8],
        properties: BasicProperties,
    ) -> Result<(), PublishError> {
        self.send(exchange, routing_key, body, properties)
            .await?
            .confirmed()
            .await
    }

    /// Sends `body` without waiting for the confirm: several sends can be in
    /// flight on the channel at once, each settled by its [`Pending`].
    pub async fn send(
        &self,
        exchange: &str,
        routing_key: &str,
        body: &[u8],
        properties: BasicProperties,
    ) -> Result<Pending, PublishError> {
        let confirm = self
            .channel
            .basic_publish(
                exchange,
                routing_key,
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                body,
                properties,
            )
            .await?;
        Ok(Pending {
            confirm,
            exchange: exchange.to_owned(),
            routing_key: routing_key.to_owned(),
        })
    }
}

/// A sent publish whose confirm has not been awaited yet.
pub struct Pending {
    confirm: PublisherConfirm,
    exchange: String,
    routing_key: String,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("exchange", &self.exchange)
            .field("routing_key", &self.routing_key)
            .finish_non_exhaustive()
    }
}

impl Pending {
    /// Waits for the broker's confirm: routed and stored, returned as
    /// unroutable, or nacked.
    pub async fn confirmed(self) -> Result<(), PublishError> {
        match self.confirm.await? {
            Confirmation::Ack(None) | Confirmation::NotRequested => Ok(()),
            Confirmation::Ack(Some(_)) => Err(PublishError::Unroutable {
                exchange: self.exchange,
                routing_key: self.routing_key,
            }),
            Confirmation::Nack(_) => Err(PublishError::Nacked {
                exchange: self.exchange,
                routing_key: self.routing_key,
            }),
        }
    }
}
