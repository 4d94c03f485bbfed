//! Retrieval metrics of one system's chunks: the retrievers, and the
//! per-question metrics at each K and each context budget, summed in all,
//! per corpus, and kept per question (budgeted recall) for paired
//! comparisons between systems.

use std::collections::BTreeMap;

use shared::tokens::{TokenCounter, TokenizerKind};

use crate::bm25::Bm25;
use crate::config::Config;
use crate::dataset::Dataset;
use crate::dense;
use crate::error::EvalError;
use crate::metrics::{at_k, budgeted, fill_budget, ndcg, ChunkSpan};
use crate::system::{SysChunk, SystemOutput};

/// The retriever the metrics are measured with.
#[derive(Debug, Clone, Copy)]
pub enum Retriever<'e> {
    /// Okapi BM25 ([`bm25`]).
    Bm25,
    /// Cosine over an embedder's vectors ([`dense`]), e.g. all-MiniLM-L6-v2.
    Dense(&'e dyn shared::Embedder),
    /// BM25's and the embedder's rankings fused by reciprocal rank
    /// ([`shared::retrieval::reciprocal_rank_fusion`], k = 60).
    Hybrid(&'e dyn shared::Embedder),
}

/// The `k` of reciprocal-rank fusion in [`Retriever::Hybrid`].
pub const RRF_K: f64 = 60.0;

impl Retriever<'_> {
    /// The leaderboard's name for it.
    pub fn name(&self) -> String {
        match self {
            Self::Bm25 => "bm25".into(),
            Self::Dense(e) => dense_name(*e),
            Self::Hybrid(e) => format!("hybrid-bm25+{}", dense_name(*e)),
        }
    }
}

fn dense_name(e: &dyn shared::Embedder) -> String {
    let id = e.id();
    if id.starts_with("all-MiniLM-L6-v2") {
        "minilm".into()
    } else {
        id.to_owned()
    }
}

/// Per-question retrieval metrics summed over `dataset`'s questions (in
/// all and per corpus): at each K, at each context budget, and nDCG@10.
pub fn retrieval_sums(
    output: &SystemOutput,
    dataset: &Dataset,
    config: &Config,
    embed_text: bool,
    retriever: Retriever<'_>,
) -> Result<Sums, EvalError> {
    let mut sums = Sums::default();
    if dataset.questions.is_empty() {
        return Ok(sums);
    }
    let texts = output.chunks.iter().map(|c| {
        if embed_text {
            c.embed_text.as_str()
        } else {
            c.chunk_text.as_str()
        }
    });
    let embedding = |e: shared::embed::EmbedError| EvalError::Chunking(e.to_string());
    let (bm25, dense) = match retriever {
        Retriever::Bm25 => (Some(Bm25::new(texts)), None),
        Retriever::Dense(e) => (None, Some(dense::Dense::new(e, texts).map_err(embedding)?)),
        Retriever::Hybrid(e) => {
            let texts: Vec<&str> = texts.collect();
            let dense = dense::Dense::new(e, texts.iter().copied()).map_err(embedding)?;
            (Some(Bm25::new(texts)), Some(dense))
        }
    };
    let spans: Vec<ChunkSpan> = output.chunks.iter().map(|c| c.span).collect();
    let costs: Vec<u32> = output.chunks.iter().map(|c| c.budget_tokens).collect();
    let places: Vec<shared::retrieval::Span> = spans
        .iter()
        .map(|s| shared::retrieval::Span {
            doc: s.doc,
            start: s.text.0,
            end: s.text.1,
        })
        .collect();
    let counter = TokenizerKind::Cl100kBase.counter();
    let depth = config
        .ks
        .iter()
        .copied()
        .max()
        .unwrap_or(10)
        .max(10)
        .max(RANK_DEPTH);
    for q in &dataset.questions {
        let ranked = match (&bm25, &dense) {
            (Some(lexical), Some(index)) => {
                let a = lexical.search(&q.question, depth);
                let b = index.search(&q.question, depth).map_err(embedding)?;
                let mut fused = shared::retrieval::reciprocal_rank_fusion(&[&a, &b], RRF_K);
                fused.truncate(depth);
                fused
            }
            (Some(index), None) => index.search(&q.question, depth),
            (None, Some(index)) => index.search(&q.question, depth).map_err(embedding)?,
            (None, None) => Vec::new(),
        };
        sums.count(&q.corpus);
        for &k in &config.ks {
            let m = at_k(&spans, &ranked, q.doc, &q.references, k);
            for (name, v) in [
                ("recall", m.recall),
                ("token_recall", m.token_recall),
                ("token_precision", m.token_precision),
                ("token_iou", m.token_iou),
            ] {
                sums.add(&q.corpus, format!("{name}@{k}"), v);
            }
        }
        let order = if config.neighbours == 0 {
            ranked.clone()
        } else {
            shared::retrieval::with_neighbours(&ranked, &places, config.neighbours)
        };
        for &budget in &config.budgets {
            let pieces = fill_budget(&spans, &order, &costs, budget, |i, left| {
                cut_span(&output.chunks[i], left, &counter)
            });
            let m = budgeted(&pieces, q.doc, &q.references);
            sums.per_question
                .entry(format!("{}/{}", dataset.dir, q.id))
                .or_default()
                .insert(format!("budget_recall@{budget}"), m.recall);
            for (name, v) in [
                ("budget_recall", m.recall),
                ("budget_precision", m.precision),
                ("budget_iou", m.iou),
            ] {
                sums.add(&q.corpus, format!("{name}@{budget}"), v);
            }
        }
        sums.add(
            &q.corpus,
            "ndcg@10".into(),
            ndcg(&spans, &ranked, q.doc, &q.references, 10),
        );
    }
    Ok(sums)
}

