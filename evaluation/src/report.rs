//! The leaderboard: rows sorted by the rank metric, the recommended profile
//! marked, written as JSON, a plain-text table and one self-contained HTML
//! file (no network: inline CSS, inline script to sort, an inline SVG chart
//! of quality against cost).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

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

    /// One self-contained HTML page: sortable table and a chart.
    pub fn html(&self) -> String {
        let cols = self.columns();
        let mut table = String::new();
        table.push_str(
            "<table id=\"board\"><thead><tr><th data-t=\"s\">name</th><th data-t=\"s\">text/retriever</th>",
        );
        for c in &cols {
            let _ = write!(table, "<th data-t=\"n\">{}</th>", esc(c));
        }
        table.push_str("</tr></thead><tbody>\n");
        for r in &self.rows {
            let class = if r.recommended {
                " class=\"rec\""
            } else if r.external {
                " class=\"ext\""
            } else {
                ""
            };
            let model = if r.needs_model {
                " <span class=\"badge x\">needs model</span>"
            } else {
                ""
            };
            let badge = if r.recommended {
                " <span class=\"badge\">recommended</span>"
            } else if r.external {
                " <span class=\"badge e\">external</span>"
            } else if r.experimental {
                " <span class=\"badge x\">experimental</span>"
            } else {
                ""
            };
            let _ = write!(
                table,
                "<tr{class}><td>{}{badge}{model}</td><td>{}</td>",
                esc(&r.name),
                esc(&r.text_and_retriever())
            );
            for c in &cols {
                match r.value(c) {
                    Some(v) => {
                        let shown = if c.contains("tokens")
                            || c.starts_with("latency")
                            || c.contains("_ms")
                            || c == "chunks"
                        {
                            format!("{v:.1}")
                        } else {
                            format!("{v:.3}")
                        };
                        let _ = write!(table, "<td data-v=\"{v}\">{shown}</td>");
                    }
                    None => table.push_str("<td data-v=\"-1\">-</td>"),
                }
            }
            table.push_str("</tr>\n");
        }
        table.push_str("</tbody></table>");
        let chart = self.chart();
        format!(
            r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chunk-worker leaderboard</title>
<style>
body{{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330}}
h1{{font-size:20px;margin:0 0 4px}} p{{margin:4px 0 12px;color:#4a5568}}
table{{border-collapse:collapse;font-size:12px}} th,td{{border:1px solid #d6dbe4;padding:3px 6px;text-align:right;white-space:nowrap}}
th{{background:#eef1f6;cursor:pointer;position:sticky;top:0}} th:hover{{background:#dde3ee}}
td:first-child,td:nth-child(2),th:first-child,th:nth-child(2){{text-align:left}}
tr.rec td{{background:#e3f6e8;font-weight:600}} tr.ext td{{background:#f7f3e8}}
.badge{{font-size:10px;background:#2f855a;color:#fff;border-radius:3px;padding:0 4px;margin-left:4px}}
.badge.e{{background:#8a6d1d}} .badge.x{{background:#805ad5}}
.wrap{{overflow-x:auto;max-width:100%}} svg{{margin:12px 0;border:1px solid #d6dbe4;background:#fff}}
</style></head><body>
<h1>chunk-worker leaderboard</h1>
<p>Datasets: {dataset}. Retrievers: {retrievers}. Ranked by <b>{rank}</b>; boundary tolerance &plusmn;{tol} characters. Click a column to sort.</p>
{chart}
<div class="wrap">{table}</div>
<script>
(function(){{var t=document.getElementById('board'),b=t.tBodies[0];
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){{var asc=false;th.onclick=function(){{
var rows=Array.prototype.slice.call(b.rows);asc=!asc;rows.sort(function(x,y){{
var a=x.cells[i],c=y.cells[i];if(th.dataset.t==='s'){{return asc?a.textContent.localeCompare(c.textContent):c.textContent.localeCompare(a.textContent);}}
var u=parseFloat(a.dataset.v),v=parseFloat(c.dataset.v);return asc?u-v:v-u;}});
rows.forEach(function(r){{b.appendChild(r);}});}};}});}})();
</script>
</body></html>
"#,
            dataset = esc(&self.dataset),
            retrievers = esc(&describe_retrievers(&self.retriever)),
            rank = esc(&self.rank_by),
            tol = self.boundary_tolerance,
        )
    }

    /// Quality (rank metric) against cost (mean tokens per chunk), one dot
    /// per row that indexes `embed_text`.
    fn chart(&self) -> String {
        let pts: Vec<(&Row, f64, f64)> = self
            .rows
            .iter()
            .filter(|r| r.text == "embed_text")
            .filter_map(|r| Some((r, r.mean_tokens, r.value(&self.rank_by)?)))
            .collect();
        if pts.is_empty() {
            return String::new();
        }
        let (w, h, m) = (640.0, 300.0, 48.0);
        let xmax = pts.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
        let ymin = pts.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
        let ymax = pts.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max);
        let (ylo, yhi) = if (ymax - ymin).abs() < 1e-9 {
            (ymin - 0.05, ymax + 0.05)
        } else {
            (ymin - (ymax - ymin) * 0.1, ymax + (ymax - ymin) * 0.1)
        };
        let x = |v: f64| m + v / xmax * (w - 2.0 * m);
        let y = |v: f64| h - m - (v - ylo) / (yhi - ylo) * (h - 2.0 * m);
        let mut svg = format!(
            "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"quality against cost\">"
        );
        let _ = write!(
            svg,
            "<line x1=\"{m}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#888\"/><line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{b}\" stroke=\"#888\"/>",
            b = h - m,
            r = w - m
        );
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">mean tokens per chunk (cost)</text>",
            w / 2.0,
            h - 12.0
        );
        let _ = write!(
            svg,
            "<text x=\"14\" y=\"{}\" font-size=\"11\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>",
            h / 2.0,
            h / 2.0,
            esc(&self.rank_by)
        );
        for (lo, hi) in [(ylo, format!("{ylo:.3}")), (yhi, format!("{yhi:.3}"))] {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{hi}</text>",
                m - 4.0,
                y(lo) + 3.0
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{:.0}</text>",
            w - m,
            h - m + 14.0,
            xmax
        );
        for (r, cx, cy) in pts {
            let color = if r.recommended {
                "#2f855a"
            } else if r.external {
                "#b7791f"
            } else {
                "#3b5bdb"
            };
            let _ = write!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{color}\"><title>{}: {:.3}, {:.0} tokens</title></circle><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>",
                x(cx),
                y(cy),
                esc(&r.name),
                cy,
                cx,
                x(cx) + 7.0,
                y(cy) - 5.0,
                esc(&r.name)
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The retrievers of a leaderboard with what each is (only those used).
fn describe_retrievers(list: &str) -> String {
    list.split(", ")
        .map(|r| match r {
            "bm25" => "bm25 (k1 1.2, b 0.75)".to_owned(),
            "minilm" => "minilm (all-MiniLM-L6-v2 cosine, 256 word pieces of each text)".to_owned(),
            other => other.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("; ")
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
