//! Shared helpers of the golden, property and corpus tests.
//!
//! [`invariant_violations`] re-derives every SPEC 3.5 / 3.6 invariant from
//! the chunk records and the normalized document alone. It deliberately does
//! not call `shared::chunk::validate` (which `Engine::chunk` already runs):
//! the point is a second, independent reading of the contract. Token counts
//! come from `tiktoken-rs` (the reference), ids from `sha2` directly, fences,
//! thematic breaks, front matter and ATX headings from simple line rules.

// Each test target uses a different subset of these helpers.
#![allow(dead_code)]

#[path = "../../examples/common/files.rs"]
mod files;

use std::fmt::Write as _;

use sha2::{Digest, Sha256};
use shared::profile::IdFormula;
use shared::tokens::TokenizerKind;
use shared::Engine;
use shared::{Chunk, ChunkType, DocumentMeta, Profile};

/// Every `*.md` file under `dir` (walked recursively, as the examples and
/// benches walk), sorted, so samples and reports are reproducible; none when
/// `dir` is not a directory.
pub fn markdown_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    if dir.is_dir() {
        files::collect(dir, &mut files);
    }
    files.sort();
    files
}

/// The fixtures every suite runs on: `tests/fixtures/*.md` (not the
/// subfolders, not README.md), sorted.
pub fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md") && !p.ends_with("README.md"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "fixtures missing in {}", dir.display());
    files
}

/// The three built-in structural profiles.
pub const PROFILES: [&str; 3] = ["spec-v1", "enterprise-v1", "docs-v1"];

/// Every built-in profile (the contract suite runs them all).
pub fn all_profiles() -> Vec<&'static Profile> {
    engine().profiles().iter().collect()
}

/// The level of checks `profile` is held to: structural profiles keep the
/// structural rules (`full`); every other strategy the universal ones.
pub fn level_for(profile: &Profile, full: Level) -> Level {
    if matches!(
        profile.strategy.as_str(),
        "structural" | "section_aware" | "table"
    ) {
        full
    } else {
        Level::Universal
    }
}

/// At most this many violations are listed in a panic message.
const SHOWN: usize = 25;

/// Profiles fitted to small embedder windows (issue 17), so the contract
/// suite and the generated documents cover window cuts for a typed-prefix
/// strategy and a preceding-text one.
const FIT_STRUCTURAL: &str = "name = \"fit-structural\"\nstrategy = \"structural\"\nbreadcrumb_mode = \"always\"\n[embedder]\nname = \"stand-in\"\nmax_tokens = 64\ntokenizer = \"model\"\n[params]\ntarget_tokens = 350\nsoft_max_tokens = 450\nhard_max_tokens = 520\noverlap = { percent_of_target = 15, sentence_aligned = true }\n";
const FIT_RECURSIVE: &str = "name = \"fit-recursive\"\nstrategy = \"recursive\"\n[embedder]\nname = \"small\"\nmax_tokens = 96\ntokenizer = \"cl100k_base\"\n[params]\nchunk_size = 400\nchunk_overlap = 80\n";

/// A stand-in for the model's WordPiece tokenizer (profiles whose
/// `[embedder] tokenizer = "model"`): one piece per 3 bytes plus the two
/// specials, more pieces than cl100k tokens as WordPiece has, so windows
/// cut chunks here too. `embed/tests/window.rs` checks the real one.
#[derive(Debug)]
pub struct StandInPieces;

impl shared::embed::EmbedTokenizer for StandInPieces {
    fn id(&self) -> &str {
        "stand-in pieces"
    }
    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(3) + 2
    }
}

/// The engine with the built-in profiles, experimental ones enabled and
/// the toy embedder standing in for the sentence model (the semantic
/// strategy's logic is what these suites check; the real model has its own
/// tests in the `embed` crate) and [`StandInPieces`] for the model's
/// tokenizer, built once per test binary.
pub fn engine() -> &'static Engine {
    static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    let build = || {
        Engine::builder()
            .experimental(true)
            .embedder(std::sync::Arc::new(shared::ToyEmbedder::default()))
            .window_tokenizer("model", std::sync::Arc::new(StandInPieces))
            .profile_source("fit-structural.toml", FIT_STRUCTURAL)
            .profile_source("fit-recursive.toml", FIT_RECURSIVE)
            .build()
    };
    ENGINE.get_or_init(|| match build() {
        Ok(e) => e,
        Err(e) => panic!("built-in engine does not load: {e}"),
    })
}

