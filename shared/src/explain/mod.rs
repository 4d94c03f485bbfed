//! Why each chunk ends (`chunk-worker explain`, the report's hover text,
//! `POST /v1/chunk?explain=true`). Explaining never changes a chunk: the
//! engine chunks as usual, then explains the chunks it returned.
//!
//! - `reason.rs`: [`EndReason`], one rule per variant, with a sentence
//!   (`Display`) for people and a tagged JSON form for tools;
//! - `generic.rs`: the explainer that works for any strategy, from the
//!   chunk, the next chunk and the document's analysis (blocks, headings,
//!   tokens). A strategy that knows more overrides
//!   [`crate::strategy::Chunker::explain`] and falls back to it.

pub mod generic;
pub mod reason;

pub use generic::{explain_chunks, generic};
pub use reason::EndReason;
