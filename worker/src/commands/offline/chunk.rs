//! `chunk-worker chunk` and `chunk-worker normalize`.

use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc::sync_channel;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shared::normalize::normalize;
use shared::Engine;
use shared::{Chunk, ChunkedDocument, DocumentMeta};

use crate::cli::{ChunkArgs, ChunkFormat, NormalizeArgs};

use super::inputs::{collect_inputs, Input};
use super::outcome::{
    deliver, read_markdown, Delivery, FileFailure, OfflineError, Progress, Source, Summary,
};
use super::setup::{check_inputs, document_meta, engine_and_profile, read_metadata, with_metadata};

/// `chunk-worker chunk`: writes the chunks of every input file as JSONL to
/// `stdout`, files in input order, chunks in ordinal order.
///
/// The profile, the input list and the per-document flags are checked before
/// any file is read; a problem there is an [`OfflineError::Usage`].
pub fn chunk(
    args: &ChunkArgs,
    progress: Progress,
    mut stdout: impl Write,
    mut stderr: impl Write,
) -> Result<Summary, OfflineError> {
    let (engine, profile) = engine_and_profile(args)?;
    let inputs = collect_inputs(&args.paths);
    check_inputs(args, &inputs)?;
    let metadata = read_metadata(args)?;
    let mut files_out =
        match (args.format, &args.out) {
            (ChunkFormat::Files, Some(out)) => {
                let names = super::files::doc_names(&inputs, &args.paths, args.doc_name)?;
                Some((
                    super::files::FilesOut::new(out, &args.content_type, args.timestamps)?,
                    names,
                ))
            }
            (ChunkFormat::Files, None) => {
                return Err(OfflineError::Usage("--format files needs --out DIR".into()))
            }
            (ChunkFormat::Jsonl, Some(_)) => return Err(OfflineError::Usage(
                "--out is for --format files; JSONL goes to stdout (redirect it: > chunks.jsonl)"
                    .into(),
            )),
            (ChunkFormat::Jsonl, None) => None,
        };
    let used = engine
        .profile(Some(&profile))
        .map_err(|e| OfflineError::Usage(e.to_string()))?;
    if let Some(d) = &used.deprecation {
        let instead = d
            .replacement
            .as_ref()
            .map_or_else(String::new, |r| format!("; use {r} instead"));
        writeln!(
            stderr,
            "note: profile {} is deprecated{instead} (its chunks and ids are unchanged)",
            used.name
        )
        .ok();
    }

    let bar = progress_bar(progress, inputs.len());
    let mut summary = Summary::default();
    let (engine, profile, metadata, inputs) = (&engine, &profile, metadata.as_ref(), &inputs);
    let chunk_input = |input: &Input| match &input.listing_error {
        Some(e) => Err(FileFailure::source_unavailable(&input.path, e)),
        None => chunk_file(engine, profile, args, metadata, &input.path),
    };
    // Writes each document's result, in input order.
    let mut write_all = |results: &mut dyn Iterator<Item = FileResult>| -> Written {
        for (i, result) in results.enumerate() {
            let input = &inputs[i];
            bar.set_message(input.path.display().to_string());
            if let Ok(Some(note)) = result.as_ref().map(|d| d.note.as_ref()) {
                bar.suspend(|| writeln!(stderr, "{note}").ok());
            }
            // `--granularity`: only the chunks of the granularities asked for.
            let result = result.map(|mut done| {
                if !args.granularity.is_empty() {
                    done.doc.chunks.retain(|c| {
                        args.granularity
                            .iter()
                            .any(|g| g.granularity() == c.granularity)
                    });
                }
                done
            });
            let result = match (result, &mut files_out) {
                (Ok(done), Some((out, names))) => {
                    let run = super::files::DocumentRun {
                        path: &input.path,
                        doc_name: &names[i],
                        markdown: &done.markdown,
                        meta: &done.meta,
                        doc: done.doc,
                        profile: used,
                        timing: done.timing,
                    };
                    match out.document(run)? {
                        Ok(()) => {
                            summary.succeeded += 1;
                            bar.inc(1);
                            continue;
                        }
                        Err(e) => Err(FileFailure::chunking(&input.path, &e)),
                    }
                }
                (other, _) => other,
            };
            match result {
                Ok(done) => {
                    summary.succeeded += 1;
                    if deliver(write_jsonl(&mut stdout, &done.doc.chunks))? == Delivery::ReaderGone
                    {
                        break;
                    }
                }
                Err(failure) => {
                    summary.failed += 1;
                    // Nothing useful can be done when stderr itself is gone.
                    bar.suspend(|| writeln!(stderr, "{failure}").ok());
                }
            }
            bar.inc(1);
        }
        Ok(())
    };
    if std::thread::available_parallelism().map_or(true, |n| n.get() > 1) {
        // One thread chunks while this one writes: the output of a document
        // is serialized while the next is chunked.
        std::thread::scope(|s| -> Result<(), OfflineError> {
            let (done, chunked) = sync_channel(CHUNKED_AHEAD);
            s.spawn(move || {
                for input in inputs {
                    // The writer stopped (a closed stdout, an error): stop too.
                    if done.send(chunk_input(input)).is_err() {
                        break;
                    }
                }
            });
            write_all(&mut chunked.into_iter())
        })?;
    } else {
        // One core (`taskset -c 0`, a one-CPU container): a second thread
        // would only take turns with this one, and free every chunk in
        // another thread's arena; each document is chunked as it is written
        // (issue 18).
        write_all(&mut inputs.iter().map(chunk_input))?;
    }
    bar.finish_and_clear();
    if let Some((out, _)) = files_out {
        out.finish()?;
    }
    deliver(stdout.flush())?;
    Ok(summary)
}