/// Document metadata for tests.
pub fn meta(tenant: &str, document: &str, version: &str) -> DocumentMeta {
    DocumentMeta {
        tenant_id: tenant.to_owned(),
        document_id: document.to_owned(),
        source_version_id: version.to_owned(),
        title: None,
        source_url: None,
        file_path: None,
        metadata: None,
    }
}

/// The profile called `name`.
pub fn profile(name: &str) -> &'static Profile {
    match engine().profile(Some(name)) {
        Ok(p) => p,
        Err(e) => panic!("profile {name}: {e}"),
    }
}

/// Reference token count of `text` (tiktoken-rs, not the engine's counter).
pub fn reference_tokens(kind: TokenizerKind, text: &str) -> usize {
    let bpe = match kind {
        TokenizerKind::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        TokenizerKind::O200kBase => tiktoken_rs::o200k_base_singleton(),
    };
    bpe.encode_ordinary(text).len()
}

/// How much of the contract to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Every invariant (fixtures, generated documents).
    Full,
    /// Everything but the heading-path rule, whose simple line reading of
    /// ATX headings odd HTML can fool (arbitrary strings).
    Basic,
    /// The universal rules every strategy keeps (SPEC 3.8): no structural
    /// rules (fences closed, typed prefixes, table headers, heading paths);
    /// a prefix is only the text right before the own span.
    Universal,
}

/// Panics with a readable list if any invariant is broken.
pub fn assert_invariants(normalized: &str, chunks: &[Chunk], profile: &Profile) {
    let v = invariant_violations(normalized, chunks, profile, Level::Full);
    if !v.is_empty() {
        panic!("{}", describe(&v));
    }
}

/// A numbered list of the first violations.
pub fn describe(v: &[String]) -> String {
    let mut out = format!("{} invariant violation(s):\n", v.len());
    for line in v.iter().take(SHOWN) {
        let _ = writeln!(out, "  - {line}");
    }
    out
}

/// Every broken invariant, one line each (empty when all hold). A
/// multi-granularity profile's output is checked granularity by granularity
/// (each with the sub-profile that made it), then its parents.
pub fn invariant_violations(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
) -> Vec<String> {
    if !profile.active_auxiliaries().is_empty() {
        return multi_violations(normalized, chunks, profile, level);
    }
    let cover = profile.granularity != shared::Granularity::Document;
    check_group(
        normalized,
        chunks,
        profile,
        level,
        profile.granularity,
        cover,
    )
}

/// The checks of a multi-granularity output: granularities listed coarse to
/// fine, each group keeping its sub-profile's contract (the `document`
/// granularity covers the document's head only, a `table` auxiliary the
/// tables only), ids unique across groups, every chunk keyed, and every
/// `parent_chunk_id` naming a chunk of a coarser granularity whose own span
/// contains the child's.
fn multi_violations(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
) -> Vec<String> {
    let mut v = Vec::new();
    let ranks: Vec<u8> = chunks
        .iter()
        .map(|c| shared::profile::rank(c.granularity))
        .collect();
    if ranks.windows(2).any(|w| w[0] > w[1]) {
        v.push("granularities are not listed coarse to fine".to_owned());
    }
    let mut ids = std::collections::HashMap::new();
    for c in chunks {
        if ids.insert(c.chunk_id.clone(), c).is_some() {
            v.push(format!(
                "duplicate chunk_id {} across granularities",
                short(&c.chunk_id)
            ));
        }
        if c.chunk_key.is_none() {
            v.push(format!(
                "{} chunk {} has no chunk_key",
                c.granularity.as_str(),
                c.ordinal
            ));
        }
    }
    for c in chunks {
        let Some(pid) = &c.parent_chunk_id else {
            continue;
        };
        match ids.get(pid) {
            None => v.push(format!(
                "{} chunk {}: parent {} is not in the output",
                c.granularity.as_str(),
                c.ordinal,
                short(pid)
            )),
            Some(p) => {
                let coarser =
                    shared::profile::rank(p.granularity) < shared::profile::rank(c.granularity);
                let contains = p.byte_start <= c.byte_start && c.byte_end <= p.byte_end;
                if !coarser || !contains {
                    v.push(format!(
                        "{} chunk {} ({}..{}): parent {} chunk {} ({}..{}) is not a coarser chunk containing it",
                        c.granularity.as_str(), c.ordinal, c.byte_start, c.byte_end,
                        p.granularity.as_str(), p.ordinal, p.byte_start, p.byte_end
                    ));
                }
            }
        }
    }
    let mut groups: Vec<shared::Granularity> = chunks.iter().map(|c| c.granularity).collect();
    groups.dedup();
    for g in groups {
        let group: Vec<Chunk> = chunks
            .iter()
            .filter(|c| c.granularity == g)
            .cloned()
            .collect();
        let sub = if g == profile.granularity {
            profile
        } else {
            match profile
                .auxiliaries
                .iter()
                .find(|a| a.profile.granularity == g)
            {
                Some(a) => &a.profile,
                None => {
                    v.push(format!(
                        "granularity {} comes from no strategy of the profile",
                        g.as_str()
                    ));
                    continue;
                }
            }
        };
        let cover = g != shared::Granularity::Document
            && !(g == shared::Granularity::Table && g != profile.granularity);
        let lvl = level_for(sub, level);
        for line in check_group(normalized, &group, sub, lvl, profile.granularity, cover) {
            v.push(format!("[{}] {line}", g.as_str()));
        }
    }
    v
}

