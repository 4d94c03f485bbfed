//! The leaderboard: rows sorted by the rank metric, the recommended profile
//! marked, written as JSON, a plain-text table and one self-contained HTML
//! file (no network: inline CSS, inline script to sort, an inline SVG chart
//! of quality against cost).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

mod html;

/// The Chunking System specification's SLO for documents under 10K tokens: P95 below this.
pub const SLO_P95_MS: f64 = 500.0;

/// One system (profile or external) with one indexed text.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Profile or external system name.
    pub name: String,
    /// Chunks from another system (`--external`).
    pub external: bool,
    /// The profile's strategy is experimental.
    pub experimental: bool,
    /// The granularity whose chunks were measured (profiles only).
    pub granularity: Option<String>,
    /// The recommended row (best on the rank metric among non-experimental
    /// profiles meeting the latency SLO).
    pub recommended: bool,
    /// The retriever (`bm25`, `minilm`).
    pub retriever: String,
    /// What was indexed: `embed_text` or `chunk_text`.
    pub text: String,
    /// Matched / predicted boundaries.
    pub boundary_precision: f64,
    /// Matched / gold boundaries.
    pub boundary_recall: f64,
    /// Their harmonic mean.
    pub boundary_f1: f64,
    /// `recall@K`, `token_recall@K`, `token_precision@K`, `token_iou@K`,
    /// `ndcg@10`, averaged over questions.
    #[serde(flatten)]
    pub metrics: BTreeMap<String, f64>,
    /// The metrics per corpus (and its `questions`).
    pub per_corpus: BTreeMap<String, BTreeMap<String, f64>>,
    /// `budget_recall@B` of each question, by `dataset/question id`: a
    /// margin between two rows is judged question by question
    /// (`scripts/eval/margins.py` draws its bootstrap interval from these).
    pub per_question: BTreeMap<String, BTreeMap<String, f64>>,
    /// Questions asked.
    pub questions: usize,
    /// The profile needs the embedding model to chunk.
    pub needs_model: bool,
    /// Mean chunking time per document, milliseconds (profiles only).
    pub chunk_ms_per_doc: Option<f64>,
    /// Chunks over all documents.
    pub chunks: usize,
    /// Mean tokens per chunk (`chunk_text`).
    pub mean_tokens: f64,
    /// 95th percentile of tokens per chunk.
    pub p95_tokens: f64,
    /// Tokens of every `embed_text`: what indexing costs.
    pub total_tokens_embedded: u64,
    /// Chunking latency per document, milliseconds (profiles only).
    pub latency_p50_ms: Option<f64>,
    /// 95th percentile.
    pub latency_p95_ms: Option<f64>,
    /// 99th percentile.
    pub latency_p99_ms: Option<f64>,
    /// The slowest documents with their times.
    pub slowest_documents: Vec<String>,
}

impl Row {
    /// `embed_text/bm25`: what was indexed and how it was searched.
    pub fn text_and_retriever(&self) -> String {
        format!("{}/{}", self.text, self.retriever)
    }

    /// The value of metric `key` (a column name of the JSON).
    pub fn value(&self, key: &str) -> Option<f64> {
        match key {
            "boundary_precision" => Some(self.boundary_precision),
            "boundary_recall" => Some(self.boundary_recall),
            "boundary_f1" => Some(self.boundary_f1),
            "mean_tokens" => Some(self.mean_tokens),
            "p95_tokens" => Some(self.p95_tokens),
            "chunks" => Some(self.chunks as f64),
            "total_tokens_embedded" => Some(self.total_tokens_embedded as f64),
            "latency_p50_ms" => self.latency_p50_ms,
            "latency_p95_ms" => self.latency_p95_ms,
            "latency_p99_ms" => self.latency_p99_ms,
            "chunk_ms_per_doc" => self.chunk_ms_per_doc,
            other => self.metrics.get(other).copied(),
        }
    }
}

/// Whether a higher value of `key` is better.
fn higher_is_better(key: &str) -> bool {
    !(key.starts_with("latency") || key.contains("tokens") || key == "chunks")
}

