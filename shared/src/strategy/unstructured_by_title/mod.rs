//! The drop-in `unstructured.by_title` strategy (work in progress).

pub mod chunking;
pub mod stext;
pub mod table;
