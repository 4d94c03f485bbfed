//! `chunk-worker report`: one self-contained HTML page that shows where the
//! chunk boundaries of one or more profiles fall in each input file.
//!
//! - `model` cuts a chunked document into spans, gaps and overlap regions
//!   (byte ranges of the normalized text);
//! - `html` renders the page (inline CSS and script, `report.css` and
//!   `report.js`), `svg` the size histograms.
//!
//! Each chunk's shading says on hover why the chunk ends (the sentence of
//! `chunk-worker explain`).
//!
//! Files are read and chunked as `chunk` does them (same defaults for the
//! document metadata, so the chunk ids are the ones `chunk` prints); a file
//! that fails is one `CHUNKING_FAILED` line on stderr and a line in the
//! page, and the page still shows the others. The page is written to a
//! temporary file beside `--out` and renamed into place.

mod html;
mod model;
mod svg;

use std::fs;
use std::io::Write;
use std::path::Path;

use shared::profile::DEFAULT_PROFILE;
use shared::{DocumentMeta, Engine, ErrorCode};

use super::inputs::{collect_inputs, Input};
use super::outcome::{read_markdown, FileFailure, OfflineError, Summary};
use super::setup::{default_meta, engine_for};
use crate::cli::{ReportArgs, DEFAULT_TENANT};
use model::{FileReport, ProfileInfo};

/// `chunk-worker report`: chunks every input under every profile and writes
/// the page to `--out`; per-file failures go to `stderr` (and the page),
/// then one line naming the page.
///
/// Profiles, inputs and the output directory are checked before any file is
/// read; a problem there is an [`OfflineError::Usage`].
pub fn report(args: &ReportArgs, mut stderr: impl Write) -> Result<Summary, OfflineError> {
    let names = profile_names(args);
    let used: Vec<&str> = names.iter().map(String::as_str).collect();
    let engine = engine_for(&args.select, &used)?;
    // One lane per profile, and per granularity of a profile that has
    // several (its granularities overlap: one lane could not show them).
    let mut profiles = Vec::new();
    for name in &names {
        let profile = engine
            .profile(Some(name))
            .map_err(|e| OfflineError::Usage(e.to_string()))?;
        profiles.extend(ProfileInfo::lanes(profile));
    }
    let inputs = collect_inputs(&args.paths);
    if inputs.is_empty() {
        let given: Vec<_> = args.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(OfflineError::Usage(format!(
            "no input files found: no *.md files under {}",
            given.join(", ")
        )));
    }
    check_out(&args.out)?;

    let mut summary = Summary::default();
    let mut files = Vec::with_capacity(inputs.len());
    let mut failures = Vec::new();
    for input in &inputs {
        let (file, failed) = report_file(&engine, &names, input);
        let file = file.map(|f| f.into_lanes(&names, &profiles));
        for failure in &failed {
            // Nothing useful can be done when stderr itself is gone.
            writeln!(stderr, "{failure}").ok();
            failures.push(failure.to_string());
        }
        if failed.is_empty() {
            summary.succeeded += 1;
        } else {
            summary.failed += 1;
        }
        files.extend(file);
    }

    let title = args.title.clone().unwrap_or_else(|| default_title(&inputs));
    let page = html::render(&html::Page {
        title: &title,
        profiles: &profiles,
        files: &files,
        failures: &failures,
    });
    write_atomically(&args.out, page.as_bytes())?;
    let chunks: usize = files
        .iter()
        .flat_map(|f| &f.runs)
        .filter_map(|r| r.as_ref().ok())
        .map(|d| d.chunks.len())
        .sum();
    writeln!(
        stderr,
        "wrote {} ({} KB): {} file{} x {} profile{} ({}), {chunks} chunks; {} failed",
        args.out.display(),
        page.len().div_ceil(1024),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        summary.failed,
    )
    .ok();
    Ok(summary)
}

/// `--profile`s in order, without repeats; else the profiles of the
/// `--profile-file`s; else the default profile.
fn profile_names(args: &ReportArgs) -> Vec<String> {
    let mut names: Vec<String> = if args.profiles.is_empty() {
        args.select
            .profile_files
            .iter()
            .filter_map(|file| fs::read_to_string(file).ok())
            .filter_map(|src| crate::profiles::profile_name_in(&src))
            .collect()
    } else {
        args.profiles.clone()
    };
    if names.is_empty() {
        names.push(DEFAULT_PROFILE.to_owned());
    }
    let mut seen = Vec::with_capacity(names.len());
    names.retain(|n| {
        let new = !seen.contains(n);
        seen.push(n.clone());
        new
    });
    names
}

