//! The structural strategy (profiles spec-v1, enterprise-v1, docs-v1):
//! heading-aware packing of Markdown blocks under token budgets (docs/contract.md#blocks-and-boundaries,
//! 3.4). It is the reference the other strategies are measured against.
//!
//! - `pack.rs`: blocks to planned pieces (headings travel with content,
//!   tables and code alone, short lists merge, prose packs to the soft max);
//! - `overlap.rs`: docs/contract.md#size-policy overlap between prose pieces of one section;
//! - splitting of oversized units and record building come from the toolkit
//!   ([`crate::chunk`]).

mod overlap;
mod pack;
mod params;
mod stubs;

use std::sync::Arc;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::ids::{fence_of, fence_run_lines};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, PrefixRule, Rules};
use crate::tokens::TokenCounter;

use overlap::add_overlap;
use pack::pack;
pub use params::{Overlap, StructuralParams};
use stubs::merge_stubs;

impl StructuralParams {
    /// The structural parameters of `profile`, if it is a structural one.
    pub fn of(profile: &crate::profile::model::Profile) -> Option<&Self> {
        profile
            .chunker()
            .as_any()
            .downcast_ref::<StructuralChunker>()
            .map(|c| &c.params)
    }
}

/// Tokens kept free under the hard max for the closing fence line a chunk
/// cut through a nested fence receives (`\n`, up to three spaces and a
/// backtick fence: at most four tokens in cl100k/o200k).
const FENCE_RESERVE: usize = 4;

/// The reserve `text` needs: [`FENCE_RESERVE`], or more where the document
/// has fences whose closing line takes more tokens (an indented tilde fence
/// `\n   ~~~~` is five in cl100k).
fn fence_reserve(text: &str, counter: &dyn TokenCounter) -> usize {
    let mut seen: Vec<(u8, usize, usize)> = Vec::new();
    let mut reserve = FENCE_RESERVE;
    for line in fence_run_lines(text) {
        let Some((ch, len)) = fence_of(line) else {
            continue;
        };
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        if seen.contains(&(ch, len, indent)) {
            continue;
        }
        seen.push((ch, len, indent));
        let close = format!(
            "\n{}{}",
            " ".repeat(indent),
            (ch as char).to_string().repeat(len)
        );
        reserve = reserve.max(counter.count(&close));
    }
    reserve
}

/// Heading-aware packing of Markdown blocks under token budgets (docs/contract.md#blocks-and-boundaries, #size-policy and #chunk-record).
#[derive(Debug, Clone, Copy, Default)]
pub struct Structural;

impl Strategy for Structural {
    fn name(&self) -> &'static str {
        "structural"
    }

    /// 1.1.0: the closing-fence reserve is sized per document (an indented
    /// tilde fence's closer took five tokens and pushed a chunk one over
    /// the hard max), and an oversized list no longer carries pending
    /// headings that fill half the budget (a 1,700-token setext heading
    /// went over it); both found by the property tests under other seeds.
    /// 1.2.0: the breadcrumb title is an H1 before substantial content only
    /// (issue 17: a late setext caption had become the title); overlap
    /// copies at most half of the previous chunk; a stub (under 8 tokens)
    /// joins a neighbour.
    /// 1.3.0: `conditional` breadcrumbs follow the per-chunk file format exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    fn version(&self) -> &'static str {
        "1.3.0"
    }

    fn summary(&self) -> &'static str {
        "heading-aware packing of Markdown blocks: tables and code alone, sentence-aligned overlap"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &[
            "target_tokens",
            "soft_max_tokens",
            "hard_max_tokens",
            "min_tokens",
            "overlap",
        ]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/spec-v1.toml"),
            include_str!("profiles/enterprise-v1.toml"),
            include_str!("profiles/docs-v1.toml"),
        ]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        Ok(Arc::new(StructuralChunker {
            params: StructuralParams::parse(params)?,
        }))
    }
}

/// The structural strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct StructuralChunker {
    params: StructuralParams,
}

impl StructuralChunker {
    /// A chunker with parameters given in code.
    pub fn new(params: StructuralParams) -> Self {
        Self { params }
    }

