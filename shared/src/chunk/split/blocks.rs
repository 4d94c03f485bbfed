//! Splitting oversized tables (between rows, the header repeated) and code
//! blocks (between lines, every piece re-fenced), and the fallback to
//! paragraph windows for a block that cannot be split by its structure.

use std::ops::Range;

use super::{Numbered, Part, Splitter};
use crate::chunk::record::ChunkType;
use crate::ids::{closes, fence_of};
use crate::markdown::pipe_rows;

impl<'a> Splitter<'a> {
    /// Splits an oversized table between rows; every piece after the first
    /// repeats the header and delimiter rows. A row over the budget is cut
    /// into token windows, each under the header.
    pub fn table(
        &self,
        range: Range<usize>,
        start: usize,
        limit: usize,
        ordinal: usize,
    ) -> Vec<Part> {
        let mut lines = self.lines(range.clone());
        let first = &self.text[lines[0].clone()];
        let (header, body) = if pipe_rows::row_of_item(first).is_some() {
            // A pipe-row list: rows are its non-blank lines; the header is
            // detected (0, 1 or 2 rows).
            lines.retain(|l| !self.text[l.clone()].trim().is_empty());
            let texts: Vec<&str> = lines.iter().map(|l| &self.text[l.clone()]).collect();
            match pipe_rows::header_lines(&texts) {
                0 => return self.rows_without_header(&lines, start, limit, ordinal),
                n => (lines[0].start..lines[n - 1].end, n),
            }
        } else {
            match lines.as_slice() {
                [h, d, _, ..] => (h.start..d.end, 2),
                _ => return self.degrade(start..range.end, ordinal, "table"),
            }
        };
        if lines.len() <= body {
            return self.degrade(start..range.end, ordinal, "table");
        }
        let prefix = format!("{}\n", &self.text[header.clone()]);
        let h = self.count_text(&prefix);
        if h > limit / 2 {
            return self.degrade(start..range.end, ordinal, "table");
        }
        let row_budget = self
            .hard_max
            .saturating_sub(h + 2)
            .min(limit.saturating_sub(h))
            .max(1);
        let mut units = Vec::new();
        for (i, row) in lines[body..].iter().enumerate() {
            self.numbered(row.clone(), i + 1, row_budget, &mut units);
        }
        let parts = self.greedy(units, start, limit, Some(&prefix), None);
        parts
            .into_iter()
            .map(|(own, first, last, is_first)| Part {
                own,
                prefix: (!is_first).then(|| prefix.clone()),
                suffix: String::new(),
                detail: format!("table[{ordinal}] rows {first}-{last}"),
                chunk_type: None,
            })
            .collect()
    }

    /// A pipe-row list with no header: split between rows, nothing repeated.
    fn rows_without_header(
        &self,
        lines: &[Range<usize>],
        start: usize,
        limit: usize,
        ordinal: usize,
    ) -> Vec<Part> {
        let mut units = Vec::new();
        for (i, row) in lines.iter().enumerate() {
            self.numbered(row.clone(), i + 1, limit, &mut units);
        }
        self.greedy(units, start, limit, None, None)
            .into_iter()
            .map(|(own, first, last, _)| Part {
                own,
                prefix: None,
                suffix: String::new(),
                detail: format!("table[{ordinal}] rows {first}-{last}"),
                chunk_type: None,
            })
            .collect()
    }

