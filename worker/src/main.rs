//! chunk-worker binary.
fn main() {}
