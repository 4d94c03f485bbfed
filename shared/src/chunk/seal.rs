//! The last step before validation: every chunk's `chunk_id`,
//! `content_hash`, `chunk_key` and `is_table`, derived from the record as it
//! will be emitted (its final text, ordinal and granularity).
//!
//! The ids are derived here, once, and nowhere else: whatever a strategy did
//! to a chunk's text after building it (overlap, fences, windows,
//! renumbering into granularities), the id is the formula of the text that
//! ships, in every build. Before, `build` derived them and only debug builds
//! checked them again; deriving them here costs nothing more than `build`
//! did, where re-deriving them in validation cost 4.5% of the engine's time
//! (docs/benchmarks-log.md). The canonical text is computed once per chunk and hashed
//! for both the id and the content hash.

use crate::chunk::granular::{chunk_key, is_table};
use crate::chunk::record::{Chunk, Granularity};
use crate::ids::{canonical_text, chunk_id, content_hash, IdInput};
use crate::profile::model::Profile;
use crate::profile::settings::IdFormula;

/// Seals `chunks` of `profile` (`strategy` names them in `chunk_key`);
/// `primary` is the granularity whose ids are not namespaced.
pub(crate) fn seal(chunks: &mut [Chunk], profile: &Profile, primary: Granularity) {
    for c in chunks.iter_mut() {
        seal_one(c, profile.id_formula, &profile.strategy, primary);
    }
}

fn seal_one(c: &mut Chunk, formula: IdFormula, strategy: &str, primary: Granularity) {
    let canonical = canonical_text(&c.chunk_text);
    c.chunk_id = chunk_id(
        formula,
        &IdInput {
            tenant_id: &c.tenant_id,
            document_id: &c.document_id,
            source_version_id: &c.source_version_id,
            ordinal: c.ordinal,
            canonical_text: &canonical,
            block_start_idx: c.block_start_idx,
            block_end_idx: c.block_end_idx,
            char_start: c.char_start,
            char_end: c.char_end,
            granularity: c.granularity,
            primary,
        },
    );
    c.content_hash = content_hash(&canonical, &c.headings_path);
    c.chunk_key = Some(chunk_key(
        &c.document_id,
        strategy,
        c.granularity,
        c.ordinal,
    ));
    c.is_table = Some(is_table(c.granularity, c.chunk_type));
}
