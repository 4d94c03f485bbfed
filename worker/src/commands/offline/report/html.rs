//! The report page: one self-contained HTML file (inline CSS, a little
//! inline JS, inline SVG; a Content-Security-Policy that forbids loading
//! anything).
//!
//! The document text is written once per profile, HTML-escaped, as one
//! element per chunk span and per gap; overlap regions are `<u>` elements
//! inside them. Everything else a chunk shows (its margin note, its
//! synthetic prefix and suffix, its details) lives in attributes and is
//! drawn by CSS (`attr()`) or the script, so the page's text is exactly the
//! normalized document and stays small: no per-character markup.

use std::fmt::Write;
use std::ops::Range;

use shared::ChunkType;

use super::model::{FileReport, Item, Layout, Overlap, Prefix, ProfileInfo, Sizes};
use super::svg;

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// How many colours chunks cycle through (`k0`..`k3` in the CSS).
const COLOURS: u32 = 4;

/// Everything the page shows.
#[derive(Debug)]
pub(super) struct Page<'a> {
    /// The `<title>` and heading.
    pub title: &'a str,
    /// The profiles, in column order.
    pub profiles: &'a [ProfileInfo],
    /// The files that could be read, in input order.
    pub files: &'a [FileReport],
    /// `CHUNKING_FAILED` lines of files or runs that failed.
    pub failures: &'a [String],
}

/// Renders the whole page.
pub(super) fn render(page: &Page<'_>) -> String {
    let text_bytes: usize = page.files.iter().map(|f| f.bytes).sum();
    let mut out = String::with_capacity(64 * 1024 + text_bytes * (page.profiles.len() + 1) * 2);
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
    );
    push_text(&mut out, page.title);
    out.push_str("</title>\n<style>\n");
    out.push_str(STYLE);
    out.push_str("</style></head>\n<body>\n");
    header(&mut out, page);
    out.push_str("<main>\n");
    for (n, file) in page.files.iter().enumerate() {
        file_section(&mut out, page, n, file);
    }
    out.push_str("</main>\n");
    out.push_str(
        "<aside id=\"panel\" hidden><button type=\"button\" id=\"p-close\" \
         title=\"close (Esc)\">\u{d7}</button><h3 id=\"p-title\"></h3>\
         <dl id=\"p-fields\"></dl><div class=\"p-label\">embed_text \
         <span class=\"dim\">(what the embedder sees)</span></div><pre id=\"p-embed\"></pre>\
         <div class=\"p-label\">chunk_text</div><pre id=\"p-text\"></pre></aside>\n<script>\n",
    );
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body></html>\n");
    out
}

