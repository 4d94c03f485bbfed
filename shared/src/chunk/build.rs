//! From planned pieces to chunk records: text, offsets, token counts,
//! paths, breadcrumbs and ids (docs/contract.md#ids).

use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::{Chunk, ChunkType, DocumentMeta};
use crate::chunk::window::fit_pieces;
use crate::embed::EmbedTokenizer;
use crate::ids::unclosed_fence;
use crate::markdown::{Block, BlockKind, CharIndex};
use crate::profile::settings::{BreadcrumbMode, Settings};
use crate::strategy::chunker::ChunkInput;
use crate::tokens::{DocumentTokens, TokenCounter};
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// A heading longer than this (characters) is not a title (a figure
/// caption that a stray `=` line made a setext H1, say).
const TITLE_MAX_CHARS: usize = 200;
/// Content (bytes of non-heading blocks) allowed before the H1 that titles a
/// document: badges, a one-line summary; a later H1 is a section.
const CONTENT_BEFORE_TITLE: usize = 300;

/// The document's title for breadcrumbs (the per-chunk file format `fileTitle`): the
/// metadata title, else an H1 among the first blocks (at most
/// [`CONTENT_BEFORE_TITLE`] bytes of content before it, at most
/// [`TITLE_MAX_CHARS`] characters long), else the file name without its
/// extension.
pub fn document_title(meta: &DocumentMeta, blocks: &[Block]) -> Option<String> {
    let non_empty = |t: &&String| !t.trim().is_empty();
    meta.title
        .as_ref()
        .filter(non_empty)
        .cloned()
        .or_else(|| leading_h1(blocks))
        .or_else(|| {
            let path = meta.file_path.as_deref()?;
            let name = path.rsplit(['/', '\\']).next()?;
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            (!stem.is_empty()).then(|| stem.to_owned())
        })
}

/// The first H1 before any substantial content, if it reads as a title.
fn leading_h1(blocks: &[Block]) -> Option<String> {
    let mut content = 0usize;
    for b in blocks {
        match b.kind {
            BlockKind::Heading { level: 1 } if !b.heading_text.trim().is_empty() => {
                return (b.heading_text.chars().count() <= TITLE_MAX_CHARS)
                    .then(|| b.heading_text.clone());
            }
            BlockKind::Heading { .. } | BlockKind::FrontMatter | BlockKind::ThematicBreak => {}
            _ => {
                content += b.range.len();
                if content > CONTENT_BEFORE_TITLE {
                    return None;
                }
            }
        }
    }
    None
}

/// Everything record building needs besides the pieces.
#[derive(Debug)]
pub(crate) struct BuildContext<'a> {
    /// Token counts of the normalized document.
    pub tokens: &'a DocumentTokens<'a>,
    /// Its byte offsets as code point offsets.
    pub chars: &'a CharIndex<'a>,
    /// The profile in use.
    pub profile: &'a Settings,
    /// Caller's metadata.
    pub meta: &'a DocumentMeta,
    /// The per-chunk file format's "short" chunk: below `min_tokens` + overlap tokens, it
    /// gets the full breadcrumb (`conditional`). A strategy without a
    /// minimum uses the per-chunk file format's default, [`FILE_FORMAT_MIN_TOKENS`].
    pub min_tokens: usize,
    /// The overlap that counts towards "short": the profile's overlap in
    /// tokens, or `None` when the overlap is in sentences (then the tokens
    /// of the chunk's own overlap prefix count).
    pub overlap_tokens: Option<usize>,
    /// Document title for breadcrumbs (metadata title, else first H1).
    pub title: Option<String>,
    /// The document's blocks (headings of pieces cut to an embedder window).
    pub blocks: &'a [Block],
    /// Close a code fence a chunk opens but does not close (structural);
    /// strategies whose chunks are plain slices (recursive) leave it open.
    pub close_fences: bool,
    /// Fitted breadcrumbs by heading path and budget: neighbouring chunks
    /// share a path, and fitting one counts tokens several times (issue
    /// 10: a fifth of `hierarchy-v1`'s time before this memo).
    crumbs: RefCell<FxHashMap<(Vec<u8>, usize), String>>,
    /// Token counts of the texts fitting breadcrumbs counted so far: the
    /// parts of one path recur in every deeper path (issue 18: fitting
    /// breadcrumbs was 7% of `spec-v1`'s time, most of it recounting them).
    crumb_counts: RefCell<FxHashMap<String, usize>>,
}

