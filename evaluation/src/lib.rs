//! `evaluation`: the harness that measures chunkers (issue 12).
//!
//! Every chosen profile (and every external system's chunks) is applied to
//! the documents of the datasets; then, with the retriever held fixed:
//! boundary precision / recall / F1 against gold topic boundaries, and for
//! every question the retrieval metrics at each K (recall of reference
//! excerpts, token-level recall / precision / IoU of the retrieved text,
//! nDCG@10 graded by overlap); plus cost (chunks, tokens) and chunking
//! latency per document. [`report`] turns the rows into the leaderboard
//! (JSON, HTML, a table).
//!
//! - [`align`]: file offsets → normalized offsets;
//! - [`dataset`]: loading and checking gold data;
//! - [`external`]: other systems' chunks (JSONL);
//! - [`bm25`], [`dense`]: the retrievers (BM25; an embedder's cosine);
//! - [`metrics`]: the metric functions (unit-tested on hand-checked cases);
//! - [`retrieval`]: the retrievers and the per-question retrieval metrics.

pub mod align;
pub mod bm25;
mod config;
pub mod dataset;
pub mod dense;
mod error;
pub mod external;
pub mod metrics;
pub mod report;
pub mod retrieval;
mod system;

use std::collections::BTreeMap;
use std::time::Instant;

use shared::tokens::{TokenCounter, TokenizerKind};
use shared::{DocumentMeta, Engine, Granularity};

pub use crate::config::Config;
use crate::dataset::Dataset;
pub use crate::error::EvalError;
use crate::metrics::{boundary_matches, percentile, prf, ChunkSpan};
pub use crate::report::{Leaderboard, Row};
pub use crate::retrieval::{retrieval_sums, Retriever, Sums, RRF_K};
pub use crate::system::{SysChunk, System, SystemOutput};

