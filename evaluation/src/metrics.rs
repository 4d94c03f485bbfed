//! The metrics, as pure functions over spans (code points of normalized
//! documents). docs/evaluation.md says how to read each.

use shared::retrieval::{merge_adjacent, Span};

/// A chunk as the metrics see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSpan {
    /// Index of its document.
    pub doc: usize,
    /// Its own span (overlap excluded): what it contributes.
    pub own: (u32, u32),
    /// The span of its whole text (overlap included): what a reader gets.
    pub text: (u32, u32),
}

fn overlap(a: (u32, u32), b: (u32, u32)) -> u32 {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Sorted, merged intervals.
fn merge(mut spans: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    spans.retain(|s| s.0 < s.1);
    spans.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.0 <= last.1 => last.1 = last.1.max(s.1),
            _ => out.push(s),
        }
    }
    out
}

fn total(spans: &[(u32, u32)]) -> u64 {
    spans.iter().map(|s| u64::from(s.1 - s.0)).sum()
}

/// The overlap between two merged interval lists.
fn intersection(a: &[(u32, u32)], b: &[(u32, u32)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        sum += u64::from(overlap(a[i], b[j]));
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// Boundary matching: each gold boundary matches at most one predicted one
/// within `tolerance` code points (nearest first, in order). Returns
/// `(matched, predicted, gold)` counts.
pub fn boundary_matches(gold: &[u32], predicted: &[u32], tolerance: u32) -> (usize, usize, usize) {
    let mut pred = predicted.to_vec();
    pred.sort_unstable();
    pred.dedup();
    let mut used = vec![false; pred.len()];
    let mut matched = 0;
    for &g in gold {
        let best = pred
            .iter()
            .enumerate()
            .filter(|(i, &p)| !used[*i] && p.abs_diff(g) <= tolerance)
            .min_by_key(|(i, &p)| (p.abs_diff(g), *i))
            .map(|(i, _)| i);
        if let Some(i) = best {
            used[i] = true;
            matched += 1;
        }
    }
    (matched, pred.len(), gold.len())
}

/// Precision, recall and F1 from summed counts (0 where undefined).
pub fn prf(matched: usize, predicted: usize, gold: usize) -> (f64, f64, f64) {
    let p = if predicted == 0 {
        0.0
    } else {
        matched as f64 / predicted as f64
    };
    let r = if gold == 0 {
        0.0
    } else {
        matched as f64 / gold as f64
    };
    let f = if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    (p, r, f)
}

/// What one question scores at one K.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtK {
    /// Share of the question's reference excerpts touched by the own span
    /// of some retrieved chunk.
    pub recall: f64,
    /// Relevant characters retrieved / all relevant characters.
    pub token_recall: f64,
    /// Relevant characters retrieved / all retrieved characters.
    pub token_precision: f64,
    /// Relevant ∩ retrieved / relevant ∪ retrieved.
    pub token_iou: f64,
}

/// The metrics of one question at cut-off `k`: `ranked` are chunk indices,
/// best first; `doc` and `references` the question's document and excerpts.
pub fn at_k(
    chunks: &[ChunkSpan],
    ranked: &[usize],
    doc: usize,
    references: &[(u32, u32)],
    k: usize,
) -> AtK {
    let top: Vec<&ChunkSpan> = ranked.iter().take(k).map(|&i| &chunks[i]).collect();
    let touched = references
        .iter()
        .filter(|r| top.iter().any(|c| c.doc == doc && overlap(c.own, **r) > 0))
        .count();
    let relevant = merge(references.to_vec());
    // Retrieved text: the union per document of the chunks' whole texts.
    let mut by_doc: std::collections::BTreeMap<usize, Vec<(u32, u32)>> = Default::default();
    for c in &top {
        by_doc.entry(c.doc).or_default().push(c.text);
    }
    let mut retrieved_total = 0u64;
    let mut hit = 0u64;
    for (d, spans) in by_doc {
        let merged = merge(spans);
        retrieved_total += total(&merged);
        if d == doc {
            hit = intersection(&merged, &relevant);
        }
    }
    let relevant_total = total(&relevant);
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    AtK {
        recall: ratio(touched as u64, references.len() as u64),
        token_recall: ratio(hit, relevant_total),
        token_precision: ratio(hit, retrieved_total),
        token_iou: ratio(hit, relevant_total + retrieved_total - hit),
    }
}

/// What one question scores when its ranked chunks fill a context budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budgeted {
    /// Relevant characters given / all relevant characters.
    pub recall: f64,
    /// Relevant characters given / all characters given, a text given twice
    /// (overlapping chunks) counted twice: what the budget paid for.
    pub precision: f64,
    /// Relevant given / (all given + relevant - relevant given).
    pub iou: f64,
}

