//! `markdown.markdown(text, extensions=["tables", "fenced_code"])` up to
//! the block tree: Python-Markdown's preprocessors (whitespace
//! normalization: `\r\n` and `\r` to `\n`, tabs expanded to 4 columns,
//! lines of spaces emptied; the `fenced_code` extension: a fence at the
//! start of a line with at most a language word after it, closed by the
//! same fence, becomes a placeholder line), then [`super::blocks`].

use super::blocks::{Node, Parser};

/// `str.expandtabs(4)`.
fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut col = 0;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 4 - col % 4;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(c);
                col = 0;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

/// `NormalizeWhitespace`.
fn normalize(source: &str) -> String {
    let s = source
        .replace(['\u{2}', '\u{3}'], "")
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        + "\n\n";
    let s = expand_tabs(&s);
    let mut lines: Vec<&str> = s.split('\n').collect();
    let n = lines.len();
    for (i, l) in lines.iter_mut().enumerate() {
        if i > 0 && i + 1 < n && !l.is_empty() && l.bytes().all(|b| b == b' ') {
            *l = "";
        }
    }
    lines.join("\n")
}

/// What may follow an opening fence on its line.
fn info_ok(rest: &str) -> bool {
    let r = rest.trim_start_matches(' ');
    if r.starts_with('{') && r.ends_with('}') {
        return true;
    }
    let r = r.strip_prefix('.').unwrap_or(r);
    let lang = r
        .chars()
        .take_while(|&c| c.is_alphanumeric() || c == '_' || "#.+-".contains(c))
        .map(char::len_utf8)
        .sum::<usize>();
    let r = r[lang..].trim_start_matches(' ');
    if r.is_empty() {
        return true;
    }
    let Some(h) = r.strip_prefix("hl_lines=") else {
        return false;
    };
    let Some(q) = h.chars().next().filter(|&q| q == '"' || q == '\'') else {
        return false;
    };
    h[1..]
        .find(q)
        .is_some_and(|k| h[1 + k + 1..].trim_matches(' ').is_empty())
}

/// `FencedBlockPreprocessor.run`: the text with each fenced block replaced
/// by a placeholder line, and the blocks' code.
fn fences(text: &str) -> (String, Vec<String>) {
    let mut text = text.to_owned();
    let mut code = Vec::new();
    let mut from = 0;
    'search: loop {
        let mut ls = from;
        while ls < text.len() {
            if ls == 0 || text.as_bytes()[ls - 1] == b'\n' {
                let line_end = text[ls..].find('\n').map_or(text.len(), |k| ls + k);
                let line = &text[ls..line_end];
                let c = line.as_bytes().first().copied().unwrap_or(0);
                let run = line.bytes().take_while(|&b| b == c).count();
                if (c == b'`' || c == b'~')
                    && run >= 3
                    && line_end < text.len()
                    && info_ok(&line[run..])
                {
                    let fence = &line[..run];
                    // The first closing fence line after the opening.
                    let mut cs = line_end + 1;
                    while cs <= text.len() {
                        let ce = text[cs..].find('\n').map_or(text.len(), |k| cs + k);
                        let cl = &text[cs..ce];
                        if let Some(r) = cl.strip_prefix(fence) {
                            if r.bytes().all(|b| b == b' ') {
                                let body = text[line_end + 1..cs].to_owned();
                                let ph = format!("\u{2}wzxhzdk:{}\u{3}", code.len());
                                code.push(body);
                                text = format!("{}\n{ph}\n{}", &text[..ls], &text[ce..]);
                                from = ls + 1 + ph.len();
                                continue 'search;
                            }
                        }
                        if ce >= text.len() {
                            break;
                        }
                        cs = ce + 1;
                    }
                }
                ls = line_end + 1;
            } else {
                ls += text[ls..].find('\n').map_or(text.len() - ls, |k| k + 1);
            }
        }
        break;
    }
    (text, code)
}

/// `HtmlBlockPreprocessor` for comments: a comment starting a line (after
/// at most 3 spaces) and ending one is a raw block of its own (a
/// placeholder paragraph that gives nothing).
fn comments(text: &str, code: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let found = rest.match_indices("<!--").find(|&(i, _)| {
            let ls = rest[..i].rfind('\n').map_or(0, |k| k + 1);
            i - ls <= 3 && rest[ls..i].bytes().all(|b| b == b' ')
        });
        let Some((i, _)) = found else { break };
        let Some(close) = rest[i + 4..].find("-->").map(|k| i + 4 + k + 3) else { break };
        let le = rest[close..].find('\n').map_or(rest.len(), |k| close + k);
        if !rest[close..le].bytes().all(|b| b == b' ') {
            out.push_str(&rest[..close]);
            rest = &rest[close..];
            continue;
        }
        let ls = rest[..i].rfind('\n').map_or(0, |k| k + 1);
        out.push_str(&rest[..ls]);
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&format!("\u{2}wzxhzdk:{}\u{3}\n\n", code.len()));
        code.push(String::new());
        rest = rest[le..].strip_prefix('\n').unwrap_or(&rest[le..]);
    }
    out.push_str(rest);
    out
}

/// The parsed document: its block tree, fenced code blocks (by
/// placeholder number) and reference definitions.
#[derive(Debug)]
pub struct Parsed {
    /// The tree.
    pub root: Node,
    /// Code of each fenced block (by placeholder number).
    pub code: Vec<String>,
    /// Raw HTML blocks (by placeholder number).
    pub raw: std::collections::HashMap<usize, String>,
    /// Reference definitions: id -> url.
    pub references: std::collections::HashMap<String, String>,
}

/// Python-Markdown's block stage on `source`; `None` for blank text.
pub fn parse(source: &str) -> Option<Parsed> {
    if source.trim_matches(super::stext::py_isspace).is_empty() {
        return None;
    }
    let (text, mut code) = fences(&normalize(source));
    let (text, blocks) = super::rawhtml::raw_blocks(&text, code.len());
    let mut raw = std::collections::HashMap::new();
    for b in blocks {
        raw.insert(code.len(), b);
        code.push(String::new());
    }
    let text = comments(&text, &mut code);
    let mut parser = Parser::new();
    let root = parser.parse_document(&text);
    Some(Parsed {
        root,
        code,
        raw,
        references: parser.references,
    })
}