/// The whole result.
#[derive(Debug, Clone, Serialize)]
pub struct Leaderboard {
    /// Dataset names, comma-separated.
    pub dataset: String,
    /// The retriever.
    pub retriever: String,
    /// The metric rows are sorted by.
    pub rank_by: String,
    /// The cut-offs of the @K metrics.
    pub k: Vec<usize>,
    /// The context budgets, cl100k tokens.
    pub budgets: Vec<u32>,
    /// Boundary tolerance, code points.
    pub boundary_tolerance: u32,
    /// Rows, best first.
    pub rows: Vec<Row>,
}

impl Leaderboard {
    /// Sorts `rows` by `rank_by` (ties by name) and marks the recommended
    /// row; `rank_by` must name a metric of the rows.
    pub fn new(
        dataset: String,
        rank_by: &str,
        (k, budgets): (Vec<usize>, Vec<u32>),
        tolerance: u32,
        mut rows: Vec<Row>,
    ) -> Result<Self, String> {
        if let Some(r) = rows.first() {
            if r.value(rank_by).is_none() {
                let mut valid: Vec<String> = r.metrics.keys().cloned().collect();
                valid.extend(
                    [
                        "boundary_f1",
                        "boundary_precision",
                        "boundary_recall",
                        "mean_tokens",
                    ]
                    .map(String::from),
                );
                return Err(format!(
                    "--rank-by {rank_by:?} is not a metric; valid: {}",
                    valid.join(", ")
                ));
            }
        }
        let up = higher_is_better(rank_by);
        rows.sort_by(|a, b| {
            let (x, y) = (
                a.value(rank_by).unwrap_or(0.0),
                b.value(rank_by).unwrap_or(0.0),
            );
            let ord = if up { y.total_cmp(&x) } else { x.total_cmp(&y) };
            ord.then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.text.cmp(&b.text))
                .then_with(|| a.retriever.cmp(&b.retriever))
        });
        let mut retrievers: Vec<String> = rows.iter().map(|r| r.retriever.clone()).collect();
        retrievers.sort();
        retrievers.dedup();
        if let Some(best) = rows.iter_mut().find(|r| {
            !r.external && !r.experimental && r.latency_p95_ms.is_some_and(|p| p < SLO_P95_MS)
        }) {
            best.recommended = true;
        }
        Ok(Self {
            dataset,
            retriever: if retrievers.is_empty() {
                "bm25".into()
            } else {
                retrievers.join(", ")
            },
            rank_by: rank_by.to_owned(),
            k,
            budgets,
            boundary_tolerance: tolerance,
            rows,
        })
    }

    /// The metric columns shown, in order.
    pub fn columns(&self) -> Vec<String> {
        let mut cols = Vec::new();
        for m in ["budget_recall", "budget_precision", "budget_iou"] {
            for b in &self.budgets {
                cols.push(format!("{m}@{b}"));
            }
        }
        cols.extend(["boundary_precision", "boundary_recall", "boundary_f1"].map(String::from));
        for k in &self.k {
            for m in ["recall", "token_recall", "token_precision", "token_iou"] {
                cols.push(format!("{m}@{k}"));
            }
        }
        cols.push("ndcg@10".into());
        cols.extend(
            [
                "chunks",
                "mean_tokens",
                "p95_tokens",
                "total_tokens_embedded",
                "chunk_ms_per_doc",
                "latency_p50_ms",
                "latency_p95_ms",
                "latency_p99_ms",
            ]
            .map(String::from),
        );
        cols
    }

    /// A plain-text table: the key columns.
    pub fn table(&self) -> String {
        let mut cols: Vec<String> = self
            .budgets
            .iter()
            .map(|b| format!("budget_recall@{b}"))
            .collect();
        if let Some(b) = self.budgets.get(self.budgets.len() / 2) {
            cols.push(format!("budget_iou@{b}"));
        }
        cols.push("boundary_f1".to_owned());
        if let Some(k) = self.k.first() {
            cols.push(format!("recall@{k}"));
        }
        cols.extend(["ndcg@10", "mean_tokens", "chunk_ms_per_doc"].map(String::from));
        cols.retain(|c| {
            self.rows
                .first()
                .is_none_or(|r| r.value(c).is_some() || c.starts_with("latency"))
        });
        let width = self
            .rows
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!("{:<width$}  {:<17}", "name", "text/retriever");
        for c in &cols {
            let _ = write!(out, " {c:>14}");
        }
        out.push('\n');
        for r in &self.rows {
            let mut mark = if r.recommended {
                " *"
            } else if r.external {
                " (ext)"
            } else {
                ""
            }
            .to_owned();
            if r.needs_model {
                mark.push_str(" (model)");
            }
            let _ = write!(out, "{:<width$}  {:<17}", r.name, r.text_and_retriever());
            for c in &cols {
                match r.value(c) {
                    Some(v)
                        if c.contains("tokens")
                            || c.starts_with("latency")
                            || c.contains("_ms") =>
                    {
                        let _ = write!(out, " {v:>14.1}");
                    }
                    Some(v) => {
                        let _ = write!(out, " {v:>14.3}");
                    }
                    None => {
                        let _ = write!(out, " {:>14}", "-");
                    }
                }
            }
            out.push_str(&mark);
            out.push('\n');
        }
        out.push_str(&format!(
            "ranked by {}; budget_recall@B: reference text given when the ranked chunks fill B cl100k tokens; * recommended (best non-experimental profile with latency p95 < {SLO_P95_MS} ms); (ext) external system; (model) needs the embedding model to chunk\n",
            self.rank_by
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(name: &str, ndcg: f64, external: bool, p95: Option<f64>) -> Row {
        Row {
            name: name.into(),
            external,
            experimental: false,
            granularity: None,
            recommended: false,
            retriever: "bm25".into(),
            text: "embed_text".into(),
            boundary_precision: 0.5,
            boundary_recall: 0.5,
            boundary_f1: 0.5,
            metrics: [("ndcg@10".to_owned(), ndcg), ("recall@5".to_owned(), ndcg)]
                .into_iter()
                .collect(),
            per_corpus: BTreeMap::new(),
            per_question: BTreeMap::new(),
            questions: 3,
            needs_model: false,
            chunk_ms_per_doc: p95,
            chunks: 10,
            mean_tokens: 100.0,
            p95_tokens: 120.0,
            total_tokens_embedded: 1000,
            latency_p50_ms: p95,
            latency_p95_ms: p95,
            latency_p99_ms: p95,
            slowest_documents: Vec::new(),
        }
    }

    #[test]
    fn rows_sort_best_first_and_the_best_eligible_profile_is_recommended() {
        let rows = vec![
            row("slow", 0.9, false, Some(900.0)),
            row("peer", 0.95, true, None),
            row("ours", 0.8, false, Some(5.0)),
            row("other", 0.7, false, Some(5.0)),
        ];
        let b = Leaderboard::new("d".into(), "ndcg@10", (vec![5], vec![1000]), 50, rows).unwrap();
        let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["peer", "slow", "ours", "other"]);
        let rec: Vec<&str> = b
            .rows
            .iter()
            .filter(|r| r.recommended)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(rec, ["ours"]);
        let json = serde_json::to_value(&b).unwrap_or_default();
        assert_eq!(json["rows"][0]["ndcg@10"], 0.95);
        assert_eq!(json["rank_by"], "ndcg@10");
        let html = b.html();
        assert!(html.contains("<tr class=\"rec\"><td>ours") && !html.contains("http"));
        assert!(b.table().contains("ours"));
        let err = Leaderboard::new(
            "d".into(),
            "ndcg@3",
            (vec![5], vec![1000]),
            50,
            vec![row("x", 1.0, false, None)],
        )
        .unwrap_err();
        assert!(err.contains("ndcg@10"), "{err}");
    }
}
