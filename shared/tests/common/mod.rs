//! Shared helpers of the golden, property and corpus tests.
//!
//! [`invariant_violations`] re-derives every docs/contract.md#chunk-record and #validation invariant from
//! the chunk records and the normalized document alone. It deliberately does
//! not call `shared::chunk::validate` (which `Engine::chunk` already runs):
//! the point is a second, independent reading of the contract. Token counts
//! come from `tiktoken-rs` (the reference), ids from `sha2` directly, fences,
//! thematic breaks, front matter and ATX headings from simple line rules.

// Each test target uses a different subset of these helpers.
#![allow(dead_code)]

mod files;
mod invariants;
mod rules;
mod spans;

// A target that uses none of a module's helpers would see its re-export
// as unused.
#[allow(unused_imports)]
pub use invariants::*;
#[allow(unused_imports)]
pub use rules::*;
#[allow(unused_imports)]
pub use spans::*;

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
        "structural" | "section_aware" | "table" | "layout_heuristic" | "layout_aware" | "grobid"
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
/// the toy embedder standing in for the sentence model and the toy chat
/// model for a chat endpoint (the semantic and LLM
/// strategy's logic is what these suites check; the real model has its own
/// tests in the `embed` crate) and [`StandInPieces`] for the model's
/// tokenizer, built once per test binary.
pub fn engine() -> &'static Engine {
    static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    let build = || {
        Engine::builder()
            .experimental(true)
            .embedder(std::sync::Arc::new(shared::ToyEmbedder::default()))
            .chat(std::sync::Arc::new(shared::ToyChat::default()))
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
    /// The universal rules every strategy keeps (docs/contract.md#strategies): no structural
    /// rules (fences closed, typed prefixes, table headers, heading paths);
    /// a prefix is only the text right before the own span.
    Universal,
}

/// A numbered list of the first violations.
pub fn describe(v: &[String]) -> String {
    let mut out = format!("{} invariant violation(s):\n", v.len());
    for line in v.iter().take(SHOWN) {
        let _ = writeln!(out, "  - {line}");
    }
    out
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