    /// The planned pieces of a document (packed, stubs merged, overlap
    /// added), before records are built: for strategies that chunk the rest
    /// of a document structurally (`table`).
    pub(crate) fn plan(&self, input: &ChunkInput<'_>) -> Vec<crate::chunk::piece::Piece> {
        let text = input.doc.text.as_str();
        let profile = &self.params;
        // Packing keeps a few tokens below the hard max in reserve for the
        // closing fence that a chunk cut through a nested fence receives.
        let reserve = fence_reserve(text, &input.tokens.counter());
        let mut packing = profile.clone();
        packing.hard_max_tokens = profile.hard_max_tokens.saturating_sub(reserve);
        packing.soft_max_tokens = profile.soft_max_tokens.min(packing.hard_max_tokens);
        packing.target_tokens = profile.target_tokens.min(packing.soft_max_tokens);
        let pieces = pack(text, input.blocks, input.tokens, &packing);
        let mut pieces = merge_stubs(pieces, input.tokens, packing.hard_max_tokens);
        add_overlap(&mut pieces, input.tokens, &packing);
        pieces
    }
}

impl Chunker for StructuralChunker {
    fn limits(&self) -> Limits {
        let p = &self.params;
        Limits {
            target_tokens: p.target_tokens,
            hard_max_tokens: p.hard_max_tokens,
            min_tokens: p.min_tokens,
            overlap_tokens: match p.overlap {
                Overlap::None => 0,
                Overlap::Tokens { tokens, .. } => tokens,
                Overlap::Sentences(_) => p.hard_max_tokens / 2,
            },
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            prefixes: PrefixRule::Typed,
            fences_closed: true,
            table_header: true,
            headings_path: true,
            min_tokens: Some(self.params.min_tokens),
            headings_as_metadata: false,
            verbatim_text: true,
        }
    }

    fn params(&self) -> toml::Table {
        let p = &self.params;
        let mut t = toml::Table::new();
        t.insert("target_tokens".into(), (p.target_tokens as i64).into());
        if !p.close_at_target {
            t.insert("soft_max_tokens".into(), (p.soft_max_tokens as i64).into());
        }
        t.insert("hard_max_tokens".into(), (p.hard_max_tokens as i64).into());
        t.insert("min_tokens".into(), (p.min_tokens as i64).into());
        if !p.overlap_spec.is_empty() {
            t.insert("overlap".into(), p.overlap_spec.clone().into());
        }
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let profile = &self.params;
        let pieces = self.plan(input);
        let mut ctx = BuildContext::new(input, document_title(input.meta, input.blocks));
        if matches!(profile.overlap, Overlap::Sentences(_)) {
            // "Short" counts the sentences' actual tokens.
            ctx.overlap_tokens = None;
        }
        Ok(build_chunks(pieces, &ctx))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    //! Behaviour of the packing rules, each observable with a small profile.
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report

    use super::*;
    use crate::chunk::record::{ChunkType, DocumentMeta};
    use crate::engine::chunk_document;
    use crate::normalize::normalize;
    use crate::profile::model::Profile;

    fn profile(target: usize, soft: usize, hard: usize, min: usize, overlap: Overlap) -> Profile {
        let params = StructuralParams::new(target, Some(soft), hard, min, overlap);
        Profile::with_chunker(
            "test",
            &Structural,
            Arc::new(StructuralChunker::new(params)),
        )
    }

    fn tokens_overlap(tokens: usize) -> Overlap {
        Overlap::Tokens {
            tokens,
            sentence_aligned: true,
        }
    }

    fn chunks(md: &str, p: &Profile) -> Vec<Chunk> {
        let doc = normalize(md.as_bytes()).unwrap();
        let meta = DocumentMeta {
            tenant_id: "t".into(),
            document_id: "d".into(),
            source_version_id: "v".into(),
            ..DocumentMeta::default()
        };
        chunk_document(&doc, &meta, p, None).unwrap().chunks
    }

    fn no_overlap() -> Profile {
        profile(40, 60, 80, 0, Overlap::None)
    }

    fn sentences(n: usize, word: &str) -> String {
        (0..n)
            .map(|i| format!("The {word} number {i} is here. "))
            .collect()
    }

    #[test]
    fn a_heading_travels_with_the_next_chunk_and_never_alone() {
        let c = chunks(
            "# A\n\n## B\n\nText under B.\n\n## C\n\nText under C.\n",
            &no_overlap(),
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].chunk_text, "# A\n\n## B\n\nText under B.");
        assert_eq!(c[0].headings_path, ["A", "B"]);
        assert_eq!(c[1].chunk_text, "## C\n\nText under C.");
        assert_eq!(c[1].headings_path, ["A", "C"]);
    }

