//! The retrieval side of small-to-big: once an index has ranked chunks,
//! [`with_neighbours`] follows each hit by the chunks beside it in its
//! document, for a context budget to take in order. Pure, over chunk
//! positions, so the evaluation harness (`eval --neighbours`) and users'
//! retrieval code call the same thing.

/// Where a chunk lies: its document (any key the caller uses) and its span
/// in that document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The document, as the caller numbers them.
    pub doc: usize,
    /// Start offset (inclusive).
    pub start: u32,
    /// End offset (exclusive).
    pub end: u32,
}

/// Small-to-big: the order in which to give chunks when each hit of
/// `ranked` brings the chunks around it. `spans` are every chunk in document
/// order (chunk `i - 1` and `i + 1` are `i`'s neighbours when they are in the
/// same document); after each hit come its neighbours up to `radius` on each
/// side, nearest first, the following one before the preceding one; a chunk
/// already given is not repeated. Fill a budget from the result in order.
pub fn with_neighbours(ranked: &[usize], spans: &[Span], radius: usize) -> Vec<usize> {
    let mut given = vec![false; spans.len()];
    let mut order = Vec::with_capacity(ranked.len() * (1 + 2 * radius));
    let mut give = |i: usize, order: &mut Vec<usize>| {
        if let Some(g) = given.get_mut(i) {
            if !*g {
                *g = true;
                order.push(i);
            }
        }
    };
    for &hit in ranked {
        let Some(own) = spans.get(hit) else { continue };
        give(hit, &mut order);
        for step in 1..=radius {
            if spans.get(hit + step).is_some_and(|s| s.doc == own.doc) {
                give(hit + step, &mut order);
            }
            if let Some(prev) = hit.checked_sub(step) {
                if spans[prev].doc == own.doc {
                    give(prev, &mut order);
                }
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(doc: usize, start: u32, end: u32) -> Span {
        Span { doc, start, end }
    }

    #[test]
    fn neighbours_follow_each_hit_within_its_document_once() {
        let spans = [
            span(0, 0, 10),
            span(0, 10, 20),
            span(0, 20, 30),
            span(1, 0, 10),
            span(1, 10, 20),
        ];
        // Hit 2 brings 1 (its following one is in another document); hit 3
        // brings 4 but not 2; hit 1 again adds only 0.
        assert_eq!(with_neighbours(&[2, 3, 1], &spans, 1), vec![2, 1, 3, 4, 0]);
        assert_eq!(with_neighbours(&[0], &spans, 2), vec![0, 1, 2]);
        assert_eq!(with_neighbours(&[4, 9], &spans, 0), vec![4]);
    }
}