/// The checks of one granularity's chunks under the (sub-)profile that
/// made them; ids are namespaced against `primary`; `cover`: nothing lost.
fn check_group(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
    primary: shared::Granularity,
    cover: bool,
) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    let mut prev_end: Option<usize> = None;
    let mut prev_start: Option<usize> = None;
    // Running char count: spans increase, so offsets are counted in one pass.
    let mut cursor = (0usize, 0u64);
    let first_heading = if level == Level::Full {
        first_atx_heading(normalized)
    } else {
        None
    };
    for (i, c) in chunks.iter().enumerate() {
        let at = format!(
            "chunk #{i} ({}..{} {})",
            c.byte_start,
            c.byte_end,
            c.chunk_type.as_str()
        );
        // Ordinals run 0..n-1 within each granularity (SPEC 3.8).
        let expected = chunks[..i]
            .iter()
            .filter(|p| p.granularity == c.granularity)
            .count();
        if c.ordinal as usize != expected {
            v.push(format!(
                "{at}: ordinal {} (expected {expected} among the {} chunks)",
                c.ordinal,
                c.granularity.as_str()
            ));
        }
        if let Some(key) = &c.chunk_key {
            let want = format!(
                "{}:{}:{}:{}",
                c.document_id,
                profile.strategy,
                c.granularity.as_str(),
                c.ordinal
            );
            if *key != want {
                v.push(format!("{at}: chunk_key {key}, expected {want}"));
            }
        }
        if c.chunk_text.trim().is_empty() {
            v.push(format!("{at}: empty chunk_text"));
        }
        // Issue 17: a profile fitted to an embedder keeps embed_text in its
        // window, counted afresh here.
        let window = profile.embedder.as_ref();
        match (
            window.and_then(|w| Some((w.counter()?, w.max_tokens))),
            c.embed_token_count,
        ) {
            (Some((counter, max)), Some(n)) => {
                let real = counter.count(&c.embed_text);
                if real != n as usize || real > max {
                    v.push(format!(
                        "{at}: embed_token_count {n}, recounted {real}, window {max}"
                    ));
                }
            }
            (None, None) => {}
            (w, n) => v.push(format!(
                "{at}: embed_token_count {n:?} with window {}",
                w.is_some()
            )),
        }
        if c.token_count as usize > profile.hard_max_tokens() {
            v.push(format!(
                "{at}: {} tokens > hard max {}",
                c.token_count,
                profile.hard_max_tokens()
            ));
        }
        let exact = reference_tokens(profile.tokenizer, &c.chunk_text);
        if exact != c.token_count as usize {
            v.push(format!(
                "{at}: token_count {} but tiktoken counts {exact}",
                c.token_count
            ));
        }
        if c.tokenizer != profile.tokenizer.name() || c.profile != profile.name {
            v.push(format!(
                "{at}: tokenizer/profile fields {} / {}",
                c.tokenizer, c.profile
            ));
        }
        if !ids.insert(c.chunk_id.clone()) {
            v.push(format!("{at}: duplicate chunk_id {}", c.chunk_id));
        }
        let want_id = expected_id_under(c, profile, primary);
        if want_id != c.chunk_id {
            v.push(format!(
                "{at}: chunk_id {} but the SPEC 3.5 formula gives {want_id}",
                short(&c.chunk_id)
            ));
        }
        let typed = level != Level::Universal;
        if typed {
            check_fences(&c.chunk_text, &at, &mut v);
        }

        // Own span.
        let (bs, be) = (c.byte_start as usize, c.byte_end as usize);
        if !(bs < be
            && be <= normalized.len()
            && normalized.is_char_boundary(bs)
            && normalized.is_char_boundary(be))
        {
            v.push(format!(
                "{at}: own span empty, out of range or not on char boundaries"
            ));
            continue;
        }
        if prev_start.is_some_and(|p| p >= bs) || prev_end.is_some_and(|p| p > bs) {
            v.push(format!(
                "{at}: own span does not follow the previous one (prev end {prev_end:?})"
            ));
        }
        let before = prev_start.zip(prev_end);
        prev_start = Some(bs);
        prev_end = Some(be);
        let cs = char_offset(normalized, &mut cursor, bs);
        let ce = char_offset(normalized, &mut cursor, be);
        if (cs, ce) != (c.char_start, c.char_end) {
            v.push(format!(
                "{at}: char offsets {}..{} but the bytes give {cs}..{ce}",
                c.char_start, c.char_end
            ));
        }
        let own = &normalized[bs..be];
        if own.trim().is_empty() {
            v.push(format!("{at}: own span is only whitespace"));
        }
        // embed_text is the chunk text, or a breadcrumb of at most 32
        // tokens, a blank line, and the chunk text (issue 17).
        // A table summary (the `table` strategy's summary mode) is embedded
        // as its description in words.
        let summary = c
            .facet_json
            .as_ref()
            .is_some_and(|f| f["mode"] == "summary" && f.get("markdown").is_some());
        if summary && !c.embed_text.starts_with("Table") {
            v.push(format!(
                "{at}: a table summary's embed_text does not describe the table"
            ));
        }
        if c.embed_text != c.chunk_text && !summary {
            match c
                .embed_text
                .strip_suffix(c.chunk_text.as_str())
                .and_then(|head| head.strip_suffix("\n\n"))
            {
                Some(crumb) => {
                    let n = reference_tokens(profile.tokenizer, crumb);
                    if n > 32 || crumb.trim().is_empty() {
                        v.push(format!(
                            "{at}: breadcrumb of {n} tokens: {:?}",
                            head(crumb, 60)
                        ));
                    }
                }
                None => v.push(format!(
                    "{at}: embed_text is not breadcrumb + blank line + chunk_text"
                )),
            }
        }

        // chunk_text == prefix + own + suffix.
        let prefix_bytes = prefix_len_bytes(&c.chunk_text, c.overlap_prefix_chars as usize);
        let suffix_bytes = suffix_len_bytes(&c.chunk_text, c.closing_suffix_chars as usize);
        let (Some(prefix_bytes), Some(suffix_bytes)) = (prefix_bytes, suffix_bytes) else {
            v.push(format!(
                "{at}: prefix/suffix char counts exceed the chunk text"
            ));
            continue;
        };
        if prefix_bytes + suffix_bytes > c.chunk_text.len() {
            v.push(format!("{at}: prefix and suffix overlap"));
            continue;
        }
        let prefix = &c.chunk_text[..prefix_bytes];
        // Issue 17: overlap copies at most half of the previous chunk's own
        // text (structural; the whitespace between them may add a token).
        if level == Level::Full && !prefix.is_empty() {
            if let Some((ps, pe)) = before {
                let prev_tokens = reference_tokens(profile.tokenizer, &normalized[ps..pe]);
                let copied = reference_tokens(profile.tokenizer, prefix.trim_end());
                if copied * 2 > prev_tokens + 1
                    && matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed)
                {
                    v.push(format!(
                        "{at}: overlap of {copied} tokens is more than half of the previous chunk's {prev_tokens}"
                    ));
                }
            }
        }
        let middle = &c.chunk_text[prefix_bytes..c.chunk_text.len() - suffix_bytes];
        let suffix = &c.chunk_text[c.chunk_text.len() - suffix_bytes..];
        if middle != own {
            v.push(format!(
                "{at}: chunk_text is not prefix + normalized[own] + suffix (own starts {:?}, text middle starts {:?})",
                head(own, 40),
                head(middle, 40)
            ));
        }
        if !typed {
            if !suffix.is_empty() {
                v.push(format!(
                    "{at}: suffix {suffix:?} from a strategy that adds none"
                ));
            }
            // A table split by rows repeats its header (sliding windows
            // keep tables whole and split them only beyond the hard max).
            let header = c.chunk_type == ChunkType::Table
                && c.is_table == Some(true)
                && normalized[..bs].contains(prefix.trim_end());
            if !normalized[..bs].ends_with(prefix) && !header {
                v.push(format!(
                    "{at}: overlap prefix {:?} is not the text right before the own span",
                    head(prefix, 40)
                ));
            }
            continue;
        }
        if !suffix.is_empty() && !is_closing_fence_suffix(suffix) {
            v.push(format!(
                "{at}: closing suffix {suffix:?} is not \\n + a closing fence"
            ));
        }
        if !prefix.is_empty() {
            check_prefix(normalized, c, bs, prefix, &at, &mut v);
        }
        if c.chunk_type == ChunkType::Table {
            check_table_start(&c.chunk_text, &at, &mut v);
        }
        if let Some(h) = first_heading {
            if bs >= h && c.headings_path.is_empty() {
                v.push(format!("{at}: starts after the first ATX heading (byte {h}) but headings_path is empty"));
            }
        }
    }
    if cover {
        check_nothing_lost(normalized, chunks, &mut v);
    }
    v
}

