//! One message through the worker: the consumer supervisor and settlement
//! ([`consumer`]), the handler that validates, reads ([`source`]) and chunks
//! a message and stores the result ([`handler`]), the memory budget of the
//! messages in flight ([`memory`]), and the permanent failure both report
//! ([`failure`]).

pub mod consumer;
pub mod failure;
pub mod handler;
pub mod memory;
pub mod source;
