//! From blocks to chunks: profiles, packing, oversize splitting, overlap,
//! record building and the validation checklist.

pub(crate) mod build;
pub(crate) mod overlap;
pub(crate) mod pack;
pub(crate) mod piece;
pub mod profile;
pub mod record;
pub(crate) mod split;
pub mod validate;
