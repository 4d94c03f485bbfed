//! Okapi BM25 (k1 = 1.2, b = 0.75), deterministic: the fixed retriever the
//! harness holds constant while chunkers vary.
//!
//! Terms: the text lowercased, split into runs of alphanumeric characters,
//! each cut to its first 6 characters (a crude stemmer that works alike for
//! English and Russian inflection, and the same for every chunker). Scores
//! are summed in query-term order; ties are broken by chunk order.

use std::collections::HashMap;

/// Standard BM25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Characters a term keeps.
const STEM: usize = 6;

/// The terms of `text`.
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().flat_map(char::to_lowercase).take(STEM).collect())
        .collect()
}

/// An index over a list of texts.
#[derive(Debug)]
pub struct Bm25 {
    /// term → (document index, term frequency), document indices ascending.
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    avg_len: f64,
}

impl Bm25 {
    /// Indexes `texts`.
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (i, text) in texts.into_iter().enumerate() {
            let ts = terms(text);
            lengths.push(u32::try_from(ts.len()).unwrap_or(u32::MAX));
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in ts {
                *tf.entry(t).or_default() += 1;
            }
            let doc = u32::try_from(i).unwrap_or(u32::MAX);
            for (t, n) in tf {
                postings.entry(t).or_default().push((doc, n));
            }
        }
        let total: f64 = lengths.iter().map(|&l| f64::from(l)).sum();
        let avg_len = if lengths.is_empty() {
            1.0
        } else {
            (total / lengths.len() as f64).max(1.0)
        };
        Self {
            postings,
            lengths,
            avg_len,
        }
    }

    /// The indices of the `k` best texts for `query`, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let n = self.lengths.len() as f64;
        let mut scores: HashMap<u32, f64> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for t in terms(query) {
            if !seen.insert(t.clone()) {
                continue;
            }
            let Some(list) = self.postings.get(&t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let len = f64::from(self.lengths[doc as usize]);
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.avg_len));
                *scores.entry(doc).or_default() += s;
            }
        }
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(k)
            .map(|(d, _)| d as usize)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_lowercased_stemmed_alphanumeric_runs() {
        assert_eq!(
            terms("Kubelet's HEARTBEATS, версиями 1.17!"),
            ["kubele", "s", "heartb", "версия", "1", "17"]
        );
    }

    #[test]
    fn the_text_with_the_rare_matching_term_ranks_first() {
        let texts = [
            "the cat sat on the mat",
            "the dog chased the cat",
            "quantum chromodynamics of the cat",
        ];
        let index = Bm25::new(texts.iter().copied());
        assert_eq!(index.search("quantum cat", 3)[0], 2);
        assert_eq!(index.search("dog", 3), [1]);
        // "cat" is in all three: the two shorter (equal-length) texts score
        // alike and break the tie by order; the longer one comes last.
        assert_eq!(index.search("cat", 3), [1, 2, 0]);
        assert!(index.search("absent", 3).is_empty());
    }

    #[test]
    fn a_hand_computed_score_orders_as_expected() {
        // Two one-term documents: the shorter one with the term wins.
        let index = Bm25::new(["alpha", "alpha beta gamma delta"]);
        assert_eq!(index.search("alpha", 2), [0, 1]);
    }
}
