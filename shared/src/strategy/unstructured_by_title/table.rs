//! Unstructured's `_TableChunker` and `_HtmlTableSplitter` for tables
//! without `rowspan`/`colspan` (Markdown tables never have them): a table
//! that fits is one `Table`; otherwise `TableChunk`s of whole rows, an
//! oversized row split into cells and an oversized cell into word-bounded
//! pieces whose `<td>` fragment fits, the header rows repeated in front of
//! every continuation when they are small enough
//! (`_should_repeat_headers`). Without HTML (or under 50 characters) the
//! table text is split like any text.

use super::element::{ChunkKind, Element, Options, Row, Table};
use super::split::{split_rest, Rest};
use super::stext::{py_isspace, SText};


/// lxml's text escaping.
fn lxml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Python's `html.escape(s)` (quotes too).
pub fn html_escape(s: &str) -> String {
    lxml_escape(s)
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// `_format_td(text)` without spans.
fn format_td(text: &str) -> String {
    let s = html_escape(text)
        .split('\n')
        .collect::<Vec<_>>()
        .join("<br/>");
    let s = s
        .split(py_isspace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if s.is_empty() {
        "<td/>".into()
    } else {
        format!("<td>{s}</td>")
    }
}

fn fragment(text: &str) -> String {
    format!("<table><tr>{}</tr></table>", format_td(text))
}

impl Row {
    fn texts(&self) -> impl Iterator<Item = &SText> {
        self.cells.iter().filter(|c| !c.is_empty())
    }

    fn text(&self) -> SText {
        SText::join(&self.texts().cloned().collect::<Vec<_>>(), " ")
    }

    /// The compact `<tr>` (`HtmlRow.html`).
    fn html(&self) -> String {
        let tds: String = self
            .cells
            .iter()
            .map(|c| format!("<td>{}</td>", lxml_escape(&c.text())))
            .collect();
        format!("<tr>{tds}</tr>")
    }
}

impl Table {
    /// The compact HTML (`HtmlTable.html`).
    pub fn compact_html(&self) -> String {
        let trs: String = self.rows.iter().map(Row::html).collect();
        format!("<table>{trs}</table>")
    }
}

/// `_RowAccumulator`.
struct Rows<'a> {
    maxlen: usize,
    rows: Vec<&'a Row>,
    text_len: usize,
}

impl<'a> Rows<'a> {
    fn new(maxlen: usize) -> Self {
        Rows {
            maxlen,
            rows: Vec::new(),
            text_len: 0,
        }
    }
    fn will_fit(&self, r: &Row) -> bool {
        self.maxlen as isize - self.rows.len() as isize - self.text_len as isize
            >= r.text().len() as isize
    }
    fn add(&mut self, r: &'a Row) {
        self.text_len += r.text().len();
        self.rows.push(r);
    }
    fn flush(&mut self) -> Option<(SText, String)> {
        if self.rows.is_empty() {
            return None;
        }
        let texts: Vec<SText> = self.rows.iter().flat_map(|r| r.texts().cloned()).collect();
        let html = format!(
            "<table>{}</table>",
            self.rows.iter().map(|r| r.html()).collect::<String>()
        );
        self.rows.clear();
        self.text_len = 0;
        Some((SText::join(&texts, " "), html))
    }
}

/// The splitter's view of one table.
struct Splitter<'a> {
    t: &'a Table,
    o: &'a Options,
    header_rows: usize,
    header_text: SText,
    repeat: bool,
}

impl<'a> Splitter<'a> {
    fn new(t: &'a Table, o: &'a Options) -> Self {
        let header_rows = if o.repeat_table_headers {
            t.rows.iter().take_while(|r| r.header).count()
        } else {
            0
        };
        let texts: Vec<SText> = t.rows[..header_rows]
            .iter()
            .flat_map(|r| r.texts().cloned())
            .collect();
        let mut s = Splitter {
            t,
            o,
            header_rows,
            header_text: SText::join(&texts, " "),
            repeat: false,
        };
        s.repeat = s.should_repeat_headers();
        s
    }

    fn reduced(&self) -> usize {
        (self.o.hard_max() as isize - self.header_text.len() as isize - 1).max(1) as usize
    }

