//! The subcommands' entry points: the offline commands (chunk, normalize,
//! profiles, links, eval: [`offline`]), the service commands (run, migrate,
//! demo, bench: [`service`], [`demo`], [`bench`], with the in-process worker
//! of the last two in [`inprocess`]) the dead-letter tools ([`dlq`]), the tenant grants of row-level
//! security ([`tenant`]) and the broker topology ([`topology`]).

pub mod bench;
pub mod demo;
pub mod dlq;
pub mod inprocess;
pub mod offline;
pub mod serve;
pub mod service;
pub mod tenant;
pub mod topology;
