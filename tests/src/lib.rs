//! End-to-end test harness: [`TestApp::spawn`] starts a worker in-process
//! against the real RabbitMQ and Postgres, with its own database
//! (`cw_test_<random>`) and its own topology prefix (`t<random>.`), so tests
//! running in parallel never see each other's messages or rows. Helpers
//! publish raw bytes the way upstream does and poll with deadlines (no
//! sleeps for synchronisation). [`proxy::Proxy`] cuts and restores TCP
//! connections to simulate outages without touching the shared servers.

pub mod cookbook;
pub mod otlp;
pub mod proxy;
pub mod tls;

mod app;
mod messages;
mod places;
mod polling;
mod servers;

pub use app::{Options, Sibling, TestApp};
pub use messages::{headers, message, meta_of, sample_markdown, Received};
pub use places::{config_dir, random_suffix};
pub use polling::{eventually, DEADLINE};
pub use servers::{
    amqp_connect, confirmed_channel, create_database, drop_database, AMQP_ADDR, AMQP_URL, PG_ADDR,
    PG_SERVER,
};
