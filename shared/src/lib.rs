//! `shared`: the pure, deterministic chunking engine of chunk-worker.
//!
//! Turns a normalized Markdown document into retrieval-ready chunks exactly as
//! docs/contract.md describes, and holds the message contracts the worker
//! speaks. Nothing here performs I/O or knows about tokio, RabbitMQ or
//! Postgres: every function is a pure function of its inputs, so the same
//! bytes in always give the same bytes out. The only threads are the scoped
//! ones `multi` runs a multi-granularity profile's strategies on, side by
//! side, joined before it returns.
//!
//! The pipeline, one module per step:
//! 1. [`normalize`]: decode UTF-8, unify line endings, collapse whitespace.
//! 2. [`markdown`]: parse blocks with exact offsets (pulldown-cmark) and track
//!    the heading stack.
//! 3. [`chunk`]: pack blocks under the profile's token budgets, split
//!    oversized units, add overlap, build records and validate them.
//! 4. [`ids`]: canonical text and the stable chunk id formulas.
//!
//! [`engine`] is the front door (bytes + metadata + profile name in, validated
//! chunks out). [`strategy`] holds the strategies behind the
//! [`strategy::Strategy`] / [`strategy::Chunker`] traits and their registry;
//! [`profile`] reads profiles (TOML); [`chunk`] is the toolkit strategies
//! share; [`tokens`] counts tokens exactly (cl100k_base / o200k_base).

pub mod chunk;
pub mod clinical;
pub mod contract;
pub mod embed;
pub mod engine;
pub mod error;
pub mod explain;
pub mod export;
pub mod html;
pub mod ids;
pub mod links;
pub mod llm;
pub mod markdown;
mod multi;
pub mod normalize;
pub mod profile;
pub mod retrieval;
pub mod segment;
pub mod sentence;
pub mod source_map;
pub mod strategy;
mod swar;
pub mod tei;
pub mod tokens;

pub use chunk::record::{Chunk, ChunkType, DocumentMeta, Granularity};
pub use embed::{Embedder, ToyEmbedder};
pub use engine::{chunk_document, ChunkedDocument, Engine, EngineBuilder};
pub use error::{ChunkError, ErrorCode};
pub use explain::EndReason;
pub use llm::{ChatTransport, ToyChat};
pub use profile::{Deprecation, Profile, ProfileOrigin, ProfileSet};
pub use strategy::{Chunker, Registry, Strategy};