/// Chunks every document of `dataset` with `profile` and keeps the chunks
/// of one granularity (`None`: the profile's primary one): a profile with
/// several granularities is measured one granularity at a time.
pub fn run_profile(
    engine: &Engine,
    profile: &str,
    granularity: Option<Granularity>,
    dataset: &Dataset,
) -> Result<SystemOutput, EvalError> {
    let p = engine
        .profile(Some(profile))
        .map_err(|e| EvalError::Chunking(e.to_string()))?;
    let granularity = granularity.unwrap_or(p.granularity);
    if !p.granularities().contains(&granularity) {
        return Err(EvalError::Chunking(format!(
            "{profile} has no {} chunks (its granularities: {})",
            granularity.as_str(),
            p.granularities()
                .iter()
                .map(|g| g.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let counter = p.tokenizer.counter();
    let cl100k =
        (p.tokenizer != TokenizerKind::Cl100kBase).then(|| TokenizerKind::Cl100kBase.counter());
    let mut out = SystemOutput::default();
    for (doc_index, d) in dataset.documents.iter().enumerate() {
        let meta = DocumentMeta {
            tenant_id: "eval".into(),
            document_id: d.name.clone(),
            source_version_id: "v1".into(),
            file_path: Some(d.name.clone()),
            ..DocumentMeta::default()
        };
        let started = Instant::now();
        let doc = engine
            .chunk(d.raw.as_bytes(), &meta, Some(profile))
            .map_err(|e| EvalError::Chunking(format!("{profile} on {}: {e}", d.name)))?;
        out.latencies_ms
            .push((d.name.clone(), started.elapsed().as_secs_f64() * 1000.0));
        for c in shared::retrieval::of_granularity(doc.chunks, granularity) {
            let from_text = doc.normalized[..c.byte_start as usize].ends_with(c.prefix());
            let text_start = if from_text {
                c.char_start - u64::from(c.overlap_prefix_chars)
            } else {
                c.char_start
            };
            let to32 = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
            out.chunks.push(SysChunk {
                span: ChunkSpan {
                    doc: doc_index,
                    own: (to32(c.char_start), to32(c.char_end)),
                    text: (to32(text_start), to32(c.char_end)),
                },
                embed_tokens: u32::try_from(counter.count(&c.embed_text)).unwrap_or(u32::MAX),
                tokens: c.token_count,
                budget_tokens: cl100k.as_ref().map_or(c.token_count, |k| {
                    u32::try_from(k.count(&c.chunk_text)).unwrap_or(u32::MAX)
                }),
                embed_text: c.embed_text,
                chunk_text: c.chunk_text,
            });
        }
    }
    Ok(out)
}

/// Places an external system's chunks on `dataset`'s documents (normalized
/// offsets; own span = the part after the previous chunk's end).
pub fn run_external(
    chunks: &BTreeMap<String, Vec<external::ExternalChunk>>,
    dataset: &Dataset,
) -> SystemOutput {
    let counter = TokenizerKind::Cl100kBase.counter();
    let mut out = SystemOutput::default();
    for (doc_index, d) in dataset.documents.iter().enumerate() {
        let Some(list) = chunks.get(&d.name) else {
            continue;
        };
        let mut covered = 0u32;
        for c in list {
            let (s, e) = (d.map.at(c.start), d.map.at(c.end));
            let own = (s.max(covered).min(e), e);
            covered = covered.max(e);
            let tokens = u32::try_from(counter.count(&c.text)).unwrap_or(u32::MAX);
            out.chunks.push(SysChunk {
                span: ChunkSpan {
                    doc: doc_index,
                    own,
                    text: (s, e),
                },
                embed_text: c.text.clone(),
                chunk_text: c.text.clone(),
                tokens,
                embed_tokens: tokens,
                budget_tokens: tokens,
            });
        }
    }
    out
}

/// Boundary counts `(matched, predicted, gold)` of `output` on `dataset`.
pub fn boundary_counts(
    output: &SystemOutput,
    dataset: &Dataset,
    tolerance: u32,
) -> (usize, usize, usize) {
    let mut starts: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for c in &output.chunks {
        if c.span.own.0 < c.span.own.1 {
            starts.entry(c.span.doc).or_default().push(c.span.own.0);
        }
    }
    let mut sum = (0, 0, 0);
    for g in &dataset.boundaries {
        // The first chunk's start is the document's start, not a boundary.
        let predicted: Vec<u32> = starts
            .get(&g.doc)
            .map(|s| s.iter().skip(1).copied().collect())
            .unwrap_or_default();
        let (m, p, n) = boundary_matches(&g.boundaries, &predicted, tolerance);
        sum = (sum.0 + m, sum.1 + p, sum.2 + n);
    }
    sum
}

/// Evaluates `systems` on `datasets`: one row per system, indexed text and
/// retriever.
pub fn evaluate(
    engine: &Engine,
    systems: &[System],
    datasets: &[Dataset],
    config: &Config,
    retrievers: &[Retriever<'_>],
    mut progress: impl FnMut(&str),
) -> Result<Vec<Row>, EvalError> {
    let jobs = config.jobs.clamp(1, systems.len().max(1));
    let mut done: Vec<Option<Result<Vec<Row>, EvalError>>> =
        (0..systems.len()).map(|_| None).collect();
    if jobs == 1 {
        for (i, system) in systems.iter().enumerate() {
            done[i] = Some(evaluate_system(
                engine, system, datasets, config, retrievers,
            ));
            progress(system.name());
        }
    } else {
        // Threads take the next system in turn; rows come back in the
        // systems' order whatever finishes first.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let (tx, next) = (tx.clone(), &next);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(system) = systems.get(i) else { break };
                    let rows = evaluate_system(engine, system, datasets, config, retrievers);
                    if tx.send((i, rows)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for (i, rows) in rx {
                progress(systems[i].name());
                done[i] = Some(rows);
            }
        });
    }
    let mut rows = Vec::new();
    for (system, r) in systems.iter().zip(done) {
        match r {
            Some(r) => rows.extend(r?),
            None => {
                return Err(EvalError::Chunking(format!(
                    "{}: the evaluation thread stopped without a result",
                    system.name()
                )))
            }
        }
    }
    Ok(rows)
}

/// The rows of one system: one per indexed text and retriever.
fn evaluate_system(
    engine: &Engine,
    system: &System,
    datasets: &[Dataset],
    config: &Config,
    retrievers: &[Retriever<'_>],
) -> Result<Vec<Row>, EvalError> {
    let mut rows = Vec::new();
    {
        let mut outputs = Vec::new();
        for d in datasets {
            let out = match system {
                System::Profile {
                    profile,
                    granularity,
                    ..
                } => run_profile(engine, profile, *granularity, d)?,
                System::External { chunks, .. } => run_external(chunks, d),
            };
            outputs.push(out);
        }
        let (mut m, mut p, mut g) = (0, 0, 0);
        for (out, d) in outputs.iter().zip(datasets) {
            let c = boundary_counts(out, d, config.tolerance);
            (m, p, g) = (m + c.0, p + c.1, g + c.2);
        }
        let (bp, br, bf) = prf(m, p, g);
        let all: Vec<&SysChunk> = outputs.iter().flat_map(|o| &o.chunks).collect();
        let tokens: Vec<f64> = all.iter().map(|c| f64::from(c.tokens)).collect();
        let latencies: Vec<(String, f64)> = outputs
            .iter()
            .flat_map(|o| o.latencies_ms.iter().cloned())
            .collect();
        let lat: Vec<f64> = latencies.iter().map(|(_, ms)| *ms).collect();
        let mut slowest = latencies.clone();
        slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        let needs_model = match system {
            System::Profile { profile, .. } => engine
                .profiles()
                .get(profile)
                .is_ok_and(|p| p.chunker().needs_embedder()),
            System::External { .. } => false,
        };
        let (experimental, granularity) = match system {
            System::Profile {
                profile,
                granularity,
                ..
            } => {
                let p = engine.profiles().get(profile).ok();
                (
                    p.is_some_and(|p| p.experimental),
                    granularity
                        .or_else(|| p.map(|p| p.granularity))
                        .map(|g| g.as_str().to_owned()),
                )
            }
            System::External { .. } => (false, None),
        };
        // An external system gives one text: one row.
        let texts = match system {
            System::External { .. } => vec![false],
            System::Profile { .. } => config.texts.clone(),
        };
        for (&embed, &retriever) in texts
            .iter()
            .flat_map(|t| retrievers.iter().map(move |r| (t, r)))
        {
            let mut sums = Sums::default();
            for (out, d) in outputs.iter().zip(datasets) {
                sums.merge(retrieval_sums(out, d, config, embed, retriever)?);
            }
            let mean = |metrics: BTreeMap<String, f64>, n: usize| -> BTreeMap<String, f64> {
                metrics
                    .into_iter()
                    .map(|(k, v)| (k, if n == 0 { 0.0 } else { v / n as f64 }))
                    .collect()
            };
            let questions = sums.questions;
            let per_question = std::mem::take(&mut sums.per_question);
            let metrics = mean(sums.total, questions);
            let per_corpus: BTreeMap<String, BTreeMap<String, f64>> = sums
                .per_corpus
                .into_iter()
                .map(|(corpus, (m, n))| {
                    let mut m = mean(m, n);
                    m.insert("questions".into(), n as f64);
                    (corpus, m)
                })
                .collect();
            rows.push(Row {
                name: system.name().to_owned(),
                external: matches!(system, System::External { .. }),
                experimental,
                granularity: granularity.clone(),
                recommended: false,
                retriever: retriever.name(),
                text: if embed { "embed_text" } else { "chunk_text" }.into(),
                boundary_precision: bp,
                boundary_recall: br,
                boundary_f1: bf,
                metrics,
                per_corpus,
                per_question,
                questions,
                needs_model,
                chunk_ms_per_doc: (!lat.is_empty())
                    .then(|| lat.iter().sum::<f64>() / lat.len() as f64),
                chunks: all.len(),
                mean_tokens: if tokens.is_empty() {
                    0.0
                } else {
                    tokens.iter().sum::<f64>() / tokens.len() as f64
                },
                p95_tokens: percentile(&tokens, 95.0),
                total_tokens_embedded: all.iter().map(|c| u64::from(c.embed_tokens)).sum(),
                latency_p50_ms: (!lat.is_empty()).then(|| percentile(&lat, 50.0)),
                latency_p95_ms: (!lat.is_empty()).then(|| percentile(&lat, 95.0)),
                latency_p99_ms: (!lat.is_empty()).then(|| percentile(&lat, 99.0)),
                slowest_documents: slowest
                    .iter()
                    .take(3)
                    .map(|(n, ms)| format!("{n} ({ms:.1} ms)"))
                    .collect(),
            });
        }
    }
    Ok(rows)
}