    /// Splits an oversized code block between lines; every piece is
    /// re-fenced (opening fence repeated in front, closing fence added at the
    /// end) so it stays valid Markdown. Indented code needs no fences.
    pub fn code(
        &self,
        range: Range<usize>,
        start: usize,
        limit: usize,
        ordinal: usize,
    ) -> Vec<Part> {
        let lines = self.lines(range.clone());
        let first_line = &self.text[lines[0].clone()];
        let fence = fence_of(first_line);
        let (body, reopen, close, closed) = match fence {
            Some((ch, len)) => {
                let last = &self.text[lines[lines.len() - 1].clone()];
                let closed = lines.len() > 1 && closes(last, ch, len);
                let body_end = if closed { lines.len() - 1 } else { lines.len() };
                let indent: String = first_line.chars().take_while(|c| *c == ' ').collect();
                let fence_str = format!("{indent}{}", (ch as char).to_string().repeat(len));
                (
                    &lines[1..body_end],
                    Some(format!("{first_line}\n")),
                    format!("\n{fence_str}"),
                    closed,
                )
            }
            None => (&lines[..], None, String::new(), true),
        };
        let overhead =
            reopen.as_deref().map_or(0, |r| self.count_text(r)) + self.count_text(&close);
        // An opening fence line that fills half the budget (a huge info
        // string) cannot be repeated on every piece, nor fit beside any body:
        // the block is split as text, like a table whose header is too big.
        if overhead.saturating_mul(2) > self.hard_max {
            return self.degrade(start..range.end, ordinal, "code");
        }
        let line_budget = self
            .hard_max
            .saturating_sub(overhead + 2)
            .min(limit.saturating_sub(overhead))
            .max(1);
        let mut units = Vec::new();
        for (i, line) in body.iter().enumerate() {
            if !self.text[line.clone()].trim().is_empty() {
                self.numbered(line.clone(), i + 1, line_budget, &mut units);
            }
        }
        if units.is_empty() {
            return self.degrade(start..range.end, ordinal, "code");
        }
        let mut parts = self.greedy(units, start, limit, reopen.as_deref(), Some(&close));
        let n = parts.len();
        if let Some(last) = parts.last_mut() {
            // The last piece owns the closing fence line of the block.
            last.0.end = range.end;
        }
        parts
            .into_iter()
            .enumerate()
            .map(|(i, (own, first, last, is_first))| Part {
                own,
                prefix: if is_first { None } else { reopen.clone() },
                suffix: if i + 1 < n || !closed {
                    close.clone()
                } else {
                    String::new()
                },
                detail: format!("code[{ordinal}] lines {first}-{last}"),
                chunk_type: None,
            })
            .collect()
    }

    /// Greedy grouping of numbered units into pieces whose full text
    /// (prefix on all but the first, own span, suffix) stays within `limit`
    /// by estimate and within the hard max exactly. Returns
    /// (own span, first number, last number, is first piece).
    fn greedy(
        &self,
        mut units: Vec<Numbered>,
        start: usize,
        limit: usize,
        prefix: Option<&str>,
        suffix: Option<&str>,
    ) -> Vec<(Range<usize>, usize, usize, bool)> {
        let pre = prefix.map_or(0, |p| self.count_text(p));
        let suf = suffix.map_or(0, |s| self.count_text(s));
        let mut out = Vec::new();
        let mut i = 0;
        while i < units.len() {
            let is_first = out.is_empty();
            let own_start = if is_first {
                start
            } else {
                units[i].range.start
            };
            let extra = if is_first { suf } else { pre + suf };
            let mut j = i + 1;
            while j < units.len() && self.count(own_start..units[j].range.end) + extra <= limit {
                j += 1;
            }
            // Exact check of the assembled text; shrink while it is too big.
            loop {
                let own = own_start..units[j - 1].range.end;
                let mut full = String::new();
                if !is_first {
                    full.push_str(prefix.unwrap_or(""));
                }
                full.push_str(&self.text[own.clone()]);
                full.push_str(suffix.unwrap_or(""));
                if self.count_text(&full) <= self.hard_max {
                    out.push((own, units[i].number, units[j - 1].number, is_first));
                    break;
                }
                if j == i + 1 {
                    // One unit that does not fit with its lead-in (headings
                    // in front, fences around): halve it and try again.
                    let u = units[i].clone();
                    let half = (self.count(u.range.clone()) / 2).max(1);
                    match self.tokens.cut_points(u.range.clone(), half).first() {
                        Some(&cut) if cut > u.range.start && cut < u.range.end => {
                            units[i] = Numbered {
                                range: u.range.start..cut,
                                number: u.number,
                            };
                            let rest = Numbered {
                                range: cut..u.range.end,
                                number: u.number,
                            };
                            units.insert(i + 1, rest);
                            continue;
                        }
                        _ => {
                            out.push((own, units[i].number, units[j - 1].number, is_first));
                            break;
                        }
                    }
                }
                j -= 1;
            }
            i = j;
        }
        out
    }

    /// Fallback for a block that cannot be split by its structure (a table
    /// whose header alone fills the budget, a code block with no body or
    /// with an opening fence line that fills half the budget):
    /// paragraph windows.
    fn degrade(&self, range: Range<usize>, ordinal: usize, what: &str) -> Vec<Part> {
        let units = self.prose_units(range.clone(), self.hard_max, &[]);
        let groups = self.group(&units, Some(range.start), self.hard_max);
        let n = groups.len();
        groups
            .into_iter()
            .enumerate()
            .map(|(i, own)| Part {
                own,
                prefix: None,
                suffix: String::new(),
                detail: format!("{what}[{ordinal}] part {}/{n}", i + 1),
                chunk_type: Some(ChunkType::Paragraph),
            })
            .collect()
    }
}