    #[test]
    fn tables_and_code_never_share_a_chunk() {
        let md = "Intro text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nMiddle.\n\n```\ncode\n```\n\nOutro.\n";
        let types: Vec<_> = chunks(md, &no_overlap())
            .iter()
            .map(|c| c.chunk_type)
            .collect();
        use ChunkType::*;
        assert_eq!(types, [Paragraph, Table, Paragraph, Code, Paragraph]);
    }

    #[test]
    fn a_short_list_after_prose_merges_and_the_list_exit_starts_a_new_chunk() {
        let md = "Follow these steps to set up the project:\n\n- one\n- two\n\nAfter the list come the numbered steps.\n\n1. first\n\n* a bullet long enough not to be a stub\n";
        let c = chunks(md, &no_overlap());
        let types: Vec<_> = c.iter().map(|c| c.chunk_type).collect();
        assert_eq!(types, [ChunkType::Mixed, ChunkType::Mixed, ChunkType::List]);
        assert!(c[0].chunk_text.ends_with("- two"));
        assert_eq!(
            c[1].chunk_text,
            "After the list come the numbered steps.\n\n1. first"
        );
    }

    #[test]
    fn an_oversized_table_repeats_its_header_in_every_piece() {
        let rows: String = (0..60)
            .map(|i| format!("| row {i} | value {i} |\n"))
            .collect();
        let md = format!("# T\n\n| key | value |\n|-----|-------|\n{rows}");
        let c = chunks(&md, &no_overlap());
        assert!(c.len() > 3, "{}", c.len());
        for (i, ch) in c.iter().enumerate() {
            assert_eq!(ch.chunk_type, ChunkType::Table);
            assert!(ch.token_count <= 80);
            let body = if i == 0 {
                ch.chunk_text.strip_prefix("# T\n\n").unwrap()
            } else {
                &ch.chunk_text
            };
            assert!(
                body.starts_with("| key | value |\n|-----|-------|\n| row"),
                "{body}"
            );
            if i > 0 {
                assert_eq!(
                    ch.overlap_prefix_chars as usize,
                    "| key | value |\n|-----|-------|\n".len()
                );
                assert!(
                    ch.chunk_path.starts_with("T / table[1] rows "),
                    "{}",
                    ch.chunk_path
                );
            }
        }
    }

    #[test]
    fn an_oversized_code_block_is_split_between_lines_and_re_fenced() {
        let body: String = (0..80).map(|i| format!("let x{i} = {i};\n")).collect();
        let md = format!("```rust\n{body}```\n");
        let c = chunks(&md, &no_overlap());
        assert!(c.len() > 3);
        for (i, ch) in c.iter().enumerate() {
            assert_eq!(ch.chunk_type, ChunkType::Code);
            assert!(ch.chunk_text.starts_with("```rust\n"), "{}", ch.chunk_text);
            assert!(ch.chunk_text.ends_with("\n```"), "{}", ch.chunk_text);
            let reopened = if i == 0 { 0 } else { "```rust\n".len() as u32 };
            assert_eq!(ch.overlap_prefix_chars, reopened);
            let closed = if i + 1 == c.len() { 0 } else { 4 };
            assert_eq!(ch.closing_suffix_chars, closed);
        }
    }

    #[test]
    fn an_oversized_list_splits_between_top_level_items_keeping_nested_items() {
        let items: String = (0..30)
            .map(|i| format!("- item {i} with some words\n  - nested {i}\n"))
            .collect();
        let c = chunks(&items, &no_overlap());
        assert!(c.len() > 2);
        for ch in &c {
            assert_eq!(ch.chunk_type, ChunkType::List);
            assert!(ch.chunk_text.starts_with("- item"), "{}", ch.chunk_text);
            assert!(ch
                .chunk_text
                .trim_end()
                .lines()
                .last()
                .unwrap()
                .starts_with("  - nested"));
            assert_eq!(ch.overlap_prefix_chars, 0);
        }
    }

    #[test]
    fn long_prose_splits_at_sentences_and_overlaps_at_a_sentence_start() {
        let p = profile(40, 60, 80, 0, tokens_overlap(12));
        let c = chunks(&sentences(40, "sentence"), &p);
        assert!(c.len() > 3);
        for (i, ch) in c.iter().enumerate() {
            assert!(ch.token_count <= 80);
            assert!(
                ch.chunk_text.starts_with("The sentence number"),
                "{}",
                ch.chunk_text
            );
            assert_eq!(ch.overlap_prefix_chars > 0, i > 0);
        }
    }