/// Ranked chunks looked at per question: enough to fill the largest
/// budget with small chunks.
const RANK_DEPTH: usize = 400;

/// Metric sums over questions, in all and per corpus.
#[derive(Debug, Clone, Default)]
pub struct Sums {
    /// Metric name → sum over questions.
    pub total: BTreeMap<String, f64>,
    /// Questions.
    pub questions: usize,
    /// The same per corpus.
    pub per_corpus: BTreeMap<String, (BTreeMap<String, f64>, usize)>,
    /// `budget_recall@B` of each question, by `dataset/question id`: what a
    /// paired comparison of two systems needs (`scripts/eval/margins.py`).
    pub per_question: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Sums {
    fn add(&mut self, corpus: &str, metric: String, value: f64) {
        *self.total.entry(metric.clone()).or_default() += value;
        *self
            .per_corpus
            .entry(corpus.to_owned())
            .or_default()
            .0
            .entry(metric)
            .or_default() += value;
    }

    fn count(&mut self, corpus: &str) {
        self.questions += 1;
        self.per_corpus.entry(corpus.to_owned()).or_default().1 += 1;
    }

    pub(crate) fn merge(&mut self, other: Sums) {
        for (k, v) in other.total {
            *self.total.entry(k).or_default() += v;
        }
        self.questions += other.questions;
        self.per_question.extend(other.per_question);
        for (corpus, (metrics, n)) in other.per_corpus {
            let e = self.per_corpus.entry(corpus).or_default();
            for (k, v) in metrics {
                *e.0.entry(k).or_default() += v;
            }
            e.1 += n;
        }
    }
}

/// The span of the first `left` cl100k tokens of `chunk`'s text: the
/// longest prefix of `chunk_text` within `left` tokens, laid over the
/// chunk's text span from its start.
fn cut_span(chunk: &SysChunk, left: u32, counter: &dyn TokenCounter) -> (u32, u32) {
    let bounds: Vec<usize> = chunk
        .chunk_text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(chunk.chunk_text.len()))
        .collect();
    // The largest number of characters whose prefix fits.
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if counter.count(&chunk.chunk_text[..bounds[mid]]) <= left as usize {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let (start, end) = chunk.span.text;
    let chars = u32::try_from(lo).unwrap_or(u32::MAX);
    (start, end.min(start.saturating_add(chars)))
}