impl<'a> BuildContext<'a> {
    /// The context for `input`, closing fences; the "short" threshold comes
    /// from the profile's limits.
    pub fn new(input: &ChunkInput<'a>, title: Option<String>) -> Self {
        let limits = input.profile.limits();
        Self {
            tokens: input.tokens,
            chars: input.chars,
            profile: input.profile,
            meta: input.meta,
            min_tokens: match limits.min_tokens {
                0 => FILE_FORMAT_MIN_TOKENS,
                n => n,
            },
            overlap_tokens: Some(limits.overlap_tokens),
            title,
            blocks: input.blocks,
            close_fences: true,
            crumbs: RefCell::default(),
            crumb_counts: RefCell::default(),
        }
    }

    /// [`fit_breadcrumb`] of `parts` within `budget`, memoized.
    fn breadcrumb(&self, parts: &[&str], budget: usize) -> String {
        // Each part with its length in front: no two paths share a key.
        let mut path = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
        for part in parts {
            path.extend_from_slice(&part.len().to_le_bytes());
            path.extend_from_slice(part.as_bytes());
        }
        let key = (path, budget);
        if let Some(hit) = self.crumbs.borrow().get(&key) {
            return hit.clone();
        }
        let counter = self.tokens.counter();
        let count = |text: &str| {
            if let Some(&n) = self.crumb_counts.borrow().get(text) {
                return n;
            }
            let n = counter.count(text);
            self.crumb_counts.borrow_mut().insert(text.to_owned(), n);
            n
        };
        let fitted = fit_breadcrumb(parts, &count, budget);
        self.crumbs.borrow_mut().insert(key, fitted.clone());
        fitted
    }
}

/// Builds the records, in order, with ordinals 0..n-1.
pub(crate) fn build_chunks(pieces: Vec<Piece>, ctx: &BuildContext<'_>) -> Vec<Chunk> {
    let text = ctx.tokens.text();
    let chars = ctx.chars;
    let window = ctx
        .profile
        .embedder
        .as_ref()
        .and_then(|w| Some((w.counter()?, w.max_tokens)));
    let pieces = match window {
        Some((counter, max)) => {
            let preceding_only =
                ctx.profile.rules().prefixes != crate::strategy::limits::PrefixRule::Typed;
            fit_pieces(pieces, text, ctx.blocks, counter, max, preceding_only)
        }
        None => pieces,
    };
    pieces
        .into_iter()
        .enumerate()
        .map(|(ordinal, piece)| {
            let ordinal = u32::try_from(ordinal).unwrap_or(u32::MAX);
            let own = &text[piece.own.clone()];
            // A chunk that is one slice of the document is counted from the
            // document's counts; one with synthetic text is counted whole.
            let (prefix, slice_start) = match &piece.prefix {
                Prefix::None => ("", Some(piece.own.start)),
                Prefix::Overlap(start) => (&text[*start..piece.own.start], Some(*start)),
                Prefix::Text(t) => (t.as_str(), None),
            };
            let mut suffix = piece.suffix.clone();
            // Sized once (`format!` grows its string a few times).
            let mut chunk_text = String::with_capacity(prefix.len() + own.len() + suffix.len());
            chunk_text.push_str(prefix);
            chunk_text.push_str(own);
            chunk_text.push_str(&suffix);
            // A split that had to cut through a fence nested in a list item
            // or HTML block closes it, so every chunk stays valid Markdown.
            if let Some(close) = unclosed_fence(&chunk_text).filter(|_| ctx.close_fences) {
                suffix.push('\n');
                suffix.push_str(&close);
                chunk_text.push('\n');
                chunk_text.push_str(&close);
            }
            let token_count = match slice_start {
                Some(start) if suffix.is_empty() => ctx.tokens.count(start..piece.own.end),
                _ => ctx.tokens.counter().count(&chunk_text),
            };
            let char_start = chars.char_offset(piece.own.start);
            let char_end = chars.char_offset(piece.own.end);
            let chunk_path = match &piece.detail {
                Some(d) if piece.headings.is_empty() => d.clone(),
                Some(d) => format!("{} / {d}", piece.headings.join(" > ")),
                None => piece.headings.join(" > "),
            };
            let (embed_text, embed_token_count) =
                embed_text(&piece, &chunk_text, token_count, ctx, window);
            Chunk {
                // Derived from the final record when the engine seals it
                // (`chunk::seal`), as the content hash and the key are.
                chunk_id: String::new(),
                tenant_id: ctx.meta.tenant_id.clone(),
                document_id: ctx.meta.document_id.clone(),
                source_version_id: ctx.meta.source_version_id.clone(),
                ordinal,
                granularity: ctx.profile.granularity,
                chunk_type: piece.chunk_type,
                content_hash: String::new(),
                headings_path: piece.headings,
                chunk_path,
                overlap_prefix_chars: to_u32(prefix.chars().count()),
                closing_suffix_chars: to_u32(suffix.chars().count()),
                chunk_text,
                embed_text,
                embed_token_count: embed_token_count.map(to_u32),
                token_count: to_u32(token_count),
                char_start,
                char_end,
                byte_start: piece.own.start as u64,
                byte_end: piece.own.end as u64,
                block_start_idx: to_u32(piece.blocks.0),
                block_end_idx: to_u32(piece.blocks.1),
                profile: ctx.profile.name.clone(),
                chunker_version: ctx.profile.chunker_version.clone(),
                tokenizer: ctx.profile.tokenizer.name().to_owned(),
                source_url: ctx.meta.source_url.clone(),
                file_path: ctx.meta.file_path.clone(),
                metadata: ctx.meta.metadata.clone(),
                chunk_key: None,
                parent_chunk_id: None,
                is_table: None,
                facet_json: None,
                page_start: None,
                page_end: None,
            }
        })
        .collect()
}

