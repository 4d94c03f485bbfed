//! From blocks to chunks: profiles, packing, oversize splitting, overlap,
//! record building and the validation checklist.

pub mod profile;
pub mod record;
pub mod validate;