/// `chunk-worker normalize`: writes the normalized document byte for byte.
pub fn normalize_file(
    args: &NormalizeArgs,
    mut stdout: impl Write,
    mut stderr: impl Write,
) -> Result<Summary, OfflineError> {
    let path = &args.path;
    let normalized = read_markdown(path).and_then(|source| {
        normalize(&source.markdown).map_err(|e| FileFailure::chunking(path, &e))
    });
    match normalized {
        Ok(doc) => {
            deliver(
                stdout
                    .write_all(doc.text.as_bytes())
                    .and_then(|()| stdout.flush()),
            )?;
            Ok(Summary {
                succeeded: 1,
                failed: 0,
            })
        }
        Err(failure) => {
            writeln!(stderr, "{failure}").ok();
            Ok(Summary {
                succeeded: 0,
                failed: 1,
            })
        }
    }
}

/// One file, read and chunked.
#[derive(Debug)]
struct Chunked {
    markdown: Vec<u8>,
    /// What an HTML conversion left out.
    note: Option<String>,
    meta: DocumentMeta,
    doc: ChunkedDocument,
    /// When chunking started and how long it took.
    timing: (time::OffsetDateTime, std::time::Duration),
}

/// One input file chunked, or why not.
type FileResult = Result<Chunked, FileFailure>;

/// What writing the results came to.
type Written = Result<(), OfflineError>;

/// Documents chunked ahead of the one being written.
const CHUNKED_AHEAD: usize = 4;

/// Reads and chunks one file. Nothing is written yet: a file that fails
/// leaves no output.
fn chunk_file(
    engine: &Engine,
    profile: &str,
    args: &ChunkArgs,
    metadata: Option<&serde_json::Value>,
    path: &Path,
) -> Result<Chunked, FileFailure> {
    let source = read_markdown(path)?;
    let mut meta = document_meta(args, path, &source.markdown);
    if let Some(m) = metadata {
        with_metadata(&mut meta, m);
    }
    source.title_into(&mut meta);
    let Source { markdown, note, .. } = source;
    let started = (time::OffsetDateTime::now_utc(), std::time::Instant::now());
    let doc = engine
        .chunk(&markdown, &meta, Some(profile))
        .map_err(|e| FileFailure::chunking(path, &e))?;
    Ok(Chunked {
        markdown,
        note,
        meta,
        doc,
        timing: (started.0, started.1.elapsed()),
    })
}

/// Writes chunks as JSON lines, streaming: a large file's output is never
/// held in memory twice (one line at a time). The line is serde_json's
/// serialization of the chunk, written by `shared::chunk::json` with a
/// faster string escaper (the contract suite compares the two).
fn write_jsonl(out: &mut impl Write, chunks: &[Chunk]) -> io::Result<()> {
    let mut line = Vec::new();
    for chunk in chunks {
        line.clear();
        shared::chunk::json::push_chunk_json(chunk, &mut line).map_err(io::Error::from)?;
        line.push(b'\n');
        // A closed pipe stays BrokenPipe.
        out.write_all(&line)?;
    }
    Ok(())
}

