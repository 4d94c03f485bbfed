//! Tables that a PDF or office export flattened into lists: one list item
//! per row (`- | (in thousands) | 2019 | 2018 |`). Issue 17 found such lists
//! chunked as lists, into short runs of bare numbers with no header. A list
//! whose items are all one-line pipe rows is a table: it stays whole when
//! it fits and is split between rows with its header repeated when it does
//! not.
//!
//! The header is detected when present: the first row when the second is a
//! delimiter row (`| --- | --- |`, both rows repeated), else the first row
//! when it does not read as data (no number with a decimal or thousands
//! separator, no currency or percent sign, no parenthesised negative), which
//! covers the usual export where the header holds only labels and years.

/// The row of a list item line: the text after its marker (`-`, `*`, `+`,
/// `1.`, `1)`) when it is a pipe row (starts with `|`, holds another `|`).
pub fn row_of_item(line: &str) -> Option<&str> {
    let t = line.trim_start_matches([' ', '\t']);
    let rest = if let Some(r) = t.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        t[digits..].strip_prefix(['.', ')'])?
    };
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let row = rest.trim();
    (row.starts_with('|') && row[1..].contains('|')).then_some(row)
}

/// Whether every item of a list (by the item texts) is a one-line pipe row,
/// and there are at least two.
pub fn is_pipe_row_list<'a>(items: impl IntoIterator<Item = &'a str>) -> bool {
    let mut n = 0usize;
    for item in items {
        if item.trim_end().contains('\n') || row_of_item(item).is_none() {
            return false;
        }
        n += 1;
    }
    n >= 2
}

/// The cells of a pipe row, trimmed, outer pipes dropped.
fn cells(row: &str) -> impl Iterator<Item = &str> {
    let inner = row.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim)
}

/// A GFM delimiter row (`| --- | :-: |`, outer pipes optional): every
/// cell dashes with optional alignment colons.
pub fn is_delimiter(row: &str) -> bool {
    cells(row).all(|c| {
        let c = c.trim_start_matches(':').trim_end_matches(':');
        !c.is_empty() && c.bytes().all(|b| b == b'-')
    })
}

/// A cell that reads as a figure rather than a label.
fn data_cell(cell: &str) -> bool {
    let b = cell.as_bytes();
    let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let separated = b
        .iter()
        .enumerate()
        .any(|(i, &c)| matches!(c, b'.' | b',') && i > 0 && digit_at(i - 1) && digit_at(i + 1));
    let marked = cell.contains(['$', '€', '£', '¥', '₽', '%'])
        || (cell.starts_with('(')
            && cell.ends_with(')')
            && cell.bytes().any(|c| c.is_ascii_digit()));
    separated || marked
}

/// How many of the table's leading lines (list item lines) are its header:
/// 2 (header and delimiter), 1 (a label row) or 0.
pub fn header_lines(lines: &[&str]) -> usize {
    let rows: Vec<&str> = lines.iter().filter_map(|l| row_of_item(l)).collect();
    match rows.as_slice() {
        [_, d, ..] if is_delimiter(d) => 2,
        [h, _, ..] if !cells(h).any(data_cell) => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_found_after_any_list_marker() {
        assert_eq!(row_of_item("- | a | b |"), Some("| a | b |"));
        assert_eq!(row_of_item("  * | a | b"), Some("| a | b"));
        assert_eq!(row_of_item("12. | x | 1 |"), Some("| x | 1 |"));
        assert_eq!(row_of_item("3) |a|b|"), Some("|a|b|"));
        assert_eq!(row_of_item("- a | b"), None);
        assert_eq!(row_of_item("- |"), None);
        assert_eq!(row_of_item("-| a | b |"), None);
        assert_eq!(row_of_item("| a | b |"), None);
    }

    #[test]
    fn a_list_is_a_table_only_when_every_item_is_one_row() {
        assert!(is_pipe_row_list(["- | a | b |", "- | 1 | 2 |"]));
        assert!(!is_pipe_row_list(["- | a | b |"]));
        assert!(!is_pipe_row_list(["- | a | b |", "- plain item"]));
        assert!(!is_pipe_row_list(["- | a | b |\n  more", "- | 1 | 2 |"]));
    }

    #[test]
    fn headers_are_detected_when_present() {
        let export = [
            "- | (in thousands) | 2019 | 2018 |",
            "- | Revenue | $1,234 | $1,100 |",
        ];
        assert_eq!(header_lines(&export), 1);
        let gfm = ["- | Name | Size |", "- | --- | :-: |", "- | a | 1 |"];
        assert_eq!(header_lines(&gfm), 2);
        let data = ["- | Revenue | 1,234 | 1,100 |", "- | Cost | 900 | 850 |"];
        assert_eq!(header_lines(&data), 0);
        let negative = ["- | Net | (12) | 4 |", "- | Tax | 3 | 1 |"];
        assert_eq!(header_lines(&negative), 0);
    }
}