    fn should_repeat_headers(&self) -> bool {
        if self.header_rows == 0 {
            return false;
        }
        let max = self.o.hard_max();
        let hdr = &self.t.rows[..self.header_rows];
        let longest = hdr.iter().map(|r| r.text().len()).max().unwrap_or(0);
        let html_len = "<thead></thead>".len()
            + hdr
                .iter()
                .map(|r| {
                    r.cells
                        .iter()
                        .map(|c| 9 + lxml_escape(&c.text()).chars().count())
                        .sum::<usize>()
                        + 9
                })
                .sum::<usize>();
        longest <= max.div_ceil(2)
            && self.header_text.len() <= 3 * max / 4
            && html_len <= 4 * max
            && !self.would_starve()
    }

    /// `_would_starve_oversized_body_cell` (each row its own group).
    fn would_starve(&self) -> bool {
        let (max, maxlen) = (self.o.hard_max(), self.reduced());
        let mut at_risk = vec![false; self.header_rows];
        let mut first = true;
        let mut acc = Rows::new(max);
        for (i, row) in self.t.rows.iter().enumerate().take(self.header_rows) {
            if !acc.will_fit(row) {
                if acc.flush().is_some() {
                    first = false;
                }
                acc = Rows::new(if first { max } else { maxlen });
            }
            if acc.will_fit(row) {
                acc.add(row);
            } else {
                at_risk[i] = true;
                first = false;
                acc = Rows::new(maxlen);
            }
        }
        if self.header_text.len() > maxlen && at_risk.iter().any(|&b| b) {
            return true;
        }
        for (i, row) in self.t.rows.iter().enumerate() {
            if i < self.header_rows && !at_risk[i] {
                continue;
            }
            if i < self.header_rows {
                let n = row.text().len();
                if n <= max && n > maxlen {
                    return true;
                }
            }
            for c in &row.cells {
                if c.len() <= maxlen {
                    continue;
                }
                let probe = if c.0.iter().any(|x| py_isspace(x.c)) {
                    "' '"
                } else {
                    "''"
                };
                if maxlen < fragment(probe).chars().count() {
                    return true;
                }
            }
        }
        false
    }

    fn maxlen(&self, first: bool) -> usize {
        if first || !self.repeat {
            self.o.hard_max()
        } else {
            self.reduced()
        }
    }

    fn prepend(&self, text: SText, html: String, first: bool) -> (SText, String) {
        if first || !self.repeat {
            return (text, html);
        }
        let t = match (self.header_text.is_empty(), text.is_empty()) {
            (false, false) => {
                let mut h = self.header_text.clone();
                h.push_str(" ", 0);
                h.append(&text);
                h
            }
            (false, true) => self.header_text.clone(),
            _ => text,
        };
        let head: String = self.t.rows[..self.header_rows]
            .iter()
            .map(|r| {
                format!(
                    "<tr>{}</tr>",
                    r.cells
                        .iter()
                        .map(|c| format!("<th>{}</th>", lxml_escape(&c.text())))
                        .collect::<String>()
                )
            })
            .collect();
        let inner = html.strip_prefix("<table>").unwrap_or(&html);
        let inner = inner.strip_suffix("</table>").unwrap_or(inner);
        (t, format!("<table><thead>{head}</thead>{inner}</table>"))
    }

    /// `_iter_subtables`.
    fn subtables(&self) -> Vec<(SText, String)> {
        let mut out = Vec::new();
        let mut first = true;
        let mut acc = Rows::new(self.maxlen(true));
        let emit = |pair: (SText, String), first: &mut bool, out: &mut Vec<(SText, String)>| {
            out.push(self.prepend(pair.0, pair.1, *first));
            *first = false;
        };
        for row in &self.t.rows {
            if !acc.will_fit(row) {
                if let Some(p) = acc.flush() {
                    emit(p, &mut first, &mut out);
                }
                acc = Rows::new(self.maxlen(first));
            }
            if acc.will_fit(row) {
                acc.add(row);
            } else {
                for p in self.row_splits(row, self.maxlen(false)) {
                    emit(p, &mut first, &mut out);
                }
                acc = Rows::new(self.maxlen(first));
            }
        }
        if let Some(p) = acc.flush() {
            emit(p, &mut first, &mut out);
        }
        out
    }