/// Char offset of byte `b`, advancing a (byte, char) cursor when possible.
fn char_offset(text: &str, cursor: &mut (usize, u64), b: usize) -> u64 {
    if b >= cursor.0 && text.is_char_boundary(cursor.0) {
        let n = text[cursor.0..b].chars().count() as u64;
        *cursor = (b, cursor.1 + n);
        cursor.1
    } else {
        text[..b].chars().count() as u64
    }
}

fn prefix_len_bytes(text: &str, chars: usize) -> Option<usize> {
    if chars == 0 {
        return Some(0);
    }
    text.char_indices()
        .nth(chars)
        .map(|(i, _)| i)
        .or((text.chars().count() == chars).then_some(text.len()))
}

fn suffix_len_bytes(text: &str, chars: usize) -> Option<usize> {
    if chars == 0 {
        return Some(0);
    }
    text.char_indices()
        .rev()
        .nth(chars - 1)
        .map(|(i, _)| text.len() - i)
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// The first `n` chars of `s`.
pub fn head(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// The prefix rules of SPEC 3.5 by chunk type.
fn check_prefix(
    normalized: &str,
    c: &Chunk,
    bs: usize,
    prefix: &str,
    at: &str,
    v: &mut Vec<String>,
) {
    match c.chunk_type {
        ChunkType::List | ChunkType::Quote => v.push(format!(
            "{at}: {} chunk carries a {}-char prefix",
            c.chunk_type.as_str(),
            c.overlap_prefix_chars
        )),
        ChunkType::Paragraph | ChunkType::Mixed => {
            if !normalized[..bs].ends_with(prefix) {
                v.push(format!(
                    "{at}: overlap prefix {:?} is not the text right before the own span",
                    head(prefix, 40)
                ));
            }
        }
        ChunkType::Code => {
            let lines: Vec<&str> = prefix.split_terminator('\n').collect();
            if !(prefix.ends_with('\n') && lines.len() == 1 && fence_open(lines[0]).is_some()) {
                v.push(format!(
                    "{at}: code prefix {prefix:?} is not one opening fence line"
                ));
            }
        }
        ChunkType::Table => {
            let lines: Vec<&str> = prefix.split_terminator('\n').collect();
            let pipe_rows =
                (1..=2).contains(&lines.len()) && lines.iter().all(|l| is_pipe_row_item(l));
            let ok = prefix.ends_with('\n')
                && (pipe_rows
                    || (lines.len() == 2 && is_delimiter_row(lines[1]) && lines[0].contains('|')));
            if !ok {
                v.push(format!(
                    "{at}: table prefix {:?} is not a header + delimiter row",
                    head(prefix, 60)
                ));
            } else if !normalized[..bs].contains(prefix) {
                v.push(format!(
                    "{at}: repeated table header {:?} does not occur before the piece",
                    head(prefix, 60)
                ));
            }
        }
    }
}

/// `\n` followed by a fence line (at most 3 spaces, then 3+ of one fence char).
fn is_closing_fence_suffix(suffix: &str) -> bool {
    let Some(line) = suffix.strip_prefix('\n') else {
        return false;
    };
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = line.trim_start_matches(' ');
    indent <= 3 && t.len() >= 3 && (t.bytes().all(|b| b == b'`') || t.bytes().all(|b| b == b'~'))
}

/// The fence a line opens (char, length), by the SPEC 3.5 line rule.
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
fn check_fences(text: &str, at: &str, v: &mut Vec<String>) {
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

fn is_atx_heading(line: &str) -> bool {
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

fn is_setext_underline(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

/// If the non-blank lines from `i` on form a (possibly multi-line) setext
/// heading, the index of its underline.
fn setext_end(lines: &[&str], i: usize) -> Option<usize> {
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
fn is_pipe_row_item(line: &str) -> bool {
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
fn check_table_start(text: &str, at: &str, v: &mut Vec<String>) {
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

/// The SPEC 3.5 canonical chunk text, written from the SPEC prose.
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

fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// The chunk id SPEC 3.5 prescribes for `c` under `profile`.
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
        IdFormula::Seed000 => sha256_hex(&format!(
            "{}|{}|{}|{}|{}{suffix}",
            c.tenant_id,
            c.document_id,
            c.source_version_id,
            c.ordinal,
            canonical_text(&c.chunk_text)
        )),
        IdFormula::Seed003 => sha256_hex(&format!(
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

/// Nothing lost: every non-whitespace char lies in an own span or in an
/// exempt range.
fn check_nothing_lost(text: &str, chunks: &[Chunk], v: &mut Vec<String>) {
    let mut spans: Vec<(usize, usize)> = chunks
        .iter()
        .map(|c| (c.byte_start as usize, (c.byte_end as usize).min(text.len())))
        .collect();
    spans.extend(exempt_ranges(text));
    spans.sort_unstable();
    let mut covered = 0usize;
    let mut lost = 0usize;
    let mut report = |from: usize, to: usize, v: &mut Vec<String>| {
        if let Some(gap) = text.get(from..to) {
            if let Some(off) = gap.find(|c: char| !c.is_whitespace()) {
                lost += 1;
                if lost <= 5 {
                    v.push(format!(
                        "text lost: byte {} ({:?}) is in no chunk",
                        from + off,
                        head(&gap[off..], 40)
                    ));
                }
            }
        }
    };
    for (s, e) in spans {
        if s > covered {
            report(covered, s, v);
        }
        covered = covered.max(e);
    }
    report(covered, text.len(), v);
}

/// Chunks `bytes` twice under `profile`; asserts equal results and
/// byte-identical JSON, and returns the first result.
pub fn chunk_deterministic(
    bytes: &[u8],
    meta: &DocumentMeta,
    profile: &str,
) -> shared::ChunkedDocument {
    let first = match engine().chunk(bytes, meta, Some(profile)) {
        Ok(d) => d,
        Err(e) => panic!(
            "{} / {profile}: chunking failed: {e}\n{e:?}",
            meta.document_id
        ),
    };
    let second = match engine().chunk(bytes, meta, Some(profile)) {
        Ok(d) => d,
        Err(e) => panic!("{} / {profile}: second run failed: {e}", meta.document_id),
    };
    assert_eq!(
        first, second,
        "{} / {profile}: two runs differ",
        meta.document_id
    );
    let a = serde_json::to_string(&first.chunks).unwrap_or_default();
    let b = serde_json::to_string(&second.chunks).unwrap_or_default();
    assert!(!a.is_empty() || first.chunks.is_empty());
    assert_eq!(
        a, b,
        "{} / {profile}: JSON of two runs differs",
        meta.document_id
    );
    first
}

/// Whether an overlap prefix starts at a word boundary of the document
/// (preceded by whitespace or at the document start).
pub fn overlap_word_aligned(normalized: &str, c: &Chunk) -> bool {
    if c.overlap_prefix_chars == 0
        || !matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed)
    {
        return true;
    }
    let Some(p) = prefix_len_bytes(&c.chunk_text, c.overlap_prefix_chars as usize) else {
        return true;
    };
    let start = (c.byte_start as usize).saturating_sub(p);
    start == 0
        || normalized
            .get(..start)
            .is_some_and(|b| b.ends_with(char::is_whitespace))
}
