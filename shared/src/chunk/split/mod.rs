//! Splitting oversized units (docs/contract.md#size-policy): prose at sentences and then token
//! windows, tables between rows with the header repeated, code between lines
//! with every piece re-fenced, and greedy grouping of the parts.
//!
//! Sizes are decided with exact range counts of the document
//! ([`DocumentTokens`]); a piece that carries synthetic text (a repeated
//! header, a re-opened fence) is counted exactly as a whole once and shrunk
//! if it would pass the hard max.

use std::ops::Range;

use crate::chunk::record::ChunkType;
use crate::sentence::sentence_spans;
use crate::tokens::DocumentTokens;

mod blocks;

/// One piece of a split table or code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// Own span.
    pub own: Range<usize>,
    /// Synthetic text in front (repeated header, re-opened fence).
    pub prefix: Option<String>,
    /// Closing fence after the own span ("" if none).
    pub suffix: String,
    /// Position inside the block, e.g. `table[2] rows 41-80`.
    pub detail: String,
    /// Overrides the block's chunk type (a table too wide to repeat its
    /// header degrades to paragraph windows).
    pub chunk_type: Option<ChunkType>,
}

/// Splits units of one document.
#[derive(Debug)]
pub(crate) struct Splitter<'a> {
    text: &'a str,
    tokens: &'a DocumentTokens<'a>,
    hard_max: usize,
    /// Size of the token windows prose falls back to (the profile's target),
    /// so that windows leave room for overlap.
    window: usize,
}

/// A unit inside a table or code block, with the row/line number it belongs to.
#[derive(Debug, Clone)]
struct Numbered {
    range: Range<usize>,
    number: usize,
}

impl<'a> Splitter<'a> {
    pub fn new(
        text: &'a str,
        tokens: &'a DocumentTokens<'a>,
        hard_max: usize,
        window: usize,
    ) -> Self {
        Self {
            text,
            tokens,
            hard_max,
            window: window.clamp(1, hard_max),
        }
    }

    /// The document being split.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The document's token counts.
    pub fn tokens(&self) -> &'a DocumentTokens<'a> {
        self.tokens
    }

    /// No part is ever larger.
    pub fn hard_max(&self) -> usize {
        self.hard_max
    }

    fn count(&self, range: Range<usize>) -> usize {
        self.tokens.count(range)
    }

    fn count_text(&self, text: &str) -> usize {
        use crate::tokens::TokenCounter;
        self.tokens.counter().count(text)
    }

    /// Splits prose into sentence units, and sentences over `budget` tokens
    /// into token windows. The `atomic` ranges (code blocks nested in the
    /// prose, sorted) are kept whole, or cut between lines if one alone is
    /// over the budget. Units are trimmed and in order.
    pub fn prose_units(
        &self,
        range: Range<usize>,
        budget: usize,
        atomic: &[Range<usize>],
    ) -> Vec<Range<usize>> {
        let mut units = Vec::new();
        let mut pos = range.start;
        for a in atomic
            .iter()
            .filter(|a| a.start >= range.start && a.end <= range.end)
        {
            if a.start < pos {
                continue;
            }
            self.sentence_units(pos..a.start, budget, &mut units);
            if self.count(a.clone()) <= budget {
                units.push(a.clone());
            } else {
                let mut lines = Vec::new();
                for (i, line) in self.lines(a.clone()).into_iter().enumerate() {
                    self.numbered(line, i, budget, &mut lines);
                }
                units.extend(lines.into_iter().map(|n| n.range));
            }
            pos = a.end;
        }
        self.sentence_units(pos..range.end, budget, &mut units);
        units
    }

    fn sentence_units(&self, range: Range<usize>, budget: usize, units: &mut Vec<Range<usize>>) {
        if range.is_empty() {
            return;
        }
        let base = range.start;
        for s in sentence_spans(&self.text[range]) {
            let unit = self.trim(base + s.start..base + s.end);
            if unit.is_empty() {
                continue;
            }
            if self.count(unit.clone()) <= budget {
                units.push(unit);
            } else {
                self.windows(unit, budget.min(self.window), units);
            }
        }
    }

