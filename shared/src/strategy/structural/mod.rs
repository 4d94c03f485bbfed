//! The structural strategy (profiles spec-v1, enterprise-v1, docs-v1):
//! heading-aware packing of Markdown blocks under token budgets.

use crate::chunk::build::{build_chunks, BuildContext};
use crate::chunk::overlap::add_overlap;
use crate::chunk::pack::pack;
use crate::chunk::profile::Profile;
use crate::chunk::record::{Chunk, DocumentMeta};
use crate::error::ChunkError;
use crate::markdown::{Block, BlockKind};
use crate::normalize::NormalizedDocument;
use crate::strategy::Chunker;
use crate::tokens::DocumentTokens;

/// The document's title for breadcrumbs (seed 002 `fileTitle`): the
/// metadata title, else the first non-empty H1, else the file name without
/// its extension.
fn document_title(meta: &DocumentMeta, blocks: &[Block]) -> Option<String> {
    let non_empty = |t: &&String| !t.trim().is_empty();
    meta.title
        .as_ref()
        .filter(non_empty)
        .cloned()
        .or_else(|| {
            blocks
                .iter()
                .find(|b| b.kind == BlockKind::Heading { level: 1 } && !b.heading_text.is_empty())
                .map(|b| b.heading_text.clone())
        })
        .or_else(|| {
            let path = meta.file_path.as_deref()?;
            let name = path.rsplit(['/', '\\']).next()?;
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            (!stem.is_empty()).then(|| stem.to_owned())
        })
}

/// Tokens kept free under the hard max for a closing fence line (`\n` plus
/// up to three spaces and a fence: at most four tokens in cl100k/o200k).
const FENCE_RESERVE: usize = 4;

/// Heading-aware packing of Markdown blocks under token budgets (SPEC 3.3-3.5).
#[derive(Debug, Clone, Copy, Default)]
pub struct Structural;

impl Chunker for Structural {
    fn name(&self) -> &'static str {
        "structural"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn chunk(
        &self,
        doc: &NormalizedDocument,
        blocks: &[Block],
        tokens: &DocumentTokens<'_>,
        meta: &DocumentMeta,
        profile: &Profile,
    ) -> Result<Vec<Chunk>, ChunkError> {
        let text = doc.text.as_str();
        // Packing keeps a few tokens below the hard max in reserve for the
        // closing fence that a chunk cut through a nested fence receives.
        let mut packing = profile.clone();
        packing.hard_max_tokens = profile.hard_max_tokens.saturating_sub(FENCE_RESERVE);
        packing.soft_max_tokens = profile.soft_max_tokens.min(packing.hard_max_tokens);
        packing.target_tokens = profile.target_tokens.min(packing.soft_max_tokens);
        let mut pieces = pack(text, blocks, tokens, &packing);
        add_overlap(&mut pieces, tokens, &packing);
        let title = document_title(meta, blocks);
        let ctx = BuildContext {
            tokens,
            profile,
            meta,
            chunker_version: format!("{}:{}", self.name(), self.version()),
            title,
        };
        Ok(build_chunks(pieces, &ctx))
    }
}

#[cfg(test)]
mod tests {
    //! Behaviour of the packing rules, each observable with a small profile.
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report

    use super::*;
    use crate::chunk::record::ChunkType;
    use crate::normalize::normalize;
    use crate::strategy::{chunk_document, Registry};

    fn profile(target: usize, soft: usize, hard: usize, min: usize, overlap: &str) -> Profile {
        Profile::from_toml(&format!(
            r#"name = "test"
strategy = "structural"
tokenizer = "cl100k_base"
granularity = "section"
target_tokens = {target}
soft_max_tokens = {soft}
hard_max_tokens = {hard}
min_tokens = {min}
overlap = {overlap}
id_formula = "seed000"
breadcrumb_mode = "conditional""#
        ))
        .unwrap()
    }

    fn chunks(md: &str, p: &Profile) -> Vec<Chunk> {
        let doc = normalize(md.as_bytes()).unwrap();
        let meta = DocumentMeta {
            tenant_id: "t".into(),
            document_id: "d".into(),
            source_version_id: "v".into(),
            ..DocumentMeta::default()
        };
        chunk_document(&Registry::builtin(), &doc, &meta, p)
            .unwrap()
            .chunks
    }

    fn no_overlap() -> Profile {
        profile(40, 60, 80, 0, "{}")
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
        let md = "Steps:\n\n- one\n- two\n\nAfter the list.\n\n1. first\n\n* bullet\n";
        let c = chunks(md, &no_overlap());
        let types: Vec<_> = c.iter().map(|c| c.chunk_type).collect();
        assert_eq!(types, [ChunkType::Mixed, ChunkType::Mixed, ChunkType::List]);
        assert!(c[0].chunk_text.ends_with("- two"));
        assert_eq!(c[1].chunk_text, "After the list.\n\n1. first");
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
        let p = profile(40, 60, 80, 0, "{ tokens = 12, sentence_aligned = true }");
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
        let p = profile(40, 60, 80, 0, "{ tokens = 12, sentence_aligned = true }");
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
