//! Simple line rules of Markdown (fences, tables, ATX and setext headings,
//! thematic breaks, front matter), the reference canonical text and ids, as
//! the invariant checks read them: independent of the engine's parser.

use super::*;

/// `\n` followed by a fence line (at most 3 spaces, then 3+ of one fence char).
pub fn is_closing_fence_suffix(suffix: &str) -> bool {
    let Some(line) = suffix.strip_prefix('\n') else {
        return false;
    };
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = line.trim_start_matches(' ');
    indent <= 3 && t.len() >= 3 && (t.bytes().all(|b| b == b'`') || t.bytes().all(|b| b == b'~'))
}

/// The fence a line opens (char, length), by the docs/contract.md#chunk-record line rule.
pub fn fence_open(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    // CommonMark: a backtick fence's info string holds no backtick.
    if ch == '`' && t[len..].contains('`') {
        return None;
    }
    Some((ch, len))
}

/// Whether `line` closes a fence of `ch` at least `len` long.
pub fn fence_closes(line: &str, ch: char, len: usize) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let t = t.trim_end_matches([' ', '\t']);
    t.chars().count() >= len && t.chars().all(|c| c == ch)
}

/// Every fence the chunk text opens is closed before its end.
pub fn check_fences(text: &str, at: &str, v: &mut Vec<String>) {
    let mut open: Option<(char, usize, usize)> = None;
    for (n, line) in text.split('\n').enumerate() {
        match open {
            None => open = fence_open(line).map(|(ch, len)| (ch, len, n)),
            Some((ch, len, _)) if fence_closes(line, ch, len) => open = None,
            Some(_) => {}
        }
    }
    if let Some((ch, len, n)) = open {
        v.push(format!(
            "{at}: code fence {} opened on line {} is never closed",
            ch.to_string().repeat(len),
            n + 1
        ));
    }
}

/// A GFM delimiter row: cells of `-` with optional `:`, separated by `|`.
pub fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    !t.is_empty()
        && t.split('|').all(|cell| {
            let cell = cell.trim();
            let core = cell.strip_prefix(':').unwrap_or(cell);
            let core = core.strip_suffix(':').unwrap_or(core);
            !core.is_empty() && core.bytes().all(|b| b == b'-')
        })
}

pub fn is_atx_heading(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes)
        && t[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
}

pub fn is_setext_underline(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

/// If the non-blank lines from `i` on form a (possibly multi-line) setext
/// heading, the index of its underline.
pub fn setext_end(lines: &[&str], i: usize) -> Option<usize> {
    let mut j = i;
    while j < lines.len() && !lines[j].trim().is_empty() && !lines[j].contains('|') {
        if j > i && is_setext_underline(lines[j]) {
            return Some(j);
        }
        j += 1;
    }
    None
}

/// A list item whose text is a pipe-table row (`- | a | b |`, `1. | x |`).
pub fn is_pipe_row_item(line: &str) -> bool {
    let t = line.trim_start();
    let rest = match t.chars().next() {
        Some('-' | '*' | '+') => &t[1..],
        Some(c) if c.is_ascii_digit() => {
            let d = t.trim_start_matches(|c: char| c.is_ascii_digit());
            match d.strip_prefix(['.', ')']) {
                Some(r) => r,
                None => return false,
            }
        }
        _ => return false,
    };
    rest.starts_with(' ') && rest.trim_start().starts_with('|')
}

/// A table chunk's text, after leading heading lines, starts with a header
/// row and a delimiter row.
pub fn check_table_start(text: &str, at: &str, v: &mut Vec<String>) {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        // A heading pending across a thematic break carries the break along.
        if l.trim().is_empty() || is_atx_heading(l) || is_thematic_break(l) {
            i += 1;
        } else if let Some(j) = setext_end(&lines, i) {
            i = j + 1;
        } else {
            break;
        }
    }
    let header = lines.get(i).copied().unwrap_or("");
    let delim = lines.get(i + 1).copied().unwrap_or("");
    if is_pipe_row_item(header) {
        // A table an export flattened into a list (issue 17): it starts
        // with a row, its header when it has one.
        return;
    }
    if !(header.contains('|') && is_delimiter_row(delim)) {
        v.push(format!("{at}: table chunk does not start with header + delimiter rows (first lines {header:?} / {delim:?})"));
    }
}

