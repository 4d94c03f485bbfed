//! Offline commands: chunk and normalize files with no servers.
//!
//! Every command is a function of its parsed arguments and the streams it
//! writes to (`impl Write` for stdout and stderr), so tests drive them with
//! byte buffers. The binary passes a locked, buffered stdout and stderr, and
//! maps the returned [`Summary`] or [`OfflineError`] to an exit status.
//!
//! Per-file failures never stop a run: each becomes one
//! `CHUNKING_FAILED <CODE>: <path>: <what and where>` line on stderr, and the
//! file contributes nothing to stdout (its output is assembled in memory and
//! written only once it chunked completely). A closed stdout (`| head`) ends
//! a run early but quietly: the reader has all it wanted.

mod chunk;
pub mod eval;
pub mod explain;
mod files;
mod inputs;
pub mod links;
mod outcome;
pub mod profiles;
pub mod report;
mod setup;
mod vectors;

pub use chunk::{chunk, normalize_file};
pub use inputs::{collect_inputs, Input};
pub use links::links;
pub use outcome::{FileFailure, OfflineError, Progress, Summary};
pub use setup::{
    default_source_version, document_meta, engine_and_profile, engine_for, with_metadata,
};
