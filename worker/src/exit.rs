//! Exit statuses of every `chunk-worker` command, as `--help` documents them
//! (one definition for the offline commands, the worker, `dlq` and `eval`).

/// Done: every input processed, the worker stopped gracefully.
pub const SUCCESS: u8 = 0;
/// Something failed: an input (a `CHUNKING_FAILED` line each), a message a
/// replay could not republish, the broker or the database, an internal error.
pub const FAILED: u8 = 1;
/// Usage error or invalid settings: bad flags, unknown profile, no input
/// files, a setting that does not validate (the message names the key).
pub const USAGE: u8 = 2;