/// The metrics of one question whose context holds `pieces`: `(document,
/// span)` of each text given, in order, the last one possibly cut
/// ([`fill_budget`] chooses them).
pub fn budgeted(pieces: &[(usize, (u32, u32))], doc: usize, references: &[(u32, u32)]) -> Budgeted {
    let relevant = merge(references.to_vec());
    let relevant_total = total(&relevant);
    let given: u64 = pieces
        .iter()
        .map(|(_, s)| u64::from(s.1.saturating_sub(s.0)))
        .sum();
    let in_doc: Vec<(u32, u32)> = pieces
        .iter()
        .filter(|(d, _)| *d == doc)
        .map(|(_, s)| *s)
        .collect();
    // The context as a prompt would show it: touching and overlapping
    // passages joined, each stretch of text once.
    let passages: Vec<Span> = in_doc
        .iter()
        .map(|&(start, end)| Span { doc, start, end })
        .collect();
    let mut shown: Vec<(u32, u32)> = merge_adjacent(&passages)
        .into_iter()
        .map(|s| (s.start, s.end))
        .collect();
    shown.sort_unstable();
    let hit_union = intersection(&shown, &relevant);
    let hit_paid: u64 = in_doc.iter().map(|s| intersection(&[*s], &relevant)).sum();
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Budgeted {
        recall: ratio(hit_union, relevant_total),
        precision: ratio(hit_paid, given),
        iou: ratio(
            hit_union,
            (given + relevant_total).saturating_sub(hit_union),
        ),
    }
}

/// Fills a context of `budget` tokens with the ranked chunks in order:
/// `tokens[i]` is what chunk `i`'s text costs; a chunk that does not fit
/// whole is cut to the tokens left (`cut(i, left)` gives the span of its
/// first `left` tokens) and ends the context. The pieces given, as
/// [`budgeted`] takes them.
pub fn fill_budget(
    chunks: &[ChunkSpan],
    ranked: &[usize],
    tokens: &[u32],
    budget: u32,
    mut cut: impl FnMut(usize, u32) -> (u32, u32),
) -> Vec<(usize, (u32, u32))> {
    let mut used = 0u32;
    let mut pieces = Vec::new();
    for &i in ranked {
        if used >= budget {
            break;
        }
        let c = &chunks[i];
        let t = tokens[i];
        if used + t <= budget {
            pieces.push((c.doc, c.text));
            used += t;
        } else {
            pieces.push((c.doc, cut(i, budget - used)));
            break;
        }
    }
    pieces
}