    /// Token windows of at most `budget` tokens each.
    fn windows(&self, unit: Range<usize>, budget: usize, out: &mut Vec<Range<usize>>) {
        // Balanced: as many windows as the budget needs, of about equal size,
        // so the last one is not a stub.
        let budget = budget.max(1);
        let total = self.count(unit.clone());
        let parts = total.div_ceil(budget).max(1);
        // A few tokens of slack: counts of the parts need not add up exactly.
        let even = (total.div_ceil(parts) + 4).min(budget);
        let mut cuts = self.tokens.cut_points(unit.clone(), even);
        if cuts.len() > parts {
            cuts = self.tokens.cut_points(unit.clone(), budget);
        }
        let mut start = unit.start;
        for cut in cuts {
            let w = self.trim(start..cut);
            if !w.is_empty() {
                out.push(w);
            }
            start = cut;
        }
        let w = self.trim(start..unit.end);
        if !w.is_empty() {
            out.push(w);
        }
    }

    fn trim(&self, range: Range<usize>) -> Range<usize> {
        let s = &self.text[range.clone()];
        let lead = s.len() - s.trim_start().len();
        let end = range.start + s.trim_end().len();
        (range.start + lead).min(end)..end
    }

    /// Groups consecutive units greedily into spans of at most `limit`
    /// tokens (a unit alone may be larger, up to the hard max). The first
    /// span starts at `first_start` when given (pending headings).
    pub fn group(
        &self,
        units: &[Range<usize>],
        first_start: Option<usize>,
        limit: usize,
    ) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        let mut cur: Option<Range<usize>> = None;
        let mut queue: std::collections::VecDeque<Range<usize>> = units.iter().cloned().collect();
        while let Some(u) = queue.pop_front() {
            cur = match cur {
                None => {
                    let start = first_start.filter(|_| out.is_empty()).unwrap_or(u.start);
                    let (head, rest) = self.fit(start, u);
                    if let Some(rest) = rest {
                        out.push(start..head.end);
                        queue.push_front(rest);
                        None
                    } else {
                        Some(start..head.end)
                    }
                }
                Some(c) if self.count(c.start..u.end) <= limit => Some(c.start..u.end),
                Some(c) => {
                    out.push(c);
                    queue.push_front(u);
                    None
                }
            };
        }
        out.extend(cur);
        out
    }

    /// Cuts `unit` so that `start..head.end` fits the hard max exactly
    /// (the lead-in from `start`, e.g. pending headings, counts too). Token
    /// counts are not additive, so a unit that fits alone can still be a few
    /// tokens over once joined to its lead-in.
    pub fn fit(&self, start: usize, unit: Range<usize>) -> (Range<usize>, Option<Range<usize>>) {
        self.fit_within(start, unit, self.hard_max)
    }

    /// Like [`Splitter::fit`] with `max` in place of the hard max. Returns
    /// the unit whole (and no rest) when nothing of it fits.
    pub fn fit_within(
        &self,
        start: usize,
        unit: Range<usize>,
        max: usize,
    ) -> (Range<usize>, Option<Range<usize>>) {
        if self.count(start..unit.end) <= max {
            return (unit, None);
        }
        let lead = if start < unit.start {
            self.count(start..unit.start)
        } else {
            0
        };
        if lead + 4 >= max {
            return (unit, None);
        }
        // Two tokens of slack for the junction between lead-in and unit.
        let room = max.saturating_sub(lead + 2).max(1);
        let mut cut = self
            .tokens
            .cut_points(unit.clone(), room)
            .first()
            .copied()
            .unwrap_or(unit.end);
        while cut > unit.start && self.count(start..cut) > max {
            cut = self
                .tokens
                .cut_points(unit.start..cut, room.saturating_sub(4).max(1))
                .first()
                .copied()
                .unwrap_or(unit.start);
        }
        let head = self.trim(unit.start..cut);
        let rest = self.trim(cut..unit.end);
        if head.is_empty() {
            return (unit, None);
        }
        (head, (!rest.is_empty()).then_some(rest))
    }

    /// Line ranges (without the newline) of `range`.
    fn lines(&self, range: Range<usize>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut pos = range.start;
        for line in self.text[range.clone()].split('\n') {
            out.push(pos..pos + line.len());
            pos += line.len() + 1;
        }
        out
    }

    /// Pushes `range` as one numbered unit, or as token windows of it if it
    /// is over `budget`.
    fn numbered(&self, range: Range<usize>, number: usize, budget: usize, out: &mut Vec<Numbered>) {
        if range.is_empty() {
            return;
        }
        if self.count(range.clone()) <= budget {
            out.push(Numbered { range, number });
            return;
        }
        let mut ws = Vec::new();
        self.windows(range, budget, &mut ws);
        out.extend(ws.into_iter().map(|range| Numbered { range, number }));
    }
}
