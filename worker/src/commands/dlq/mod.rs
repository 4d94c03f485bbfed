//! `chunk-worker dlq list|show|replay`: inspecting and replaying the
//! dead-letter queue `<prefix>chunking.failed` (docs/contract.md#failures and #operations).
//!
//! Reading a quorum queue without removing its messages: the commands consume
//! with manual acks, hold every delivery they do not settle, and close the
//! channel at the end, which hands the held messages back to the queue. The
//! scan ends when the queue goes quiet (no delivery for a moment) or the
//! prefetch window of held messages is full. A message a replay sent back
//! that the worker dead-lettered again (it carries the run's `x-replay-id`:
//! dead-lettering keeps a message's headers) is held and not looked at twice,
//! so a replay never loops.
//!
//! Replay never loses a message: each matching message is republished (the
//! original body, byte for byte, and its properties) to `<prefix>ingest.events`
//! with routing key `normalize_markdown.completed`, `mandatory`, and only once
//! the broker confirmed that publish is the dead-letter copy acked. A replay
//! killed at any point leaves every message in the dead-letter queue, in the
//! input queue, or both (a duplicate is harmless: storing is idempotent).

mod letter;
mod render;
mod replay;
mod scan;

use std::io::{IsTerminal, Write};

use crate::config::Settings;
use crate::exit;

pub use crate::cli::dlq::{DlqArgs, DlqCommand, Filters, ListArgs, ReplayArgs, ShowArgs};
pub use letter::DeadLetter;
pub use render::{write_letter, write_table};
pub use replay::{replay, replay_properties, ReplayOptions, ReplaySummary};
pub use scan::{list, show};

/// Runs a `dlq` subcommand; returns the exit status.
pub fn run(args: &DlqArgs) -> u8 {
    if let DlqCommand::Replay(r) = &args.command {
        if let Err(message) = check_replay_args(r) {
            eprintln!("error: {message}");
            return exit::USAGE;
        }
    }
    crate::commands::service::tool(2, |settings| async move {
        execute(&settings, &args.command).await
    })
}

fn check_replay_args(r: &ReplayArgs) -> Result<(), String> {
    if r.filters.is_empty() && !r.all {
        return Err(
            "give a filter (--error-code, --tenant, --document) or --all to replay every message"
                .to_owned(),
        );
    }
    if !r.rate.is_finite() || r.rate < 0.0 {
        return Err("--rate must be a number of messages per second, 0 for no limit".to_owned());
    }
    if r.limit == Some(0) {
        return Err("--limit must be at least 1".to_owned());
    }
    Ok(())
}

