//! `chunk-worker explain`: chunks one file as `chunk` does and prints, per
//! chunk, why it ends ([`shared::explain`]): a table for people, or one
//! JSON object per line with `--json`.

use std::fs;
use std::io::Write;

use shared::{Chunk, EndReason};

use super::outcome::{deliver, read_markdown, FileFailure, OfflineError, Summary};
use super::setup::{default_meta, engine_for};
use crate::cli::{ExplainArgs, DEFAULT_TENANT};

/// `chunk-worker explain`: the profile is checked before the file is read
/// (a usage error, exit status 2); a file that cannot be read or chunked is
/// one `CHUNKING_FAILED` line on stderr (exit status 1).
pub fn explain(
    args: &ExplainArgs,
    mut stdout: impl Write,
    mut stderr: impl Write,
) -> Result<Summary, OfflineError> {
    let name = profile_name(args);
    let engine = engine_for(&args.select, &[&name])?;
    engine
        .profile(Some(&name))
        .map_err(|e| OfflineError::Usage(e.to_string()))?;
    let path = &args.path;
    let explained = read_markdown(path).and_then(|source| {
        let mut meta = default_meta(DEFAULT_TENANT, path, &source.markdown);
        source.title_into(&mut meta);
        engine
            .explain(&source.markdown, &meta, Some(&name))
            .map_err(|e| FileFailure::chunking(path, &e))
    });
    let (doc, reasons) = match explained {
        Ok(done) => done,
        Err(failure) => {
            writeln!(stderr, "{failure}").ok();
            return Ok(Summary {
                succeeded: 0,
                failed: 1,
            });
        }
    };
    let mut out = Vec::new();
    if !args.json {
        out.push(format!(
            "{} {}: {} chunk{}",
            doc.profile,
            doc.chunker_version,
            doc.chunks.len(),
            if doc.chunks.len() == 1 { "" } else { "s" }
        ));
        out.push(format!(
            "{:>4}  {:>6}  {:<15}  {:<32}  why it ends",
            "#", "tokens", "chars", "starts with"
        ));
    }
    for (c, r) in doc.chunks.iter().zip(&reasons) {
        out.push(if args.json {
            json_line(c, r)
        } else {
            table_line(c, r)
        });
    }
    let mut text = out.join("\n");
    text.push('\n');
    // A reader that closed the pipe early is no failure.
    deliver(
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush()),
    )?;
    Ok(Summary {
        succeeded: 1,
        failed: 0,
    })
}

/// `--profile`, else the last `--profile-file`'s profile, else the default
/// (as `chunk` picks it).
fn profile_name(args: &ExplainArgs) -> String {
    match (&args.profile, args.select.profile_files.last()) {
        (Some(name), _) => name.clone(),
        (None, Some(file)) => fs::read_to_string(file)
            .ok()
            .and_then(|src| crate::profiles::profile_name_in(&src))
            .unwrap_or_else(|| shared::profile::DEFAULT_PROFILE.to_owned()),
        (None, None) => shared::profile::DEFAULT_PROFILE.to_owned(),
    }
}

/// One row of the table.
fn table_line(c: &Chunk, r: &EndReason) -> String {
    let chars = format!("{}..{}", c.char_start, c.char_end);
    let ordinal = match c.granularity {
        shared::Granularity::Section | shared::Granularity::Paragraph => c.ordinal.to_string(),
        g => format!("{}{}", &g.as_str()[..1], c.ordinal),
    };
    format!(
        "{ordinal:>4}  {:>6}  {chars:<15}  {:<32}  {r}",
        c.token_count,
        first_words(c, 30)
    )
}

/// One JSON line.
fn json_line(c: &Chunk, r: &EndReason) -> String {
    serde_json::json!({
        "chunk_id": c.chunk_id,
        "ordinal": c.ordinal,
        "granularity": c.granularity,
        "token_count": c.token_count,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "reason": r,
        "explanation": r.to_string(),
    })
    .to_string()
}

/// The first words of the chunk's own text, whitespace collapsed, at most
/// `max` characters (an ellipsis when cut), quoted.
fn first_words(c: &Chunk, max: usize) -> String {
    let own = c
        .chunk_text
        .get(c.prefix().len()..)
        .unwrap_or(&c.chunk_text);
    let words: Vec<&str> = own.split_whitespace().take(12).collect();
    let joined = words.join(" ");
    let mut shown: String = joined.chars().take(max).collect();
    if shown.len() < joined.len() {
        shown.pop();
        shown.push('\u{2026}');
    }
    format!("\"{shown}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words_are_short_and_marked_when_cut() {
        let c = Chunk {
            chunk_text: "# Title\n\nSome   words here and a good many more after them".into(),
            ..test_chunk()
        };
        let shown = first_words(&c, 20);
        assert_eq!(shown.chars().count(), 22, "{shown}");
        assert!(shown.starts_with("\"# Title Some words") && shown.ends_with("\u{2026}\""));
    }

    fn test_chunk() -> Chunk {
        let engine = shared::Engine::builtin().unwrap_or_else(|e| panic!("{e}"));
        let doc = engine
            .chunk(b"Text.\n", &shared::DocumentMeta::default(), None)
            .unwrap_or_else(|e| panic!("{e}"));
        doc.chunks
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no chunk"))
    }
}