fn to_u32(n: usize) -> u32 {
    // Offsets and counts of one document fit easily: documents are limited
    // to far below 4 GiB before they reach the engine.
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The per-chunk file format's default `minTokens`: the "short" threshold of strategies
/// that keep no minimum of their own.
pub(crate) const FILE_FORMAT_MIN_TOKENS: usize = 64;

/// The per-chunk file format `breadcrumbMode`: what context to put in front of the text the
/// embedder sees. The full breadcrumb is `fileTitle > headerPath...`, or
/// `headerPath...` when the title is the first heading.
///
/// `conditional`: a chunk that starts a section (its own span opens with a
/// heading), holds only a table, code or a list, or is short (fewer tokens
/// than the minimum plus the overlap) gets the full breadcrumb, unless the
/// chunk already starts with that exact heading (the breadcrumb would be the
/// heading line it opens with); other prose gets the title alone when the
/// title is not the first heading, else nothing. `always`: the full
/// breadcrumb. `none`: nothing.
///
/// A breadcrumb is kept within [`BREADCRUMB_MAX_TOKENS`]; with an embedder
/// window, it is shortened (then dropped) until the whole fits; the
/// window's count comes back with the text.
fn embed_text(
    piece: &Piece,
    chunk_text: &str,
    token_count: usize,
    ctx: &BuildContext<'_>,
    window: Option<(&dyn EmbedTokenizer, usize)>,
) -> (String, Option<usize>) {
    let counted = |text: String| {
        let n = window.map(|(w, _)| w.count(&text));
        (text, n)
    };
    let title = ctx.title.as_deref().filter(|t| !t.is_empty());
    let title_is_first = title.is_some_and(|t| piece.headings.first().is_some_and(|h| h == t));
    let mut full: Vec<&str> = Vec::new();
    if let Some(t) = title.filter(|_| !title_is_first) {
        full.push(t);
    }
    // An empty heading (`#` alone) adds nothing to a breadcrumb.
    full.extend(
        piece
            .headings
            .iter()
            .map(String::as_str)
            .filter(|h| !h.trim().is_empty()),
    );
    let crumb: Vec<&str> = match ctx.profile.breadcrumb {
        BreadcrumbMode::None => Vec::new(),
        BreadcrumbMode::Always => full,
        BreadcrumbMode::Conditional => {
            let overlap = match ctx.overlap_tokens {
                Some(n) => n,
                None => ctx
                    .tokens
                    .counter()
                    .count(piece.prefix_text(ctx.tokens.text())),
            };
            let short = token_count < ctx.min_tokens + overlap;
            let contextless = matches!(
                piece.chunk_type,
                ChunkType::Table | ChunkType::Code | ChunkType::List
            );
            if piece.starts_with_heading || contextless || short {
                if starts_with_exact_heading(chunk_text, &full) {
                    Vec::new()
                } else {
                    full
                }
            } else {
                title.filter(|_| !title_is_first).into_iter().collect()
            }
        }
    };
    if crumb.is_empty() {
        return counted(chunk_text.to_owned());
    }
    let Some((w, max)) = window else {
        let crumb = ctx.breadcrumb(&crumb, BREADCRUMB_MAX_TOKENS);
        return (crumbed(&crumb, chunk_text), None);
    };
    let mut budget = BREADCRUMB_MAX_TOKENS;
    while budget >= 4 {
        let text = crumbed(&ctx.breadcrumb(&crumb, budget), chunk_text);
        let n = w.count(&text);
        if n <= max {
            return (text, Some(n));
        }
        budget /= 2;
    }
    counted(chunk_text.to_owned())
}

/// Whether `chunk_text` opens with an ATX heading whose text is the whole
/// breadcrumb `full` (one part): prefixing it would only repeat that line.
fn starts_with_exact_heading(chunk_text: &str, full: &[&str]) -> bool {
    let [only] = full else {
        return false;
    };
    let first = chunk_text.lines().next().unwrap_or("");
    let hashes = first.bytes().take_while(|b| *b == b'#').count();
    // A space or a tab after the `#`s (CommonMark; `is_atx_heading` in
    // `strategy/recursive/split.rs` reads them the same way).
    (1..=6).contains(&hashes)
        && first[hashes..].starts_with([' ', '\t'])
        && first[hashes..].trim().trim_end_matches('#').trim() == only.trim()
}

/// `crumb`, a blank line, then `text`, in a string sized once.
fn crumbed(crumb: &str, text: &str) -> String {
    let mut out = String::with_capacity(crumb.len() + 2 + text.len());
    out.push_str(crumb);
    out.push_str("\n\n");
    out.push_str(text);
    out
}

/// The most tokens a breadcrumb takes in `embed_text` (issue 17: long
/// headings and captions crowded a small embedder's window).
pub(crate) const BREADCRUMB_MAX_TOKENS: usize = 32;
/// A breadcrumb part longer than this is shortened (with an ellipsis).
const PART_MAX_TOKENS: usize = 12;

/// `parts` joined with `" > "`, within `budget` tokens: long parts are
/// shortened to their first words and an ellipsis, then the shallowest
/// parts dropped (the deepest levels are kept), then the last one cut.
///
/// `count` is a pretokenized BPE count (cl100k_base or o200k_base): no
/// pretokenizer piece of either spans from a non-space character into the
/// space after it, so the count of `words + " " + word` is the count of
/// `words` plus the count of `" " + word`. Shortening counts word by word
/// on that ground instead of recounting every longer prefix (issue 18: the
/// prefixes were 3% of `spec-v1` over the English corpus);
/// `shortening_by_word_counts_equals_recounting_each_prefix` checks it.
pub(crate) fn fit_breadcrumb(
    parts: &[&str],
    count: &dyn Fn(&str) -> usize,
    budget: usize,
) -> String {
    // A token is at least one byte: text no longer than the budget in bytes
    // fits without counting.
    let fits = |text: &str, max: usize| text.len() <= max || count(text) <= max;
    let shorten = |part: &str, max: usize| -> String {
        if fits(part, max) {
            return part.to_owned();
        }
        // The words that fit, each counted once with the space before it.
        let mut out = String::new();
        let mut tokens = 0;
        for word in part.split_whitespace() {
            let mark = out.len();
            if mark > 0 {
                out.push(' ');
            }
            out.push_str(word);
            tokens += count(&out[mark..]);
            if tokens + 1 > max {
                out.truncate(mark);
                break;
            }
        }
        if out.is_empty() {
            // One long word: keep its first characters.
            out = part.chars().take(16).collect();
        }
        out.push('…');
        out
    };
    let mut kept: Vec<String> = parts.iter().map(|p| shorten(p, PART_MAX_TOKENS)).collect();
    while kept.len() > 1 && !fits(&kept.join(" > "), budget) {
        kept.remove(0);
    }
    let joined = kept.join(" > ");
    if fits(&joined, budget) {
        joined
    } else {
        shorten(&joined, budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::parse_blocks;

    fn title(md: &str, file: Option<&str>) -> Option<String> {
        let meta = DocumentMeta {
            file_path: file.map(str::to_owned),
            ..DocumentMeta::default()
        };
        document_title(&meta, &parse_blocks(md))
    }

    #[test]
    fn an_h1_at_the_top_titles_the_document() {
        assert_eq!(
            title("[![badge](x.svg)](y)\n\n# Guide\n\nText.\n", None).as_deref(),
            Some("Guide")
        );
        assert_eq!(
            title("## Intro\n\n# Real\n\nText.\n", None).as_deref(),
            Some("Real")
        );
    }

    #[test]
    fn breadcrumbs_keep_within_the_budget_and_keep_the_deepest_levels() {
        let counter = crate::tokens::TokenizerKind::Cl100kBase.counter();
        let short = fit_breadcrumb(&["Guide", "Install", "Linux"], &|t| counter.count(t), 32);
        assert_eq!(short, "Guide > Install > Linux");
        let caption = "Figure 3: a caption that goes on and on about the experiment ".repeat(4);
        let long = fit_breadcrumb(
            &[&caption, "Results", "Ablation of the encoder"],
            &|t| counter.count(t),
            32,
        );
        assert!(counter.count(&long) <= 32, "{long}");
        assert!(
            long.ends_with("Results > Ablation of the encoder"),
            "{long}"
        );
        assert!(long.contains('…'), "{long}");
        let deep: Vec<String> = (0..12).map(|i| format!("Level {i} heading")).collect();
        let refs: Vec<&str> = deep.iter().map(String::as_str).collect();
        let fitted = fit_breadcrumb(&refs, &|t| counter.count(t), 32);
        assert!(
            counter.count(&fitted) <= 32 && fitted.ends_with("Level 11 heading"),
            "{fitted}"
        );
        let one = fit_breadcrumb(&["x".repeat(400).as_str()], &|t| counter.count(t), 32);
        assert!(counter.count(&one) <= 32, "{one}");
    }

    /// The shortening's ground: a prefix of words counts what its words,
    /// each with the space before it, count, for both tokenizers and
    /// words of every kind the pretokenizers tell apart.
    #[test]
    fn shortening_by_word_counts_equals_recounting_each_prefix() {
        use proptest::prelude::*;
        let words = proptest::collection::vec(
            proptest::sample::select(vec![
                "word",
                "Word",
                "WORD",
                "'s",
                "don't",
                "'LL",
                "12",
                "12345",
                "3.14",
                "x2",
                "é",
                "слово",
                "Слово",
                "日本語",
                "😀",
                "…",
                "(a)",
                "--",
                "/usr/bin",
                "a/b",
                "\u{301}",
                "ǅ",
                "#",
                "C++",
                "://",
                "$",
                "''",
                "'",
                "’s",
                "٣",
                ">",
                "…)",
            ]),
            1..12,
        );
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(3000));
        for kind in [
            crate::tokens::TokenizerKind::Cl100kBase,
            crate::tokens::TokenizerKind::O200kBase,
        ] {
            let counter = kind.counter();
            let outcome = runner.run(&words, |words| {
                let mut joined = String::new();
                let mut tokens = 0;
                for word in &words {
                    let mark = joined.len();
                    if mark > 0 {
                        joined.push(' ');
                    }
                    joined.push_str(word);
                    tokens += counter.count(&joined[mark..]);
                    prop_assert_eq!(tokens, counter.count(&joined), "{:?}", joined);
                }
                Ok(())
            });
            assert!(outcome.is_ok(), "{kind:?}: {outcome:?}");
        }
    }

    #[test]
    fn a_chunk_opening_with_its_only_heading_gets_no_breadcrumb_of_it() {
        for (text, yes) in [
            ("# Install\n\nRun it.", true),
            ("#\tInstall\n\nRun it.", true),
            ("## Install ##\n", true),
            ("#Install\n", false),
            ("# Other\n", false),
            ("Install\n", false),
        ] {
            assert_eq!(
                starts_with_exact_heading(text, &["Install"]),
                yes,
                "{text:?}"
            );
        }
        assert!(!starts_with_exact_heading(
            "# Install\n",
            &["Guide", "Install"]
        ));
    }

    #[test]
    fn a_late_setext_h1_is_not_the_title() {
        // Issue 17: a stray `=` under a long caption far into a paper.
        let body = "Plain paragraph text of the paper. ".repeat(40);
        let caption = "Figure 3: a caption that goes on ".repeat(18);
        let md = format!("{body}\n\n{caption}\n=\n\nMore text.\n");
        assert_eq!(
            title(&md, Some("papers/attention.md")).as_deref(),
            Some("attention")
        );
        // Early, but a paragraph's length: still not a title.
        let md = format!("{caption}\n=\n\nText.\n");
        assert_eq!(title(&md, None), None);
    }
}
