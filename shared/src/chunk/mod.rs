//! The toolkit every strategy shares: planned pieces ([`piece`]), splitting
//! of oversized units at sentences, token windows, table rows (header
//! repeated) and code lines (re-fenced) ([`split`]), spans and heading paths
//! of arbitrary ranges ([`trail`]) and, overlap copied from the preceding text
//! ([`span::chunks_from_spans`]), record building with breadcrumbs
//! ([`build`]), fitting chunks to an embedder's window ([`window`]), the
//! chunk record ([`record`]), ids, content hashes and keys derived from the
//! final records ([`seal`]) and the validation checklist ([`validate`]).

pub(crate) mod build;
pub(crate) mod exact;
pub use build::document_title;
pub(crate) mod granular;
pub(crate) mod piece;
pub(crate) mod seal;
pub use granular::chunk_key;
pub mod json;
pub mod record;
pub mod rendered;
pub mod span;
pub(crate) mod split;
pub(crate) mod topic;
pub(crate) mod topic_explain;
pub(crate) mod trail;
pub(crate) mod unit;
pub mod validate;
pub(crate) mod window;
