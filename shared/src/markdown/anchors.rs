//! Heading anchors (the per-chunk file format `headerSlugs` / `sectionSlug`).
//!
//! Slugs are computed as GitHub computes heading anchors, from the heading's
//! plain text ([`Block::heading_text`]): lowercase; every character that is
//! not a letter, a combining mark, a decimal digit, a letter number,
//! connector punctuation (`_`), `-` or a space is dropped (punctuation,
//! symbols and emoji go); each space becomes `-`. A slug already used in the
//! document gets `-1`, `-2`, ... as `github-slugger` does. A heading with an
//! explicit `{#id}` attribute is anchored by that id as written.

use std::collections::HashMap;
use std::sync::OnceLock;

use pulldown_cmark::{Event, Parser, Tag};
use regex::Regex;

use crate::markdown::parse::parser_options;
use crate::markdown::{Block, BlockKind};

/// One top-level heading of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Index of the heading block in the document's blocks.
    pub block: usize,
    /// Heading level, 1-6.
    pub level: u8,
    /// The heading's plain text.
    pub text: String,
    /// Its anchor id.
    pub slug: String,
}

fn dropped() -> &'static Option<Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"[^\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\- ]").ok())
}

/// GitHub's anchor for `text`, before duplicates are numbered.
pub fn github_slug(text: &str) -> String {
    let lower = text.to_lowercase();
    let kept = match dropped() {
        Some(re) => re.replace_all(&lower, "").into_owned(),
        // The pattern is a constant that compiles; keep letters and digits
        // should it ever not.
        None => lower
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .collect(),
    };
    kept.replace(' ', "-")
}

/// Numbers repeated slugs within one document (`intro`, `intro-1`, ...),
/// exactly as `github-slugger` does.
#[derive(Debug, Default)]
pub struct Slugger {
    occurrences: HashMap<String, usize>,
}

impl Slugger {
    /// The next unique slug for `text`.
    pub fn slug(&mut self, text: &str) -> String {
        let original = github_slug(text);
        let mut result = original.clone();
        while self.occurrences.contains_key(&result) {
            let n = self.occurrences.entry(original.clone()).or_insert(0);
            *n += 1;
            result = format!("{original}-{n}");
        }
        self.occurrences.insert(result.clone(), 0);
        result
    }
}

/// The explicit `{#id}` of the heading at `range`, if it has one.
fn explicit_id(text: &str) -> Option<String> {
    Parser::new_ext(text, parser_options()).find_map(|e| match e {
        Event::Start(Tag::Heading { id, .. }) => id.map(|id| id.to_string()),
        _ => None,
    })
}

/// The anchors of the document's top-level headings, in order.
pub fn heading_anchors(text: &str, blocks: &[Block]) -> Vec<Anchor> {
    let mut slugger = Slugger::default();
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let BlockKind::Heading { level } = b.kind else {
            continue;
        };
        let source = text.get(b.range.clone()).unwrap_or("");
        let slug = match explicit_id(source).filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => slugger.slug(&b.heading_text),
        };
        out.push(Anchor {
            block: i,
            level,
            text: b.heading_text.clone(),
            slug,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::parse_blocks;

    /// Expected values are `github-slugger` 2.0.0's output (the package
    /// GitHub-compatible renderers use), one slugger per table.
    #[test]
    fn slugs_match_github_slugger_on_tricky_headings() {
        let cases = [
            ("🚀 Launch", "-launch"),
            ("Привет, мир!", "привет-мир"),
            ("Use foo() now", "use-foo-now"),
            ("Intro", "intro"),
            ("Intro", "intro-1"),
            ("Intro-1", "intro-1-1"),
            ("Intro", "intro-2"),
            ("C++ & Rust", "c--rust"),
            ("Ünïcödé Çase", "ünïcödé-çase"),
            ("x²", "x"),
            ("a_b", "a_b"),
            ("Ελληνικά", "ελληνικά"),
            ("日本語の見出し", "日本語の見出し"),
            ("Émoji 👍🏽 test", "émoji--test"),
            ("end.", "end"),
            ("1. Step one", "1-step-one"),
            ("what?!", "what"),
        ];
        let mut slugger = Slugger::default();
        for (text, want) in cases {
            assert_eq!(slugger.slug(text), want, "{text:?}");
        }
    }

    #[test]
    fn explicit_ids_win_and_code_spans_count_as_their_text() {
        let text = "# Setup {#install}\n\n## Use `cfg.toml` file\n\n## Setup\n\n# Setup\n";
        let blocks = parse_blocks(text);
        let anchors = heading_anchors(text, &blocks);
        let slugs: Vec<&str> = anchors.iter().map(|a| a.slug.as_str()).collect();
        assert_eq!(slugs, ["install", "use-cfgtoml-file", "setup", "setup-1"]);
        let levels: Vec<u8> = anchors.iter().map(|a| a.level).collect();
        assert_eq!(levels, [1, 2, 2, 1]);
        assert_eq!(anchors[0].text, "Setup");
    }
}