/// The docs/contract.md#ids canonical chunk text, written from the contract's prose.
pub fn canonical_text(text: &str) -> String {
    let mut pieces: Vec<String> = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    let mut code: Vec<&str> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let flush = |prose: &mut Vec<&str>, pieces: &mut Vec<String>| {
        let joined = prose.join("\n");
        let collapsed: Vec<&str> = joined.split_whitespace().collect();
        if !collapsed.is_empty() {
            pieces.push(collapsed.join(" "));
        }
        prose.clear();
    };
    for line in text.split('\n') {
        match fence {
            None => {
                if let Some(f) = fence_open(line) {
                    flush(&mut prose, &mut pieces);
                    fence = Some(f);
                    code.push(line);
                } else {
                    prose.push(line);
                }
            }
            Some((ch, len)) => {
                code.push(line);
                if fence_closes(line, ch, len) {
                    pieces.push(code.join("\n"));
                    code.clear();
                    fence = None;
                }
            }
        }
    }
    if fence.is_some() {
        pieces.push(code.join("\n"));
    }
    flush(&mut prose, &mut pieces);
    pieces.join("\n").trim().to_owned()
}

pub fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// The chunk id docs/contract.md#ids prescribes for `c` under `profile`.
pub fn expected_id(c: &Chunk, profile: &Profile) -> String {
    expected_id_under(c, profile, profile.granularity)
}

/// The id of `c`, namespaced unless its granularity is `primary`.
pub fn expected_id_under(c: &Chunk, profile: &Profile, primary: shared::Granularity) -> String {
    let suffix = if c.granularity == primary {
        String::new()
    } else {
        format!("|{}", c.granularity.as_str())
    };
    match profile.id_formula {
        IdFormula::Text => sha256_hex(&format!(
            "{}|{}|{}|{}|{}{suffix}",
            c.tenant_id,
            c.document_id,
            c.source_version_id,
            c.ordinal,
            canonical_text(&c.chunk_text)
        )),
        IdFormula::Span => sha256_hex(&format!(
            "{}:{}:{}:{}:{}{suffix}",
            c.document_id, c.block_start_idx, c.block_end_idx, c.char_start, c.char_end
        )),
    }
}

/// A thematic break line: 3+ of one of `*`, `-`, `_`, spaces allowed.
pub fn is_thematic_break(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let t = t.trim_end();
    let Some(ch) = t.chars().next().filter(|c| matches!(c, '*' | '-' | '_')) else {
        return false;
    };
    t.chars().filter(|c| *c == ch).count() >= 3
        && t.chars().all(|c| c == ch || c == ' ' || c == '\t')
}

/// Byte length of a front matter block at the very start (`---` ... `---`
/// or `...`, or `+++` ... `+++`), if there is one.
pub fn front_matter_len(text: &str) -> Option<usize> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    let delim = first.trim_end();
    if delim != "---" && delim != "+++" {
        return None;
    }
    let mut pos = first.len();
    for (n, line) in lines.enumerate() {
        pos += line.len();
        let t = line.trim_end();
        if n == 0 && t.is_empty() {
            return None;
        }
        if n > 0 && (t == delim || (delim == "---" && t == "...")) {
            return Some(pos);
        }
    }
    None
}

/// Byte ranges of the document that are not content: front matter at the
/// start and thematic-break lines outside fenced code.
pub fn exempt_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let start = front_matter_len(text).unwrap_or(0);
    if start > 0 {
        out.push((0, start));
    }
    let mut pos = start;
    let mut fence: Option<(char, usize)> = None;
    for line in text[start..].split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match fence {
            Some((ch, len)) => {
                if fence_closes(body, ch, len) {
                    fence = None;
                }
            }
            None => {
                if let Some(f) = fence_open(body) {
                    fence = Some(f);
                } else if is_thematic_break(body) {
                    out.push((pos, pos + line.len()));
                }
            }
        }
        pos += line.len();
    }
    out
}

/// Byte offset of the first ATX heading line (outside fences and front
/// matter, at column 0 so that it is a top-level heading).
pub fn first_atx_heading(text: &str) -> Option<usize> {
    let start = front_matter_len(text).unwrap_or(0);
    let mut pos = start;
    let mut fence: Option<(char, usize)> = None;
    // Inside a run of lines that starts with `<` (an HTML block, which
    // runs to the next blank line), `# x` lines are HTML content.
    let mut html = false;
    for line in text[start..].split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        if body.trim().is_empty() {
            html = false;
        }
        match fence {
            Some((ch, len)) => {
                if fence_closes(body, ch, len) {
                    fence = None;
                }
            }
            None => {
                if let Some(f) = fence_open(body) {
                    fence = Some(f);
                } else if body.trim_start().starts_with('<') {
                    html = true;
                } else if !html && body.starts_with('#') && is_atx_heading(body) {
                    return Some(pos);
                }
            }
        }
        pos += line.len();
    }
    None
}
