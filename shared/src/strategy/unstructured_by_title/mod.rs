//! The drop-in `unstructured.by_title` strategy (work in progress).

pub mod blocks;
pub mod chunking;
pub mod inline;
pub mod markdown;
pub mod mdtable;
pub mod partition;
pub mod stext;
pub mod table;