async fn execute(settings: &Settings, command: &DlqCommand) -> anyhow::Result<u8> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match command {
        DlqCommand::List(a) => {
            let letters = list(settings, &a.filters, a.limit).await?;
            if a.json {
                serde_json::to_writer_pretty(&mut out, &letters)?;
                writeln!(out)?;
            } else {
                write_table(&mut out, &letters)?;
            }
            Ok(exit::SUCCESS)
        }
        DlqCommand::Show(a) => match show(settings, &a.id).await? {
            Some(letter) => {
                write_letter(&mut out, &letter, a.json)?;
                Ok(exit::SUCCESS)
            }
            None => {
                eprintln!("error: no dead-lettered message {:?}", a.id);
                Ok(exit::FAILED)
            }
        },
        DlqCommand::Replay(a) => {
            let opts = ReplayOptions {
                filters: a.filters.clone(),
                dry_run: a.dry_run,
                limit: a.limit,
                rate: a.rate,
                operator: a
                    .operator
                    .clone()
                    .or_else(|| std::env::var("USER").ok())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "unknown".to_owned()),
                progress: std::io::stderr().is_terminal(),
            };
            let s = replay(settings, &opts).await?;
            if a.dry_run {
                for id in &s.ids {
                    writeln!(out, "would replay {id}")?;
                }
                writeln!(
                    out,
                    "dry run: {} of {} scanned messages match; nothing changed",
                    s.matched, s.scanned
                )?;
            } else {
                writeln!(
                    out,
                    "replay {}: scanned {}, matched {}, replayed {}, skipped {}, failed {}",
                    s.replay_id.map(|u| u.to_string()).unwrap_or_default(),
                    s.scanned,
                    s.matched,
                    s.replayed,
                    s.skipped,
                    s.failed
                )?;
            }
            Ok(if s.failed > 0 {
                exit::FAILED
            } else {
                exit::SUCCESS
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use lapin::types::FieldTable;
    use lapin::BasicProperties;
    use uuid::Uuid;

    use super::*;
    use crate::amqp::headers;

    fn letter(code: &str, tenant: &str, doc: &str) -> DeadLetter {
        let mut h = FieldTable::default();
        headers::set_str(&mut h, "x-error-code", code);
        let body = serde_json::json!({"tenant_id": tenant, "document_id": doc}).to_string();
        DeadLetter::from_parts(body.as_bytes(), &BasicProperties::default().with_headers(h))
    }

    #[test]
    fn filters_match_code_tenant_and_document() {
        let l = letter("SOURCE_UNAVAILABLE", "acme-prod", "d1");
        assert!(l.matches(&Filters::default()));
        let f = |c: Option<&str>, t: Option<&str>, d: Option<&str>| Filters {
            error_code: c.map(str::to_owned),
            tenant: t.map(str::to_owned),
            document: d.map(str::to_owned),
        };
        assert!(l.matches(&f(Some("source_unavailable"), None, None)));
        assert!(!l.matches(&f(Some("INVALID_UTF8"), None, None)));
        assert!(l.matches(&f(None, Some("acme-prod"), Some("d1"))));
        assert!(!l.matches(&f(None, Some("other"), None)));
        assert!(!l.matches(&f(None, None, Some("d2"))));
    }

    #[test]
    fn ids_fall_back_to_the_body_hash() {
        let l = letter("INTERNAL", "acme-prod", "d1");
        assert!(l.id.starts_with("sha256:"));
        assert!(l.is_named(&l.id));
        assert!(l.is_named(&l.body_sha256[..10]));
        assert!(!l.is_named("sha256:00"));
    }

    #[test]
    fn replayed_messages_lose_failure_headers_but_keep_the_rest() {
        let mut h = FieldTable::default();
        for k in [
            "x-error-code",
            "x-error-detail",
            "x-failed-at",
            "x-attempts",
        ] {
            headers::set_str(&mut h, k, "v");
        }
        headers::set_str(&mut h, "x-first-failed-at", "2026-01-01T00:00:00Z");
        headers::set_str(&mut h, "traceparent", "00-abc-def-01");
        let props = BasicProperties::default()
            .with_message_id("m1".into())
            .with_headers(h);
        let id = Uuid::new_v4();
        let out = replay_properties(&props, id, "2026-11-22T00:00:00Z");
        let t = out.headers().as_ref();
        assert_eq!(headers::get_str(t, "x-error-code"), None);
        assert_eq!(headers::get_str(t, "x-attempts"), None);
        assert_eq!(
            headers::get_str(t, "x-first-failed-at").as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            headers::get_str(t, "traceparent").as_deref(),
            Some("00-abc-def-01")
        );
        assert_eq!(headers::get_str(t, "x-replay-id"), Some(id.to_string()));
        assert_eq!(out.message_id().as_ref().map(|m| m.as_str()), Some("m1"));
        assert_eq!(*out.delivery_mode(), Some(2));
    }

    #[test]
    fn replay_needs_a_filter_or_all() {
        let args = ReplayArgs {
            filters: Filters::default(),
            all: false,
            dry_run: false,
            limit: None,
            rate: 1.0,
            operator: None,
        };
        assert!(check_replay_args(&args).is_err());
        assert!(check_replay_args(&ReplayArgs {
            all: true,
            ..args.clone()
        })
        .is_ok());
        assert!(check_replay_args(&ReplayArgs {
            all: true,
            rate: -1.0,
            ..args
        })
        .is_err());
    }

    #[test]
    fn the_table_has_a_header_and_one_line_per_message() {
        let mut out = Vec::new();
        let rows = [letter("INVALID_UTF8", "acme-prod", "d1")];
        assert!(write_table(&mut out, &rows).is_ok());
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("ID"));
        assert!(text.contains("INVALID_UTF8"));
        assert!(text.contains("1 message(s)"));
    }
}
