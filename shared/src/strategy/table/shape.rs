//! A table block read as header and rows: byte ranges of every line and the
//! cells of every row. GFM tables (header, delimiter, rows) and pipe-row
//! lists (a table an export flattened into `- | a | b |` items, header
//! detected) are both read; ragged rows are kept as they are.

use std::ops::Range;

use crate::markdown::pipe_rows;

/// One table as rows of cells.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// The header lines (header row and delimiter row), empty when the table
    /// has no header.
    pub header: Option<Range<usize>>,
    /// Column names (the header row's cells; `column N` without a header).
    pub columns: Vec<String>,
    /// Body rows: the line's range and its cells.
    pub rows: Vec<(Range<usize>, Vec<String>)>,
}

/// The cells of one pipe row (`| a | b \| c |` -> `a`, `b | c`).
pub(crate) fn cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = if row.ends_with('|') && !row.ends_with("\\|") {
        &row[..row.len() - 1]
    } else {
        row
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_owned()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_owned());
    out
}

/// Reads the table in `range` of `text`; `None` when it has no body row.
pub(crate) fn read(text: &str, range: Range<usize>) -> Option<Shape> {
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut pos = range.start;
    for line in text[range.clone()].split('\n') {
        if !line.trim().is_empty() {
            lines.push(pos..pos + line.len());
        }
        pos += line.len() + 1;
    }
    let first = lines.first().map(|l| &text[l.clone()])?;
    let row_text = |l: &Range<usize>| -> String {
        let line = &text[l.clone()];
        pipe_rows::row_of_item(line).unwrap_or(line).to_owned()
    };
    let header_len = if pipe_rows::row_of_item(first).is_some() {
        let texts: Vec<&str> = lines.iter().map(|l| &text[l.clone()]).collect();
        pipe_rows::header_lines(&texts)
    } else if lines.len() >= 2 && pipe_rows::is_delimiter(&text[lines[1].clone()]) {
        2
    } else {
        0
    };
    let header_len = header_len.min(lines.len());
    let header = (header_len > 0).then(|| lines[0].start..lines[header_len - 1].end);
    // Every line after the header is a row, even one that looks like a
    // delimiter (`|  |`): a row chunk must cover it, or its text is lost.
    let body: Vec<(Range<usize>, Vec<String>)> = lines[header_len..]
        .iter()
        .map(|l| (l.clone(), cells(&row_text(l))))
        .collect();
    if body.is_empty() {
        return None;
    }
    let width = body.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    let columns = match &header {
        Some(_) => {
            let mut c = cells(&row_text(&lines[0]));
            for (i, name) in c.iter_mut().enumerate() {
                if name.is_empty() {
                    *name = format!("column {}", i + 1);
                }
            }
            c
        }
        None => (1..=width).map(|i| format!("column {i}")).collect(),
    };
    Some(Shape {
        header,
        columns,
        rows: body,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cells_split_on_unescaped_pipes() {
        assert_eq!(cells("| a | b \\| c |"), ["a", "b | c"]);
        assert_eq!(cells("a|b"), ["a", "b"]);
    }

    #[test]
    fn gfm_and_pipe_row_lists_read_alike_and_ragged_rows_stay() {
        let t = "| Year | Sales (USD) |\n|---|---|\n| 2019 | 10 |\n| 2020 |\n";
        let s = read(t, 0..t.trim_end().len()).unwrap();
        assert_eq!(s.columns, ["Year", "Sales (USD)"]);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[1].1, ["2020"]);
        let l = "- | (in thousands) | 2019 |\n- | Revenue | 10 |\n- | Cost | 7 |\n";
        let s = read(l, 0..l.trim_end().len()).unwrap();
        assert_eq!(s.rows.len() + usize::from(s.header.is_some()), 3);
    }
}
