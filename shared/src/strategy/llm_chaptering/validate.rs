//! Which of a model's proposed boundaries are kept: a unit number inside
//! the document, not inside a table, code block or list (the line-cut parts
//! of one too long for a chunk), not right after a heading, and at a
//! coherence dip. Everything else is discarded as hallucinated, with why.

use crate::chunk::topic::{Unit, UnitKind, GLUED, HEADING_GAP};
use crate::markdown::{Block, BlockKind};

/// Why a proposal was discarded.
pub(crate) const OUTSIDE: &str = "outside the document";
/// Why a proposal was discarded.
pub(crate) const INSIDE_BLOCK: &str = "inside a table, code block or list";
/// Why a proposal was discarded.
pub(crate) const AFTER_HEADING: &str = "right after a heading";
/// Why a proposal was discarded.
pub(crate) const NO_DIP: &str = "no coherence dip";

/// The kept boundaries (`candidate[g]`: a boundary before unit `g`) and the
/// discarded proposals with their reasons, in the model's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub candidate: Vec<bool>,
    pub discarded: Vec<(i64, &'static str)>,
}

/// Judges `proposed` against the units, the top-level blocks and the gap
/// coherences (`coherence[g]`, the gap before unit `g`; [`HEADING_GAP`]
/// before a heading, [`GLUED`] after one). A gap is a dip when its
/// coherence lies below the highest of the `window` gaps on each side (in
/// its section) by more than `min_dip` in sum (TextTiling's depth score);
/// the gap before a heading always is.
pub(crate) fn judge(
    units: &[Unit],
    blocks: &[Block],
    coherence: &[f32],
    proposed: &[i64],
    window: usize,
    min_dip: f32,
) -> Verdict {
    let mut candidate = vec![false; units.len()];
    let mut discarded = Vec::new();
    for &p in proposed {
        let why = match usize::try_from(p).ok().filter(|&g| g > 0 && g < units.len()) {
            None => Some(OUTSIDE),
            Some(g) => {
                let c = coherence.get(g).copied().unwrap_or(GLUED);
                if c == GLUED {
                    Some(AFTER_HEADING)
                } else if inside_block(units, blocks, g) {
                    Some(INSIDE_BLOCK)
                } else if c == HEADING_GAP || depth(units, coherence, g, window) > min_dip {
                    candidate[g] = true;
                    None
                } else {
                    Some(NO_DIP)
                }
            }
        };
        if let Some(why) = why {
            discarded.push((p, why));
        }
    }
    Verdict {
        candidate,
        discarded,
    }
}

/// Whether units `g - 1` and `g` are parts of one table, code block or list.
fn inside_block(units: &[Unit], blocks: &[Block], g: usize) -> bool {
    let (a, b) = (&units[g - 1], &units[g]);
    if a.kind != UnitKind::Block || b.kind != UnitKind::Block {
        return false;
    }
    let i = blocks.partition_point(|bl| bl.range.start <= a.range.start);
    let Some(bl) = i.checked_sub(1).and_then(|i| blocks.get(i)) else {
        return false;
    };
    matches!(
        bl.kind,
        BlockKind::Table | BlockKind::Code { .. } | BlockKind::List { .. }
    ) && bl.range.end >= b.range.end
}

/// The depth of the coherence valley at gap `g`: how far it lies below the
/// highest gap within `window` on its left and on its right, in its
/// section (a side without gaps counts 0).
fn depth(units: &[Unit], coherence: &[f32], g: usize, window: usize) -> f32 {
    let c = coherence[g];
    let section = units[g].section;
    let scored = |i: usize| {
        coherence
            .get(i)
            .copied()
            .filter(|x| x.is_finite() && *x >= 0.0 && units[i].section == section)
    };
    let left = (g.saturating_sub(window)..g)
        .filter(|&i| i > 0)
        .filter_map(scored)
        .fold(c, f32::max);
    let right = (g + 1..(g + 1 + window).min(units.len()))
        .filter_map(scored)
        .fold(c, f32::max);
    (left - c) + (right - c)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn u(start: usize, kind: UnitKind, section: usize) -> Unit {
        Unit {
            range: start..start + 5,
            kind,
            tokens: 3,
            section,
        }
    }

    #[test]
    fn kept_at_dips_and_before_headings_discarded_elsewhere() {
        use UnitKind::{Heading, Sentence};
        let units = vec![
            u(0, Sentence, 0),
            u(10, Sentence, 0),
            u(20, Sentence, 0),
            u(30, Sentence, 0),
            u(40, Heading, 1),
            u(50, Sentence, 1),
            u(60, Sentence, 1),
        ];
        let coherence = vec![GLUED, 0.9, 0.3, 0.8, HEADING_GAP, GLUED, 0.5];
        let v = judge(&units, &[], &coherence, &[2, 1, 4, 5, 7, -1, 6], 2, 0.0);
        assert_eq!(v.candidate, vec![false, false, true, false, true, false, false]);
        assert_eq!(
            v.discarded,
            vec![
                (1, NO_DIP),
                (5, AFTER_HEADING),
                (7, OUTSIDE),
                (-1, OUTSIDE),
                (6, NO_DIP)
            ]
        );
    }

    #[test]
    fn parts_of_one_table_are_never_split() {
        use crate::markdown::parse_blocks;
        let text = "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |\n\nAfter.\n";
        let blocks = parse_blocks(text);
        let table = blocks[0].range.clone();
        let mid = text.find("| 3").unwrap();
        let units = vec![
            Unit { range: table.start..mid - 1, kind: UnitKind::Block, tokens: 9, section: 0 },
            Unit { range: mid..table.end, kind: UnitKind::Block, tokens: 5, section: 0 },
            Unit { range: table.end + 1..text.len() - 1, kind: UnitKind::Sentence, tokens: 2, section: 0 },
        ];
        let coherence = vec![GLUED, 0.1, 0.9];
        let v = judge(&units, &blocks, &coherence, &[1], 2, 0.0);
        assert_eq!(v.discarded, vec![(1, INSIDE_BLOCK)]);
    }
}
