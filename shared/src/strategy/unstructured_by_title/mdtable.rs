//! The `tables` extension's `TableProcessor` (Python-Markdown 3.11.3):
//! a block whose first line splits into cells and whose second line is a
//! separator row of the same width is a table; every further line is a
//! row. Pipes inside code spans and escaped pipes do not split.

/// `RE_END_BORDER`: ends with a `|` not escaped.
fn end_border(row: &str) -> bool {
    let Some(head) = row.strip_suffix('|') else {
        return false;
    };
    head.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 0
}

/// `_split`: cells at the pipes outside code spans and escapes.
fn split(row: &str) -> Vec<String> {
    let b = row.as_bytes();
    // RE_CODE_PIPES: (\\\\)|(\\`+)|(`+)|(\\\|)|(\|)
    let (mut tics, mut points, mut pipes) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'`') {
            let n = b[i + 1..].iter().take_while(|&&x| x == b'`').count();
            tics.push(n);
            points.push((i, i + n, 1usize));
            i += 1 + n;
        } else if b[i] == b'`' {
            let n = b[i..].iter().take_while(|&&x| x == b'`').count();
            tics.push(n);
            points.push((i, i + n - 1, 0));
            i += n;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'|') {
            i += 2;
        } else {
            if b[i] == b'|' {
                pipes.push(i);
            }
            i += 1;
        }
    }
    let mut regions = Vec::new();
    let mut pos = 0;
    while pos < tics.len() {
        let size = tics[pos] as isize - points[pos].2 as isize;
        let found = (size != 0)
            .then(|| tics[pos + 1..].iter().position(|&t| t as isize == size))
            .flatten();
        match found {
            Some(k) => {
                regions.push((points[pos].0, points[pos + k + 1].1));
                pos += k + 2;
            }
            None => pos += 1,
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    for p in pipes {
        let inside = regions.iter().find(|r| p <= r.1).is_some_and(|r| r.0 <= p);
        if !inside {
            out.push(row[start..p].to_owned());
            start = p + 1;
        }
    }
    out.push(row[start..].to_owned());
    out
}

fn split_row(row: &str, border: bool) -> Vec<String> {
    let mut r = row;
    if border {
        r = r.strip_prefix('|').unwrap_or(r);
        if end_border(r) {
            r = &r[..r.len() - 1];
        }
    }
    split(r)
}

/// The table of `block`, if it is one: header cells and body rows, each
/// cell stripped of spaces (as many cells as the separator row has).
pub fn parse(block: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut first = block.splitn(3, '\n').map(|r| r.trim_matches(' '));
    let (r0, r1) = (first.next()?, first.next()?);
    let border = r0.starts_with('|') || end_border(r0);
    let n = split_row(r0, border).len();
    let mut is_table = n > 1;
    if !is_table && n == 1 && border {
        is_table = block
            .split('\n')
            .skip(1)
            .map(|r| r.trim_matches(' '))
            .all(|r| r.starts_with('|') || end_border(r));
    }
    if !is_table {
        return None;
    }
    let sep = split_row(r1, border);
    if sep.len() != n
        || !sep
            .concat()
            .chars()
            .all(|c| matches!(c, '|' | ':' | '-' | ' '))
    {
        return None;
    }
    let cells = |row: &str| -> Vec<String> {
        let c = split_row(row, border);
        (0..n)
            .map(|i| {
                c.get(i)
                    .map_or(String::new(), |s| s.trim_matches(' ').to_owned())
            })
            .collect()
    };
    let header = cells(r0);
    let body = if block.split('\n').nth(2).is_none() {
        vec![vec![String::new(); n]]
    } else {
        block
            .split('\n')
            .skip(2)
            .map(|r| cells(r.trim_matches(' ')))
            .collect()
    };
    Some((header, body))
}