/// Title, the profiles with their totals, the files, the legend, failures.
fn header(out: &mut String, page: &Page<'_>) {
    out.push_str("<header class=\"top\"><h1>");
    push_text(out, page.title);
    out.push_str("</h1>\n<p class=\"sub\">");
    let chunks: usize = page
        .files
        .iter()
        .flat_map(|f| &f.runs)
        .filter_map(|r| r.as_ref().ok())
        .map(|d| d.chunks.len())
        .sum();
    let mut names: Vec<&str> = page.profiles.iter().map(|p| p.name.as_str()).collect();
    names.dedup();
    let lanes = if names.len() == page.profiles.len() {
        String::new()
    } else {
        format!(" ({} lanes: one per granularity)", page.profiles.len())
    };
    let _ = write!(
        out,
        "chunk-worker {} \u{b7} {} file{} \u{b7} {} profile{}{lanes} \u{b7} {chunks} chunks \u{b7} \
         click a chunk for its id, hashes, parent and embed_text",
        env!("CARGO_PKG_VERSION"),
        page.files.len(),
        plural(page.files.len()),
        names.len(),
        plural(names.len()),
    );
    out.push_str(
        "</p>\n<div class=\"tables\"><table class=\"sum\"><thead><tr><th>profile</th>\
         <th>chunker_version</th><th>tokenizer</th><th>target / hard max</th><th>chunks</th>\
         <th>tokens min / median / max</th></tr></thead><tbody>\n",
    );
    for (p, profile) in page.profiles.iter().enumerate() {
        let mut sizes = Sizes::default();
        let mut versions: Vec<&str> = Vec::new();
        for doc in page.files.iter().filter_map(|f| f.runs[p].as_ref().ok()) {
            sizes.extend(&Sizes::of(&doc.chunks));
            if !versions.contains(&doc.chunker_version.as_str()) {
                versions.push(&doc.chunker_version);
            }
        }
        if versions.is_empty() {
            versions.push(&profile.chunker_version);
        }
        out.push_str("<tr><td><b>");
        push_text(out, &profile.title());
        out.push_str("</b></td><td>");
        push_text(out, &versions.join(", "));
        out.push_str("</td><td>");
        push_text(out, &profile.tokenizer);
        let _ = writeln!(
            out,
            "</td><td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            profile.target,
            profile.hard_max,
            sizes.tokens.len(),
            sizes.describe()
        );
    }
    out.push_str("</tbody></table>\n");
    if page.files.len() > 1 {
        files_table(out, page);
    }
    out.push_str("</div>\n");
    out.push_str(
        "<p class=\"legend\"><span class=\"sw k0\">chunk</span><span class=\"sw k1\">next chunk</span> \
         own spans \u{b7} <span class=\"sw g\">gap</span> no chunk \u{b7} \
         <u class=\"ov o1\">overlap</u> repeated by the next chunk \u{b7} \
         <span class=\"chip\">\u{27f2} header / fence</span> \
         <span class=\"chip\">\u{2193} fence</span> added, not in the document \
         \u{b7} margin: #ordinal chunk_type tokens, chunk_path</p>\n",
    );
    if !page.failures.is_empty() {
        out.push_str("<ul class=\"fail\">");
        for line in page.failures {
            out.push_str("<li><code>");
            push_text(out, line);
            out.push_str("</code></li>");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</header>\n");
}

/// The files with their chunk counts per profile, linking to their sections.
fn files_table(out: &mut String, page: &Page<'_>) {
    out.push_str("<table class=\"sum\"><thead><tr><th>file</th><th>bytes</th>");
    for profile in page.profiles {
        out.push_str("<th>");
        push_text(out, &profile.title());
        out.push_str("</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
    for (n, file) in page.files.iter().enumerate() {
        let _ = write!(out, "<tr><td><a href=\"#f{n}\">");
        push_text(out, &file.path);
        let _ = write!(out, "</a></td><td class=\"n\">{}</td>", file.bytes);
        for run in &file.runs {
            match run {
                Ok(doc) => {
                    let _ = write!(out, "<td class=\"n\">{} chunks</td>", doc.chunks.len());
                }
                Err(_) => out.push_str("<td class=\"bad\">failed</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// One file: a heading, then a column per profile.
fn file_section(out: &mut String, page: &Page<'_>, n: usize, file: &FileReport) {
    let _ = write!(out, "<section class=\"file\" id=\"f{n}\"><h2>");
    push_text(out, &file.path);
    let _ = write!(
        out,
        " <span class=\"dim\">{} bytes</span></h2>\n<div class=\"cols\" style=\"--n:{}\">\n",
        file.bytes,
        page.profiles.len()
    );
    for (profile, run) in page.profiles.iter().zip(&file.runs) {
        out.push_str("<div class=\"col\"><div class=\"colhead\"><div class=\"ph\"><b>");
        push_text(out, &profile.title());
        out.push_str("</b> <span class=\"dim\">");
        match run {
            Ok(doc) => {
                push_text(out, &doc.chunker_version);
                out.push_str(" \u{b7} ");
                push_text(out, doc.tokenizer);
                let sizes = Sizes::of(&doc.chunks);
                let _ = write!(
                    out,
                    "</span></div><div class=\"stats\">{} chunk{} \u{b7} tokens min / median / max \
                     {} \u{b7} target {} \u{b7} hard max {}</div>",
                    doc.chunks.len(),
                    plural(doc.chunks.len()),
                    sizes.describe(),
                    profile.target,
                    profile.hard_max
                );
                out.push_str(&svg::histogram(
                    &sizes.tokens,
                    profile.target,
                    profile.hard_max,
                ));
                out.push_str("</div>\n<div class=\"doc\" data-profile=\"");
                push_attr(out, &profile.title());
                out.push_str("\">");
                let why = |c: &shared::Chunk| {
                    let key = (doc.profile.clone(), c.chunk_id.clone());
                    file.reasons.get(&key).cloned()
                };
                document(out, &Layout::new(doc), &why);
                out.push_str("</div></div>\n");
            }
            Err(line) => {
                out.push_str("</span></div></div>\n<div class=\"doc failed\" data-profile=\"");
                push_attr(out, &profile.title());
                out.push_str("\">");
                push_text(out, line);
                out.push_str("</div></div>\n");
            }
        }
    }
    out.push_str("</div></section>\n");
}

/// The document text: one element per gap and per chunk span, a chunk's
/// `title` (hover) saying why it ends where `why` knows.
fn document(out: &mut String, layout: &Layout<'_>, why: &dyn Fn(&shared::Chunk) -> Option<String>) {
    let mut marks = Marks {
        overlaps: &layout.overlaps,
        next: 0,
    };
    for item in &layout.items {
        match item {
            Item::Gap(range) => {
                out.push_str("<span class=\"g\">");
                marks.push(out, layout.text, range.clone());
                out.push_str("</span>");
            }
            Item::Chunk { index, range } => {
                let Some(view) = layout.chunks.get(*index) else {
                    continue;
                };
                let c = view.chunk;
                let _ = write!(
                    out,
                    "<span class=\"c k{}\" data-ordinal=\"{}\" data-type=\"{}\" data-tokens=\"{}\" \
                     data-bs=\"{}\" data-be=\"{}\" data-cs=\"{}\" data-ce=\"{}\"",
                    c.ordinal % COLOURS,
                    c.ordinal,
                    c.chunk_type.as_str(),
                    c.token_count,
                    c.byte_start,
                    c.byte_end,
                    c.char_start,
                    c.char_end,
                );
                if let Some(n) = c.embed_token_count {
                    let _ = write!(out, " data-etok=\"{n}\"");
                }
                if let Prefix::Overlap(units) = view.prefix {
                    let _ = write!(out, " data-ov=\"{units}\"");
                }
                attr(out, "path", &c.chunk_path);
                attr(out, "id", &c.chunk_id);
                attr(out, "g", c.granularity.as_str());
                if let Some(parent) = &c.parent_chunk_id {
                    attr(out, "parent", parent);
                }
                attr(out, "hash", &c.content_hash);
                if let Some(reason) = why(c) {
                    out.push_str(" title=\"");
                    push_attr(out, &format!("chunk {} ends: {reason}", c.ordinal));
                    out.push('"');
                }
                match view.embed_head {
                    Some("") => {}
                    Some(head) => attr(out, "e", head),
                    None => {
                        attr(out, "e", &c.embed_text);
                        out.push_str(" data-ef=\"1\"");
                    }
                }
                out.push('>');
                if let Prefix::Synthetic(text) = view.prefix {
                    let label = match c.chunk_type {
                        ChunkType::Table => "repeated table header",
                        ChunkType::Code => "re-opened code fence",
                        _ => "added prefix",
                    };
                    badge(out, "pre", label, text);
                }
                marks.push(out, layout.text, range.clone());
                if let Some(text) = view.suffix {
                    badge(out, "suf", "closing fence added", text);
                }
                out.push_str("</span>");
            }
        }
    }
}

/// An empty element whose label and text CSS draws: not document text.
fn badge(out: &mut String, class: &str, label: &str, text: &str) {
    let _ = write!(out, "<i class=\"{class}\" data-l=\"{label}\"");
    attr(out, "t", text);
    out.push_str("></i>");
}

/// Writes document text, wrapping the parts in overlap regions.
#[derive(Debug)]
struct Marks<'a> {
    overlaps: &'a [Overlap],
    /// The first region that may still lie ahead.
    next: usize,
}

impl Marks<'_> {
    fn push(&mut self, out: &mut String, text: &str, range: Range<usize>) {
        let mut at = range.start;
        while let Some(o) = self.overlaps.get(self.next) {
            if o.range.end <= at {
                self.next += 1;
                continue;
            }
            if o.range.start >= range.end {
                break;
            }
            let start = o.range.start.max(at);
            let end = o.range.end.min(range.end);
            push_text(out, &text[at..start]);
            let _ = write!(
                out,
                "<u class=\"ov o{}\" data-of=\"{}\">",
                o.of % COLOURS,
                o.of
            );
            push_text(out, &text[start..end]);
            out.push_str("</u>");
            at = end;
            if at == range.end {
                break;
            }
        }
        push_text(out, &text[at..range.end]);
    }
}

/// ` data-NAME="VALUE"`, escaped.
fn attr(out: &mut String, name: &str, value: &str) {
    out.push_str(" data-");
    out.push_str(name);
    out.push_str("=\"");
    push_attr(out, value);
    out.push('"');
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Appends `s` escaped for HTML text (`&`, `<`, `>`).
pub(super) fn push_text(out: &mut String, s: &str) {
    push_escaped(out, s, false);
}

/// Appends `s` escaped for a double-quoted attribute value.
pub(super) fn push_attr(out: &mut String, s: &str) {
    push_escaped(out, s, true);
}

fn push_escaped(out: &mut String, s: &str, quotes: bool) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quotes => "&quot;",
            _ => continue,
        };
        // ASCII bytes are always char boundaries.
        out.push_str(&s[last..i]);
        out.push_str(entity);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut out = String::new();
        push_text(&mut out, "a<script>&\"x\"</script>");
        assert_eq!(out, "a&lt;script&gt;&amp;\"x\"&lt;/script&gt;");
        out.clear();
        push_attr(&mut out, "\"><img src=x>é");
        assert_eq!(out, "&quot;&gt;&lt;img src=x&gt;é");
    }

    #[test]
    fn overlap_marks_split_at_item_boundaries() {
        let text = "aaaa bbbb cccc";
        let overlaps = [Overlap { range: 2..7, of: 1 }];
        let mut marks = Marks {
            overlaps: &overlaps,
            next: 0,
        };
        let mut out = String::new();
        marks.push(&mut out, text, 0..4);
        out.push('|');
        marks.push(&mut out, text, 4..10);
        out.push('|');
        marks.push(&mut out, text, 10..14);
        assert_eq!(
            out,
            "aa<u class=\"ov o1\" data-of=\"1\">aa</u>|<u class=\"ov o1\" data-of=\"1\"> bb</u>bb |cccc"
        );
    }
}
