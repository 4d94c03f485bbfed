//! `MarkdownHeaderTextSplitter.split_text` and `aggregate_lines_to_chunks`
//! (langchain-text-splitters 1.1.3, `markdown.py`), line for line, with the
//! source lines each output came from.

use std::ops::Range;

use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

use crate::strategy::pystr::py_isspace;

/// One header kind to split on: `#`-style or a custom pattern such as
/// `**Title**` (LangChain's `custom_header_patterns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The separator (`"##"`, `"**"`).
    pub sep: String,
    /// The metadata key of its heading text (`"Header 2"`).
    pub name: String,
    /// The level of a custom pattern (`**Title**`, LangChain's
    /// `custom_header_patterns`); a standard separator's level is its `#`s.
    pub custom_level: Option<usize>,
}

impl Header {
    /// The level that pops shallower-or-equal headers off the stack.
    pub fn level(&self) -> usize {
        self.custom_level
            .unwrap_or_else(|| self.sep.matches('#').count())
    }
}

/// How lines become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Leave header lines out of the text (LangChain's default).
    pub strip_headers: bool,
    /// One output per block of lines instead of one per section.
    pub return_each_line: bool,
    /// Keep the indentation of lines inside code fences (LangChain strips it).
    pub keep_code_indentation: bool,
}

/// One output of the splitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// LangChain's `page_content`.
    pub text: String,
    /// LangChain's `metadata`: header name -> heading text, in insertion order.
    pub metadata: Vec<(String, String)>,
    /// The source lines its content came from: byte range from the start of
    /// the first to the end of the last (header lines it strips excluded).
    pub lines: Range<usize>,
}

/// Python's `str.isprintable` for one character: not in a C* or Z*
/// general category, except the ASCII space.
fn py_isprintable(c: char) -> bool {
    if c.is_ascii() {
        // The table lookup below is a binary search: most text is ASCII.
        return matches!(c, ' '..='~');
    }
    !matches!(
            c.general_category_group(),
            GeneralCategoryGroup::Other | GeneralCategoryGroup::Separator
        )
}

/// `"".join(filter(str.isprintable, s))`.
fn printable(s: &str) -> String {
    s.chars().filter(|&c| py_isprintable(c)).collect()
}

/// LangChain's `_is_custom_header`: `^SEP(?!SEP)(.+?)(?<!SEP)SEP$` with a
/// content that is not only separator characters.
fn is_custom_header(line: &str, sep: &str) -> bool {
    if sep.is_empty() || line.len() < 2 * sep.len() + 1 {
        return false;
    }
    let (Some(rest), Some(head)) = (line.strip_prefix(sep), line.strip_suffix(sep)) else {
        return false;
    };
    if rest.starts_with(sep) || head.ends_with(sep) {
        return false;
    }
    let Some(middle) = line.get(sep.len()..line.len() - sep.len()) else {
        return false;
    };
    // `.` does not match a newline; stripped lines hold none but `\r`s
    // inside a line are not newlines to `re` either.
    if middle.is_empty() || middle.contains('\n') {
        return false;
    }
    let content = middle.trim_matches(py_isspace);
    !content.is_empty() && !content.chars().filter(|&c| c != ' ').all(|c| sep.contains(c))
}

/// The running metadata: a Python dict's insertion order and equality.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Meta(Vec<(String, String)>);

impl Meta {
    fn insert(&mut self, k: &str, v: &str) {
        match self.0.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.to_owned(),
            None => self.0.push((k.to_owned(), v.to_owned())),
        }
    }

    fn remove(&mut self, k: &str) {
        self.0.retain(|(key, _)| key != k);
    }

    /// Dict equality: the same pairs in any order.
    fn same(&self, other: &Meta) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|p| other.0.contains(p))
    }
}

/// A block of content lines with the metadata in force.
struct Block {
    lines: Vec<String>,
    meta: Meta,
    span: Range<usize>,
}

/// Collects content lines and flushes them as blocks.
#[derive(Default)]
struct Current {
    lines: Vec<String>,
    span: Option<Range<usize>>,
}

impl Current {
    fn push(&mut self, line: String, span: &Range<usize>) {
        self.lines.push(line);
        self.span = Some(match self.span.take() {
            Some(s) => s.start..span.end,
            None => span.clone(),
        });
    }

    fn flush(&mut self, meta: &Meta, out: &mut Vec<Block>) {
        if self.lines.is_empty() {
            return;
        }
        let span = self.span.take().unwrap_or(0..0);
        out.push(Block {
            lines: std::mem::take(&mut self.lines),
            meta: meta.clone(),
            span,
        });
    }
}

/// The text of a line inside a code fence: stripped as LangChain does, or
/// with its indentation kept.
fn code_line(line: &str, stripped: String, keep_indentation: bool) -> String {
    if !keep_indentation || stripped.is_empty() {
        return stripped;
    }
    let indent_end = line.find(|c: char| !py_isspace(c)).unwrap_or(line.len());
    let mut kept = line[..indent_end].to_owned();
    kept.push_str(&stripped);
    kept
}