/// nDCG@`k` graded by overlap: a chunk's gain is the share of the
/// question's reference text its own span covers; the ideal ranking orders
/// every chunk of the collection by gain.
pub fn ndcg(
    chunks: &[ChunkSpan],
    ranked: &[usize],
    doc: usize,
    references: &[(u32, u32)],
    k: usize,
) -> f64 {
    let relevant = merge(references.to_vec());
    let rel_total = total(&relevant);
    if rel_total == 0 {
        return 0.0;
    }
    let gain = |c: &ChunkSpan| {
        if c.doc != doc {
            return 0.0;
        }
        intersection(&[c.own], &relevant) as f64 / rel_total as f64
    };
    let dcg = |gains: &mut dyn Iterator<Item = f64>| -> f64 {
        gains
            .take(k)
            .enumerate()
            .map(|(i, g)| g / ((i + 2) as f64).log2())
            .sum()
    };
    let actual = dcg(&mut ranked.iter().map(|&i| gain(&chunks[i])));
    let mut ideal: Vec<f64> = chunks.iter().map(gain).filter(|&g| g > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let best = dcg(&mut ideal.into_iter());
    if best == 0.0 {
        0.0
    } else {
        actual / best
    }
}

/// The `p`-th percentile (0..=100, nearest rank) of `values`.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_filled_in_order_the_last_chunk_cut_and_repeats_paid_twice() {
        let chunks = [
            ChunkSpan {
                doc: 0,
                own: (0, 100),
                text: (0, 100),
            },
            ChunkSpan {
                doc: 0,
                own: (100, 200),
                text: (50, 200),
            },
            ChunkSpan {
                doc: 1,
                own: (0, 100),
                text: (0, 100),
            },
        ];
        let tokens = [25, 40, 25];
        // 25 + 40 fit in 80, then 15 of the third chunk's 25 tokens.
        let pieces = fill_budget(&chunks, &[0, 1, 2], &tokens, 80, |i, left| {
            let t = chunks[i].text;
            (t.0, t.0 + (t.1 - t.0) * left / tokens[i])
        });
        assert_eq!(pieces, [(0, (0, 100)), (0, (50, 200)), (1, (0, 60))]);
        // The reference 80..120: all of it given; 100 + 150 + 60 given, of
        // which 20 (first) + 40 (second) are relevant: the overlap 50..100
        // is paid for twice.
        let m = budgeted(&pieces, 0, &[(80, 120)]);
        assert_eq!(m.recall, 1.0);
        assert!((m.precision - 60.0 / 310.0).abs() < 1e-12);
        assert!((m.iou - 40.0 / 310.0).abs() < 1e-12);
        // A budget smaller than the first chunk cuts it.
        let pieces = fill_budget(&chunks, &[1], &tokens, 20, |_, _| (50, 80));
        assert_eq!(pieces, [(0, (50, 80))]);
        assert_eq!(budgeted(&pieces, 0, &[(80, 120)]).recall, 0.0);
    }

    fn chunk(doc: usize, own: (u32, u32)) -> ChunkSpan {
        ChunkSpan {
            doc,
            own,
            text: own,
        }
    }

    #[test]
    fn boundaries_match_one_to_one_within_the_tolerance() {
        // Gold 100 and 200; predicted 95 (matches 100), 130 (too far from
        // both), 205 (matches 200), 210 (200 is taken).
        assert_eq!(
            boundary_matches(&[100, 200], &[95, 130, 205, 210], 10),
            (2, 4, 2)
        );
        let (p, r, f) = prf(2, 4, 2);
        assert_eq!((p, r), (0.5, 1.0));
        assert!((f - 2.0 / 3.0).abs() < 1e-12);
        // One prediction between two close gold boundaries matches one.
        assert_eq!(boundary_matches(&[100, 104], &[102], 5), (1, 1, 2));
        assert_eq!(prf(0, 0, 0), (0.0, 0.0, 0.0));
    }

    #[test]
    fn recall_and_token_metrics_by_hand() {
        // Doc 0 has references 10..20 and 50..60 (20 relevant characters).
        let chunks = [
            chunk(0, (0, 30)),  // covers 10..20: 10 relevant of 30
            chunk(0, (30, 55)), // covers 50..55: 5 relevant of 25
            chunk(1, (0, 40)),  // another document
        ];
        let refs = [(10, 20), (50, 60)];
        let a = at_k(&chunks, &[0, 2, 1], 0, &refs, 1);
        assert_eq!(a.recall, 0.5);
        assert_eq!(a.token_recall, 0.5);
        assert!((a.token_precision - 10.0 / 30.0).abs() < 1e-12);
        assert!((a.token_iou - 10.0 / 40.0).abs() < 1e-12);
        let a = at_k(&chunks, &[0, 2, 1], 0, &refs, 3);
        assert_eq!(a.recall, 1.0);
        assert_eq!(a.token_recall, 15.0 / 20.0);
        // Retrieved: 30 + 25 in doc 0, 40 in doc 1 = 95 characters.
        assert!((a.token_precision - 15.0 / 95.0).abs() < 1e-12);
        assert!((a.token_iou - 15.0 / (20.0 + 95.0 - 15.0)).abs() < 1e-12);
    }

    #[test]
    fn overlapping_chunk_texts_count_once() {
        let c = [
            ChunkSpan {
                doc: 0,
                own: (0, 10),
                text: (0, 10),
            },
            ChunkSpan {
                doc: 0,
                own: (10, 20),
                text: (5, 20),
            },
        ];
        let a = at_k(&c, &[0, 1], 0, &[(0, 20)], 2);
        assert_eq!(
            (a.token_recall, a.token_precision, a.token_iou),
            (1.0, 1.0, 1.0)
        );
    }

    #[test]
    fn ndcg_is_one_for_the_ideal_order_and_lower_otherwise() {
        let chunks = [chunk(0, (0, 15)), chunk(0, (15, 40)), chunk(0, (40, 100))];
        // Reference 10..30: gains 5/20 and 15/20.
        let refs = [(10, 30)];
        assert!((ndcg(&chunks, &[1, 0, 2], 0, &refs, 10) - 1.0).abs() < 1e-12);
        let swapped = ndcg(&chunks, &[0, 1, 2], 0, &refs, 10);
        let expect = (0.25 + 0.75 / 3f64.log2()) / (0.75 + 0.25 / 3f64.log2());
        assert!((swapped - expect).abs() < 1e-12, "{swapped} vs {expect}");
        assert_eq!(ndcg(&chunks, &[2], 0, &refs, 10), 0.0);
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 95.0), 95.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
    }
}