/// Reads and chunks one input under every profile. `None` when it could
/// not be read or no profile chunked it; the failures, one per run.
fn report_file(
    engine: &Engine,
    profiles: &[String],
    input: &Input,
) -> (Option<FileReport>, Vec<FileFailure>) {
    let path = &input.path;
    let shown = path.display().to_string();
    let unavailable = |detail: String| FileFailure {
        code: ErrorCode::SourceUnavailable,
        path: shown.clone(),
        detail,
    };
    if let Some(e) = &input.listing_error {
        return (None, vec![unavailable(e.to_string())]);
    }
    let source = match read_markdown(path) {
        Ok(source) => source,
        Err(e) => return (None, vec![e]),
    };
    let mut meta = report_meta(path, &source.markdown);
    source.title_into(&mut meta);
    let markdown = source.markdown;
    let mut failures = Vec::new();
    let mut reasons = std::collections::HashMap::new();
    let runs: Vec<_> = profiles
        .iter()
        .map(|profile| {
            let explained = engine.explain(&markdown, &meta, Some(profile));
            let explained = explained.map(|(doc, why)| {
                for (c, r) in doc.chunks.iter().zip(why) {
                    let key = (doc.profile.clone(), c.chunk_id.clone());
                    reasons.insert(key, r.to_string());
                }
                doc
            });
            explained.map_err(|e| {
                let failure = FileFailure {
                    code: e.code(),
                    path: shown.clone(),
                    detail: if profiles.len() > 1 {
                        format!("{e} (profile {profile})")
                    } else {
                        e.to_string()
                    },
                };
                let line = failure.to_string();
                failures.push(failure);
                line
            })
        })
        .collect();
    let file = runs.iter().any(Result::is_ok).then_some(FileReport {
        path: shown,
        bytes: markdown.len(),
        runs,
        reasons,
    });
    (file, failures)
}

/// The metadata `chunk` gives a file without per-document flags (tenant
/// `local`), so the page shows the chunk ids `chunk` prints.
fn report_meta(path: &Path, markdown: &[u8]) -> DocumentMeta {
    default_meta(DEFAULT_TENANT, path, markdown)
}

/// `Chunk report: a.md, b.md` (the first three names, then how many more).
fn default_title(inputs: &[Input]) -> String {
    let names: Vec<String> = inputs
        .iter()
        .take(3)
        .map(|i| {
            i.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| i.path.display().to_string())
        })
        .collect();
    let more = match inputs.len().saturating_sub(3) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("Chunk report: {}{more}", names.join(", "))
}

/// `--out` must name a file in an existing directory: found out before any
/// chunking is done.
fn check_out(out: &Path) -> Result<(), OfflineError> {
    if out.is_dir() {
        return Err(OfflineError::Usage(format!(
            "--out {} is a directory; name the HTML file to write",
            out.display()
        )));
    }
    let dir = match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(OfflineError::Usage(format!(
            "--out {}: directory {} does not exist",
            out.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Writes `bytes` to a temporary file beside `out`, then renames it over
/// `out`: a reader never sees half a page, and a failure leaves any
/// previous page as it was.
fn write_atomically(out: &Path, bytes: &[u8]) -> Result<(), OfflineError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.html".to_owned());
    let tmp = out.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, out));
    written.map_err(|e| {
        fs::remove_file(&tmp).ok();
        OfflineError::Files(out.to_path_buf(), e)
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::ProfileSelectArgs;

    fn args(profiles: &[&str]) -> ReportArgs {
        ReportArgs {
            profiles: profiles.iter().map(|p| (*p).to_owned()).collect(),
            select: ProfileSelectArgs::default(),
            out: PathBuf::from("report.html"),
            title: None,
            paths: Vec::new(),
        }
    }

    #[test]
    fn profiles_default_to_spec_v1_and_repeats_are_dropped() {
        assert_eq!(profile_names(&args(&[])), ["spec-v1"]);
        assert_eq!(
            profile_names(&args(&["recursive-v1", "spec-v1", "recursive-v1"])),
            ["recursive-v1", "spec-v1"]
        );
    }

    #[test]
    fn the_metadata_is_chunks_default() {
        let meta = report_meta(Path::new("docs/setup.guide.md"), b"abc");
        assert_eq!(meta.document_id, "setup.guide");
        assert_eq!(meta.source_version_id, "sha256:ba7816bf8f01cfea");
        assert_eq!(meta.tenant_id, "local");
    }

    #[test]
    fn an_output_in_a_missing_directory_is_a_usage_error() {
        let out = std::env::temp_dir().join("chunk-worker-no-such-dir/x/report.html");
        assert!(matches!(check_out(&out), Err(OfflineError::Usage(_))));
        assert!(matches!(
            check_out(&std::env::temp_dir()),
            Err(OfflineError::Usage(_))
        ));
        assert!(check_out(Path::new("report.html")).is_ok());
    }
}
