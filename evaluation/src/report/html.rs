//! The leaderboard as one self-contained HTML page: a sortable table and
//! an inline SVG chart of quality against cost, no network.

use std::fmt::Write as _;

use super::*;

impl Leaderboard {
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