    /// `_iter_row_splits` with `_CellAccumulator`.
    fn row_splits(&self, row: &Row, maxlen: usize) -> Vec<(SText, String)> {
        let mut out = Vec::new();
        let mut cells: Vec<&SText> = Vec::new();
        let mut text = SText::default();
        let mut empties = 0usize;
        let will_fit = |text: &SText, empties: usize, c: &SText| {
            if c.is_empty() {
                text.len() + empties < maxlen
            } else {
                let extra = if text.is_empty() { 0 } else { 1 };
                text.len() + extra + c.len() + empties <= maxlen
            }
        };
        let flush = |cells: &mut Vec<&SText>,
                     text: &mut SText,
                     empties: &mut usize,
                     out: &mut Vec<(SText, String)>| {
            if cells.is_empty() {
                return;
            }
            let tds: String = cells
                .iter()
                .map(|c| {
                    if c.is_empty() {
                        "<td/>".to_owned()
                    } else {
                        format!("<td>{}</td>", lxml_escape(&c.text()))
                    }
                })
                .collect();
            out.push((
                std::mem::take(text),
                format!("<table><tr>{tds}</tr></table>"),
            ));
            cells.clear();
            *empties = 0;
        };
        for c in &row.cells {
            if !will_fit(&text, empties, c) {
                flush(&mut cells, &mut text, &mut empties, &mut out);
            }
            if will_fit(&text, empties, c) {
                cells.push(c);
                if c.is_empty() {
                    empties += 1;
                } else {
                    text = if text.is_empty() {
                        c.clone()
                    } else {
                        SText::join(&[text, c.clone()], " ")
                    };
                }
            } else {
                out.extend(cell_splits(c, maxlen));
            }
        }
        flush(&mut cells, &mut text, &mut empties, &mut out);
        out
    }
}

/// `_iter_cell_splits` (character mode, no colspan).
fn cell_splits(cell: &SText, maxlen: usize) -> Vec<(SText, String)> {
    let seps = vec!["\n".to_owned(), " ".to_owned()];
    let budget = (maxlen as isize - fragment("").chars().count() as isize).max(1) as usize;
    let mut out = Vec::new();
    // What is left, owned again only after a raw truncation.
    let mut owned = cell.clone();
    'owned: loop {
        let mut rest = Rest::new(&owned.0);
        loop {
            let (mut lo, mut hi, mut best) = (1usize, budget, None);
            while lo <= hi {
                let mid = (lo + hi) / 2;
                let (t, r) = split_rest(&rest, mid, 0, &seps);
                let html = fragment(&t.text());
                if html.chars().count() <= maxlen {
                    best = Some((t, html, r));
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            let Some((t, html, r)) = best else {
                let (t, html, r) = truncate(&rest.to_stext(), maxlen);
                out.push((t, html));
                if r.is_empty() {
                    return out;
                }
                owned = r;
                continue 'owned;
            };
            out.push((t, html));
            if r.is_empty() || r.len() >= rest.len() {
                return out;
            }
            rest = r;
        }
    }
}

/// `_truncate_cell_fragment`.
fn truncate(text: &SText, maxlen: usize) -> (SText, String, SText) {
    let (mut lo, mut hi, mut best) = (0isize, text.len() as isize, 0usize);
    while lo <= hi {
        let mid = (lo + hi) / 2;
        if fragment(&text.slice(0..mid as usize).text())
            .chars()
            .count()
            <= maxlen
        {
            best = mid as usize;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    let best = if text.is_empty() { 0 } else { best.max(1) };
    let t = text.slice(0..best);
    let html = fragment(&t.text());
    (t, html, text.slice(best..text.len()))
}

/// `_TableChunker._iter_chunks` for the lone table `e`.
pub fn chunk_table(
    e: &Element,
    prefix: &SText,
    o: &Options,
) -> Vec<(ChunkKind, SText, Option<String>)> {
    if e.text.normalized().is_empty() {
        return Vec::new();
    }
    let text = if prefix.is_empty() {
        e.text.strip()
    } else {
        SText::join(&[prefix.clone(), e.text.strip()], "\n")
    };
    let html = e.table.as_ref().map(Table::compact_html);
    let html_len = html.as_ref().map_or(0, |h| h.chars().count());
    if text.len() <= o.hard_max() && html_len <= o.hard_max() {
        return vec![(ChunkKind::Table, text, html)];
    }
    match e.table.as_ref() {
        Some(t) if o.hard_max() >= 50 => Splitter::new(t, o)
            .subtables()
            .into_iter()
            .map(|(t, h)| (ChunkKind::TableChunk, t, Some(h)))
            .collect(),
        _ => o
            .pieces(&text)
            .into_iter()
            .map(|c| (ChunkKind::TableChunk, c, None))
            .collect(),
    }
}