/// A bar on stderr only when asked for and there is more than one file: a
/// single file finishes before a bar would tell anything.
fn progress_bar(progress: Progress, files: usize) -> ProgressBar {
    if progress == Progress::Hidden || files < 2 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} files {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::DEFAULT_TENANT;
    use crate::cli::{exit, ProfileSelectArgs};
    use crate::commands::offline::setup::default_source_version;

    fn args(paths: &[&str]) -> ChunkArgs {
        ChunkArgs {
            profile: Some("spec-v1".into()),
            select: ProfileSelectArgs::default(),
            metadata: None,
            tenant: DEFAULT_TENANT.into(),
            document_id: None,
            source_version: None,
            title: None,
            format: crate::cli::ChunkFormat::Jsonl,
            out: None,
            content_type: "doc".into(),
            breadcrumb_mode: None,
            granularity: Vec::new(),
            doc_name: crate::cli::DocNameArg::Stem,
            timestamps: false,
            paths: paths.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn defaults_come_from_the_file_name_and_content() {
        let md = b"Intro text.\n\nGuide\n=====\n\n# Second\n";
        let meta = document_meta(&args(&[]), Path::new("docs/setup.guide.md"), md);
        assert_eq!(meta.tenant_id, "local");
        assert_eq!(meta.document_id, "setup.guide");
        assert_eq!(meta.source_version_id, default_source_version(md));
        // The engine resolves the title (first H1, else the file name).
        assert_eq!(meta.title, None);
        assert_eq!(meta.file_path.as_deref(), Some("docs/setup.guide.md"));
        assert_eq!(meta.source_url, None);
    }

    #[test]
    fn flags_override_the_defaults() {
        let mut a = args(&[]);
        a.document_id = Some("confluence:OPS:42".into());
        a.source_version = Some("v7".into());
        a.title = Some("Runbook".into());
        let meta = document_meta(&a, Path::new("x.md"), b"# Other\n");
        assert_eq!(
            (
                meta.document_id.as_str(),
                meta.source_version_id.as_str(),
                meta.title.as_deref()
            ),
            ("confluence:OPS:42", "v7", Some("Runbook"))
        );
    }

    #[test]
    fn default_source_version_is_a_sha256_prefix() {
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(default_source_version(b"abc"), "sha256:ba7816bf8f01cfea");
    }

    #[test]
    fn a_missing_file_is_one_failure_line_and_no_output() -> Result<(), OfflineError> {
        let missing = std::env::temp_dir().join("chunk-worker-offline-test-missing.md");
        let a = args(&[missing.to_str().unwrap_or("missing.md")]);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let summary = chunk(&a, Progress::Hidden, &mut out, &mut err)?;
        assert_eq!(summary.exit_code(), exit::FAILED);
        assert!(out.is_empty());
        let err = String::from_utf8_lossy(&err);
        assert!(
            err.starts_with("CHUNKING_FAILED SOURCE_UNAVAILABLE: "),
            "{err}"
        );
        Ok(())
    }

    /// A stdout whose reader has gone.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_stdout_stops_the_run_but_keeps_earlier_failures() -> Result<(), OfflineError> {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures");
        let missing = fixtures.join("no-such-fixture.md");
        let good = fixtures.join("01-headings.md");
        let a = ChunkArgs {
            paths: vec![missing, good.clone(), good],
            ..args(&[])
        };
        let mut err = Vec::new();
        let summary = chunk(&a, Progress::Hidden, ClosedPipe, &mut err)?;
        // The second good file is never chunked: the reader was gone.
        assert_eq!(
            summary,
            Summary {
                succeeded: 1,
                failed: 1
            }
        );
        assert_eq!(summary.exit_code(), exit::FAILED);
        assert_eq!(String::from_utf8_lossy(&err).lines().count(), 1);
        Ok(())
    }

    #[test]
    fn unknown_profile_is_a_usage_error_listing_the_valid_ones() {
        let mut a = args(&["never-read.md"]);
        a.profile = Some("nope".into());
        let result = chunk(&a, Progress::Hidden, Vec::new(), Vec::new());
        match result {
            Err(e @ OfflineError::Usage(_)) => {
                assert_eq!(e.exit_code(), exit::USAGE);
                assert!(e.to_string().contains("spec-v1"), "{e}");
            }
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn per_document_flags_need_a_single_file() {
        let mut a = args(&["a.md", "b.md"]);
        a.document_id = Some("doc".into());
        let result = chunk(&a, Progress::Hidden, Vec::new(), Vec::new());
        assert!(
            matches!(&result, Err(OfflineError::Usage(m)) if m.contains("--document-id")),
            "{result:?}"
        );
    }
}
