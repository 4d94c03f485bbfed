//! `chunk-worker links`: the links of Markdown files as JSONL, one object per
//! link occurrence, with the chunk that holds it (the same extraction and
//! classification the queue worker stores in `document_links`).

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use shared::links::{extract_links, Classifier, Link, LinkConfig};
use shared::Engine;
use shared::ErrorCode;

use super::inputs::collect_inputs;
use super::outcome::{deliver, read_markdown, Delivery, FileFailure, OfflineError, Summary};
use super::setup::{check_inputs, document_meta, engine_and_profile, read_metadata, with_metadata};
use crate::cli::LinksArgs;

/// One output line: the link plus the ids of its document and chunk.
#[derive(Debug, Serialize)]
struct LinkRecord<'a> {
    tenant_id: &'a str,
    document_id: &'a str,
    source_version_id: &'a str,
    chunk_id: &'a str,
    #[serde(flatten)]
    link: &'a Link,
}

/// `chunk-worker links`: writes the links of every input file as JSONL to
/// `stdout`, files in input order, links in document order. Usage problems
/// (profile, inputs, per-document flags) are found before any file is read.
pub fn links(
    args: &LinksArgs,
    mut stdout: impl Write,
    mut stderr: impl Write,
) -> Result<Summary, OfflineError> {
    let (engine, profile) = engine_and_profile(&args.chunk)?;
    let inputs = collect_inputs(&args.chunk.paths);
    check_inputs(&args.chunk, &inputs)?;
    let metadata = read_metadata(&args.chunk)?;
    if inputs.len() > 1 && args.source_url.is_some() {
        return Err(OfflineError::Usage(format!(
            "--source-url can only be used with a single input file, but {} were given or found \
             (use --confluence-base-url for the site of several files)",
            inputs.len()
        )));
    }
    let config = LinkConfig {
        confluence_base_urls: args.confluence_base_urls.clone(),
        jira_base_urls: args.jira_base_urls.clone(),
    };
    let classifier = Classifier::new(&config, args.source_url.as_deref());

    let mut summary = Summary::default();
    for input in &inputs {
        let result = match &input.listing_error {
            Some(e) => Err(FileFailure::source_unavailable(&input.path, e)),
            None => {
                let file = FileJob {
                    profile: &profile,
                    metadata: metadata.as_ref(),
                    path: &input.path,
                };
                links_of_file(&engine, args, &classifier, &file)
            }
        };
        match result {
            Ok(jsonl) => {
                summary.succeeded += 1;
                if deliver(stdout.write_all(&jsonl))? == Delivery::ReaderGone {
                    break;
                }
            }
            Err(failure) => {
                summary.failed += 1;
                // Nothing useful can be done when stderr itself is gone.
                writeln!(stderr, "{failure}").ok();
            }
        }
    }
    deliver(stdout.flush())?;
    Ok(summary)
}

/// One file to process and how.
struct FileJob<'a> {
    profile: &'a str,
    metadata: Option<&'a serde_json::Value>,
    path: &'a Path,
}

/// Reads and chunks one file and extracts its links; returns the JSONL lines.
fn links_of_file(
    engine: &Engine,
    args: &LinksArgs,
    classifier: &Classifier,
    file: &FileJob<'_>,
) -> Result<Vec<u8>, FileFailure> {
    let path = file.path;
    let source = read_markdown(path)?;
    let mut meta = document_meta(&args.chunk, path, &source.markdown);
    meta.source_url = args.source_url.clone();
    if let Some(m) = file.metadata {
        with_metadata(&mut meta, m);
    }
    source.title_into(&mut meta);
    let markdown = source.markdown;
    let doc = engine
        .chunk(&markdown, &meta, Some(file.profile))
        .map_err(|e| FileFailure::chunking(path, &e))?;
    let mut jsonl = Vec::new();
    for link in extract_links(&doc.normalized, &doc.chunks, classifier) {
        let chunk_id = doc
            .chunks
            .iter()
            .find(|c| c.ordinal == link.chunk_ordinal && c.granularity == link.chunk_granularity)
            .map_or("", |c| c.chunk_id.as_str());
        let record = LinkRecord {
            tenant_id: &meta.tenant_id,
            document_id: &meta.document_id,
            source_version_id: &meta.source_version_id,
            chunk_id,
            link: &link,
        };
        serde_json::to_writer(&mut jsonl, &record).map_err(|e| FileFailure {
            code: ErrorCode::Internal,
            path: path.display().to_string(),
            detail: format!("cannot serialize link {}: {e}", link.link_ordinal),
        })?;
        jsonl.push(b'\n');
    }
    Ok(jsonl)
}