    #[test]
    fn overlap_never_crosses_a_heading() {
        let p = profile(40, 60, 80, 0, tokens_overlap(12));
        let md = format!(
            "# One\n\n{}\n\n# Two\n\n{}",
            sentences(3, "a"),
            sentences(3, "b")
        );
        let c = chunks(&md, &p);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].overlap_prefix_chars, 0);
    }

    #[test]
    fn a_sentence_without_punctuation_splits_into_token_windows() {
        let words = "word ".repeat(400);
        let c = chunks(&words, &no_overlap());
        assert!(c.len() >= 5);
        assert!(c
            .iter()
            .all(|ch| ch.token_count <= 80 && ch.token_count >= 20));
    }

    #[test]
    fn a_small_chunk_fills_up_from_a_long_next_paragraph() {
        // Without filling, "Short." would stand alone before a long paragraph.
        let md = format!("Short.\n\n{}", sentences(12, "long"));
        let c = chunks(&md, &no_overlap());
        assert!(
            c[0].token_count >= 30,
            "first chunk has {} tokens",
            c[0].token_count
        );
    }

    #[test]
    fn a_stub_joins_a_neighbour_but_never_crosses_a_heading_or_a_break() {
        // Issue 17: `+ k` (an equation fragment read as a list) after a
        // chunk near the hard max stood alone; an HTML comment did too.
        let md = format!("{}\n\n+ k\n", sentences(8, "body"));
        let c = chunks(&md, &no_overlap());
        assert!(c.iter().all(|c| c.token_count >= 8), "{c:#?}");
        assert!(c.last().unwrap().chunk_text.ends_with("+ k"));
        let md = format!("<!-- refs -->\n\n{}", sentences(3, "ref"));
        let c = chunks(&md, &no_overlap());
        assert_eq!(c.len(), 1);
        assert!(c[0].chunk_text.starts_with("<!-- refs -->"));
        // A short section keeps its chunk; a break stays a boundary.
        let c = chunks("# A\n\nSome text under A here.\n\n## B\n\nTiny.\n", &no_overlap());
        assert_eq!(c.last().unwrap().chunk_text, "## B\n\nTiny.");
        let c = chunks("Long enough text before.\n\n***\n\nTiny.\n", &no_overlap());
        assert_eq!(c.last().unwrap().chunk_text, "Tiny.");
    }

    #[test]
    fn thematic_breaks_and_front_matter_are_not_content() {
        let c = chunks(
            "---\ntitle: x\n---\nBefore.\n\n***\n\nAfter.\n",
            &no_overlap(),
        );
        let texts: Vec<_> = c.iter().map(|c| c.chunk_text.as_str()).collect();
        assert_eq!(texts, ["Before.", "After."]);
    }

    #[test]
    fn the_title_is_the_metadata_title_else_the_first_h1_else_the_file_name() {
        let title = |meta_title: Option<&str>, md: &str| {
            let doc = normalize(md.as_bytes()).unwrap();
            let meta = DocumentMeta {
                title: meta_title.map(str::to_owned),
                file_path: Some("docs/setup.guide.md".into()),
                ..DocumentMeta::default()
            };
            document_title(&meta, &crate::markdown::parse_blocks(&doc.text))
        };
        assert_eq!(title(Some("Given"), "# H1\n").as_deref(), Some("Given"));
        assert_eq!(
            title(None, "## H2\n\n# First *H1*\n").as_deref(),
            Some("First H1")
        );
        assert_eq!(
            title(Some(" "), "#\n\ntext\n").as_deref(),
            Some("setup.guide")
        );
        // Tables get the full breadcrumb, which starts with the title.
        let c = chunks("| a | b |\n|---|---|\n| 1 | 2 |\n", &no_overlap());
        assert_eq!(
            c[0].embed_text, c[0].chunk_text,
            "no title, no headings: nothing to prefix"
        );
    }

    #[test]
    fn empty_and_whitespace_documents_give_no_chunks() {
        assert!(chunks("", &no_overlap()).is_empty());
        assert!(chunks(" \n\n\t\n", &no_overlap()).is_empty());
    }
}
