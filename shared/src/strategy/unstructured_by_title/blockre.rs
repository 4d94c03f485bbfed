//! The line tests of Python-Markdown's block processors (their regular
//! expressions, written out): list markers, rules, `#` headers, quotes,
//! reference definitions, and the detab helpers.

use super::stext::py_isspace;

pub(super) const TAB: usize = 4;

pub(super) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `^[ ]{0,n}`: the count of leading spaces when at most `n`.
pub(super) fn lead(s: &str, n: usize) -> Option<usize> {
    let k = s.bytes().take_while(|&b| b == b' ').count();
    (k <= n).then_some(k)
}

/// `[ ]{0,3}(\d+\.|[*+-])[ ]+(.*)` at the start of `line` (`lo..=hi`
/// leading spaces): (is ordered, content).
pub(super) fn list_marker(line: &str, lo: usize, hi: usize, ol: bool, ul: bool) -> Option<(bool, &str)> {
    let k = line.bytes().take_while(|&b| b == b' ').count();
    if k < lo || k > hi {
        return None;
    }
    let rest = &line[k..];
    let (ordered, after) = if ul && matches!(rest.as_bytes().first(), Some(b'*' | b'+' | b'-')) {
        (false, &rest[1..])
    } else {
        let d = rest.bytes().take_while(u8::is_ascii_digit).count();
        if !ol || d == 0 || rest.as_bytes().get(d) != Some(&b'.') {
            return None;
        }
        (true, &rest[d + 1..])
    };
    let sp = after.bytes().take_while(|&b| b == b' ').count();
    (sp > 0).then(|| (ordered, &after[sp..]))
}

pub(super) fn hr_line(line: &str) -> bool {
    let Some(k) = lead(line, 3) else { return false };
    let rest = &line[k..];
    let Some(c) = rest.chars().next().filter(|c| matches!(c, '-' | '_' | '*')) else {
        return false;
    };
    let b = rest.as_bytes();
    let (mut i, mut count) = (0, 0);
    while i < b.len() && b[i] == c as u8 {
        while i < b.len() && b[i] == c as u8 {
            i += 1;
            count += 1;
        }
        let sp = b[i..].iter().take(2).take_while(|&&x| x == b' ').count();
        if b.get(i + sp) == Some(&(c as u8)) {
            i += sp;
        } else {
            break;
        }
    }
    count >= 3 && rest[i..].bytes().all(|x| x == b' ')
}

/// `HashHeaderProcessor.RE.search`: (start, end, level, header).
pub(super) fn hash_header(block: &str) -> Option<(usize, usize, u8, String)> {
    let mut start = 0;
    loop {
        let line_end = block[start..].find('\n').map_or(block.len(), |i| start + i);
        let line = &block[start..line_end];
        let level = line.bytes().take_while(|&b| b == b'#').count().min(6);
        if level > 0 {
            let mut h = &line[level..];
            if !h.trim_end_matches('#').ends_with('\\') {
                h = h.trim_end_matches('#');
            }
            let end = if line_end < block.len() {
                line_end + 1
            } else {
                line_end
            };
            return Some((start, end, level as u8, py_strip(h).to_owned()));
        }
        if line_end >= block.len() {
            return None;
        }
        start = line_end + 1;
    }
}

/// `BlockQuoteProcessor.RE`: `(^|\n)[ ]{0,3}>[ ]?(.*)` on one line.
pub(super) fn quote_line(line: &str) -> Option<&str> {
    let k = lead(line, 3)?;
    let rest = line[k..].strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

pub(super) fn detab(text: &str) -> (String, String) {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    for l in &lines {
        if l.starts_with("    ") {
            out.push(l[TAB..].to_owned());
        } else if py_strip(l).is_empty() {
            out.push(String::new());
        } else {
            break;
        }
    }
    let n = out.len();
    (out.join("\n"), lines[n..].join("\n"))
}

pub(super) fn loose_detab(text: &str, level: usize) -> String {
    let pad = " ".repeat(TAB * level);
    text.split('\n')
        .map(|l| l.strip_prefix(pad.as_str()).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `ReferenceProcessor.RE` searched in `block` from byte `from`: the
/// next definition `[id]: url ["title"]` starting a line (the url and the
/// title may each be on the next line): (start, end, id, url).
pub(super) fn reference(block: &str, from: usize) -> Option<(usize, usize, String, String)> {
    let mut ls = from;
    while ls <= block.len() {
        if ls == 0 || block.as_bytes()[ls - 1] == b'\n' {
            if let Some((end, id, url)) = reference_at(block, ls) {
                return Some((ls, end, id, url));
            }
        }
        ls += block[ls..].find('\n').map(|k| k + 1)?;
    }
    None
}

fn skip_spaces(s: &str, i: usize) -> usize {
    i + s[i..].bytes().take_while(|&b| b == b' ').count()
}

/// Optional `\n[ ]*` at `i`.
fn skip_newline(s: &str, i: usize) -> usize {
    if s.as_bytes().get(i) == Some(&b'\n') {
        skip_spaces(s, i + 1)
    } else {
        i
    }
}

fn line_end(s: &str, i: usize) -> bool {
    i == s.len() || s.as_bytes()[i] == b'\n'
}

fn reference_at(s: &str, ls: usize) -> Option<(usize, String, String)> {
    let k = lead(&s[ls..], 3)?;
    let i = ls + k;
    let rest = s[i..].strip_prefix('[')?;
    let close = rest.find([']', '['])?;
    if !rest[close..].starts_with("]:") {
        return None;
    }
    let id = py_strip(&rest[..close]).to_lowercase();
    let mut p = skip_newline(s, skip_spaces(s, i + 1 + close + 2));
    let url_end = s[p..].find(py_isspace).map_or(s.len(), |e| p + e);
    if url_end == p {
        return None;
    }
    let url = s[p..url_end].trim_start_matches('<').trim_end_matches('>').to_owned();
    p = skip_spaces(s, url_end);
    if line_end(s, p) {
        // A title may still follow on the next line.
        let q = skip_newline(s, p);
        if q > p {
            if let Some(e) = title(s, q) {
                return Some((e, id, url));
            }
        }
        return Some((p, id, url));
    }
    title(s, p).map(|e| (e, id, url))
}

/// `((["'])(.*)\2[ ]*|\((.*)\)[ ]*)$` at `i`: the end.
fn title(s: &str, i: usize) -> Option<usize> {
    let le = s[i..].find('\n').map_or(s.len(), |e| i + e);
    let line = s[i..le].trim_end_matches(' ');
    let close = match line.chars().next()? {
        q @ ('"' | '\'') => q,
        '(' => ')',
        _ => return None,
    };
    (line.len() >= 2 && line.ends_with(close)).then_some(le)
}


/// `text.strip("\n")` is not empty.
pub(super) fn py_strip_nl(text: &str) -> bool {
    !text.trim_matches('\n').is_empty()
}