/// `split_text(text)`: the sections of `text` under `headers` (sorted by
/// separator length, longest first, as LangChain sorts them).
pub fn split(text: &str, headers: &[Header], opts: Options) -> Vec<Section> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut current = Current::default();
    let mut current_meta = Meta::default();
    let mut initial_meta = Meta::default();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut in_code = false;
    let mut fence = "";
    let mut at = 0usize;
    for line in text.split('\n') {
        let span = at..at + line.len();
        at = span.end + 1;
        let stripped = printable(line.trim_matches(py_isspace));
        if !in_code {
            if stripped.starts_with("```") && stripped.matches("```").count() == 1 {
                in_code = true;
                fence = "```";
            } else if stripped.starts_with("~~~") {
                in_code = true;
                fence = "~~~";
            }
        } else if stripped.starts_with(fence) {
            in_code = false;
            fence = "";
        }
        if in_code {
            current.push(code_line(line, stripped, opts.keep_code_indentation), &span);
            continue;
        }
        let header = headers.iter().find_map(|h| {
            let standard = stripped.starts_with(h.sep.as_str())
                && (stripped.len() == h.sep.len()
                    || stripped.as_bytes().get(h.sep.len()) == Some(&b' '));
            let custom = h.custom_level.is_some() && is_custom_header(&stripped, &h.sep);
            (standard || custom).then_some((h, custom))
        });
        match header {
            Some((h, custom)) => {
                let level = h.level();
                while stack.last().is_some_and(|(l, _)| *l >= level) {
                    if let Some((_, name)) = stack.pop() {
                        initial_meta.remove(&name);
                    }
                }
                let data = if custom {
                    stripped
                        .get(h.sep.len()..stripped.len() - h.sep.len())
                        .unwrap_or_default()
                } else {
                    stripped.get(h.sep.len()..).unwrap_or_default()
                };
                stack.push((level, h.name.clone()));
                initial_meta.insert(&h.name, data.trim_matches(py_isspace));
                current.flush(&current_meta, &mut blocks);
                if !opts.strip_headers {
                    current.push(stripped, &span);
                }
            }
            None if !stripped.is_empty() => current.push(stripped, &span),
            None => current.flush(&current_meta, &mut blocks),
        }
        current_meta = initial_meta.clone();
    }
    current.flush(&current_meta, &mut blocks);
    let lines = blocks.into_iter().map(|b| Section {
        text: b.lines.join("\n"),
        metadata: b.meta.0,
        lines: b.span,
    });
    if opts.return_each_line {
        return lines.collect();
    }
    aggregate(lines, opts.strip_headers)
}

/// `aggregate_lines_to_chunks`: consecutive blocks with equal metadata are
/// joined with `"  \n"`; with headers kept, a header alone is joined with
/// the deeper section after it.
fn aggregate(lines: impl Iterator<Item = Section>, strip_headers: bool) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for line in lines {
        let meta = Meta(line.metadata.clone());
        let Some(last) = out.last_mut() else {
            out.push(line);
            continue;
        };
        let last_meta = Meta(last.metadata.clone());
        let header_alone = || {
            last.text
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.starts_with('#'))
        };
        if last_meta.same(&meta) {
            last.text.push_str("  \n");
            last.text.push_str(&line.text);
            last.lines.end = line.lines.end;
        } else if last_meta.0.len() < meta.0.len() && header_alone() && !strip_headers {
            last.text.push_str("  \n");
            last.text.push_str(&line.text);
            last.lines.end = line.lines.end;
            last.metadata = line.metadata;
        } else {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(sep: &str, name: &str) -> Header {
        Header {
            sep: sep.into(),
            name: name.into(),
            custom_level: None,
        }
    }

    fn texts(s: &[Section]) -> Vec<&str> {
        s.iter().map(|s| s.text.as_str()).collect()
    }

    const OPTS: Options = Options {
        strip_headers: true,
        return_each_line: false,
        keep_code_indentation: false,
    };

    #[test]
    fn sections_carry_their_headers_and_blocks_join_with_a_hard_break() {
        let headers = [h("##", "H2"), h("#", "H1")];
        let text = "# A\n\npara one\n  para two\n\nnext\n## B ##\ntext\n#hashtag\n####  deep";
        let s = split(text, &headers, OPTS);
        assert_eq!(texts(&s), ["para one\npara two  \nnext", "text\n#hashtag\n####  deep"]);
        assert_eq!(s[0].metadata, [("H1".to_owned(), "A".to_owned())]);
        assert_eq!(
            s[1].metadata,
            [("H1".to_owned(), "A".to_owned()), ("H2".to_owned(), "B ##".to_owned())]
        );
        assert_eq!(&text[s[0].lines.clone()], "para one\n  para two\n\nnext");
        let kept = split(text, &headers, Options { strip_headers: false, ..OPTS });
        assert_eq!(
            texts(&kept),
            ["# A  \npara one\npara two  \nnext", "## B ##\ntext\n#hashtag\n####  deep"]
        );
    }

    #[test]
    fn code_fences_hide_headers_and_may_keep_their_indentation() {
        let headers = [h("#", "H1")];
        let text = "# T\n```py\n# not a header\n    x = 1\n\n```\nafter\u{a0}nbsp\r\n";
        let s = split(text, &headers, OPTS);
        assert_eq!(texts(&s), ["```py\n# not a header\nx = 1\n\n```\nafternbsp"]);
        let kept = split(text, &headers, Options { keep_code_indentation: true, ..OPTS });
        assert_eq!(texts(&kept), ["```py\n# not a header\n    x = 1\n\n```\nafternbsp"]);
    }

    #[test]
    fn custom_headers_match_whole_lines_only() {
        assert!(is_custom_header("**Title**", "**"));
        assert!(is_custom_header("***Title**", "**"));
        assert!(!is_custom_header("****Title**", "**"));
        assert!(is_custom_header("**Title***", "**"));
        assert!(!is_custom_header("** * **", "**"));
        assert!(!is_custom_header("****", "**"));
        assert!(!is_custom_header("**a** b", "**"));
    }

    #[test]
    fn nothing_comes_of_empty_or_header_only_text() {
        let headers = [h("#", "H1")];
        assert!(split("", &headers, OPTS).is_empty());
        assert!(split(" \n\t\n", &headers, OPTS).is_empty());
        assert!(split("# a\n# b", &headers, OPTS).is_empty());
    }
}
