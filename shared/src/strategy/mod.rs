//! Chunking strategies: the [`Strategy`] trait (a named, versioned factory
//! that reads a profile's `[params]`), the configured [`Chunker`] it returns,
//! and the [`Registry`] of strategies by name.
//!
//! Each strategy lives in its own folder and ships its built-in profiles
//! there (`<strategy>/profiles/*.toml`). Adding one touches that folder and
//! one line of `builtin_strategies!` below; see ARCHITECTURE.md "Adding a
//! strategy".
//!
//! What strategies share (sentence spans, exact token ranges and windows,
//! table and code splitting, overlap copied from the preceding text, record
//! building, validation) is the toolkit in [`crate::chunk`].

pub mod params;

use std::sync::Arc;

use crate::chunk::record::{Chunk, DocumentMeta};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::markdown::{Block, CharIndex};
use crate::normalize::NormalizedDocument;
use crate::profile::Profile;
use crate::tokens::DocumentTokens;

pub use params::{ParamError, Params};

/// Declares the built-in strategies: for each `module::Type`, the module
/// (`strategy/<module>/`), a re-export of the type, and its registration in
/// [`Registry::builtin`], in this order. Adding a strategy is its folder and
/// one line here.
macro_rules! builtin_strategies {
    ($($module:ident :: $ty:ident),* $(,)?) => {
        $(
            pub mod $module;
            pub use $module::$ty;
        )*

        fn register_builtin(r: &mut Registry) {
            $(r.register($ty);)*
        }
    };
}

builtin_strategies! {
    structural::Structural,
    recursive::Recursive,
    token::Token,
    markdown_headers::MarkdownHeaders,
    semantic::Semantic,
    semantic_cluster::SemanticCluster,
    texttiling::TextTiling,
    c99::C99,
    bayesseg::BayesSeg,
    lda_topic::LdaTopic,
    graph_partition::GraphPartition,
    discourse_segmenter::DiscourseSegmenter,
    sliding_window::SlidingWindow,
    section_aware::SectionAware,
    table::Table,
    document::Document,
}

/// A chunking strategy as the registry holds it: a name, a version and a
/// parser of parameters.
pub trait Strategy: Send + Sync + std::fmt::Debug {
    /// Registry name (`structural`), what a profile's `strategy` names.
    fn name(&self) -> &'static str;
    /// Implementation version; `chunker_version` is `name:version`. Bump it
    /// whenever the output for some input changes.
    fn version(&self) -> &'static str;
    /// One line for listings.
    fn summary(&self) -> &'static str;
    /// Experimental strategies (the Chunking System specification) are usable only when the caller
    /// enables them (`experimental.enabled = true`, CLI `--experimental`).
    fn experimental(&self) -> bool {
        false
    }
    /// The keys `[params]` may hold (for the unknown-key message).
    fn param_keys(&self) -> &'static [&'static str];
    /// The one granularity this strategy's chunks can have, if it is fixed
    /// (`document`): a profile must then declare it.
    fn fixed_granularity(&self) -> Option<crate::chunk::record::Granularity> {
        None
    }
    /// The TOML sources of the profiles this strategy ships, compiled in.
    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[]
    }
    /// Reads and checks the parameters: every key read through `params` (an
    /// unread key is reported as unknown afterwards), ranges checked, each
    /// error naming the key, the value and what is valid.
    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError>;
}

/// Sizes a configured chunker keeps, for listings, metrics and validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// What chunks aim at.
    pub target_tokens: usize,
    /// No chunk is ever larger (tokens of `chunk_text`).
    pub hard_max_tokens: usize,
    /// The smallest size the strategy aims to keep (0: none).
    pub min_tokens: usize,
    /// Overlap in tokens (0: none; an upper bound where it is in sentences).
    pub overlap_tokens: usize,
}

/// What a chunk's prefix may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixRule {
    /// docs/contract.md#chunk-record by chunk type: lists and quotes none, prose only the text
    /// right before the own span, a table its header rows, code a re-opened
    /// fence; a suffix only closes a fence.
    Typed,
    /// Only overlap: the document text right before the own span; no suffix.
    PrecedingText,
    /// Overlap as in `PrecedingText`, except that a table chunk may instead
    /// carry its header rows (a table split by rows); no suffix.
    PrecedingOrTableHeader,
}

/// The validation rules a strategy declares on top of the universal ones
/// (docs/contract.md#validation and #strategies). The universal ones always apply: hard max, no empty
/// chunk, contiguous ordinals, `chunk_text == prefix + own span + suffix`,
/// own spans increasing, nothing lost outside front matter and thematic
/// breaks, ids recomputed equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// What prefixes and suffixes may hold.
    pub prefixes: PrefixRule,
    /// No chunk opens a code fence it does not close.
    pub fences_closed: bool,
    /// A table chunk starts with its header row.
    pub table_header: bool,
    /// A chunk under a heading has a headings path.
    pub headings_path: bool,
    /// The Russian enterprise specification's minimum: below-min chunks only where a boundary forces them.
    pub min_tokens: Option<usize>,
    /// Heading lines may be left out of every own span (`strip_headers`):
    /// they travel as metadata instead.
    pub headings_as_metadata: bool,
}

impl Rules {
    /// Valid Markdown in every chunk, by block type (strategies that keep
    /// blocks whole and split them as the structural strategy does): typed
    /// prefixes, fences closed, tables from their header row.
    pub const TYPED: Rules = Rules {
        prefixes: PrefixRule::Typed,
        fences_closed: true,
        table_header: true,
        headings_path: true,
        min_tokens: None,
        headings_as_metadata: false,
    };

    /// Only the universal rules, overlap as the only prefix.
    pub const UNIVERSAL: Rules = Rules {
        prefixes: PrefixRule::PrecedingText,
        fences_closed: false,
        table_header: false,
        headings_path: true,
        min_tokens: None,
        headings_as_metadata: false,
    };
}

/// Everything a chunker gets for one document, analysed once by the engine.
#[derive(Debug, Clone, Copy)]
pub struct ChunkInput<'a> {
    /// The normalized document all offsets refer to.
    pub doc: &'a NormalizedDocument,
    /// Its top-level Markdown blocks.
    pub blocks: &'a [Block],
    /// Its token counts in the profile's tokenizer.
    pub tokens: &'a DocumentTokens<'a>,
    /// Its byte offsets as code point offsets: built once per document for
    /// the records and their validation (issue 18: built twice, it was 2%
    /// of the Russian corpus's time).
    pub chars: &'a CharIndex<'a>,
    /// The caller's metadata.
    pub meta: &'a DocumentMeta,
    /// The profile being applied (common settings, chunker version).
    pub profile: &'a Profile,
    /// The sentence embedder, when the engine has one (semantic strategies).
    pub embedder: Option<&'a dyn Embedder>,
    /// The caller keeps only the chunks of this granularity (an auxiliary
    /// of a multi-granularity profile): a strategy may skip the rest.
    pub only: Option<crate::chunk::record::Granularity>,
}

/// A strategy configured by one profile's parameters: a pure function from
/// an analysed document to chunks. The engine validates what it returns.
pub trait Chunker: Send + Sync + std::fmt::Debug {
    /// The sizes it keeps.
    fn limits(&self) -> Limits;
    /// The rules its output keeps beyond the universal ones.
    fn rules(&self) -> Rules;
    /// The effective parameters, every default spelled out; configuring the
    /// strategy with them gives the same chunker.
    fn params(&self) -> toml::Table;
    /// Whether [`Chunker::chunk`] needs [`ChunkInput::embedder`]: a profile
    /// of such a chunker is refused (`EmbedderMissing`) by an engine built
    /// without one.
    fn needs_embedder(&self) -> bool {
        false
    }
    /// Whether the profile demands a GPU embedder (the Chunking System specification
    /// `gpu_semantic_checks`): the engine refuses to build without one.
    fn gpu_required(&self) -> bool {
        false
    }
    /// Granularities its chunks may have besides the profile's own (the
    /// `table` chunks of sliding windows that keep tables whole, the
    /// `section` chunks of the table strategy's structural rest).
    fn extra_granularities(&self) -> &'static [crate::chunk::record::Granularity] {
        &[]
    }
    /// Chunks one document.
    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError>;
    /// For tests and tools that need the concrete parameters.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Strategies by name, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    strategies: Vec<Arc<dyn Strategy>>,
}

impl Registry {
    /// No strategies: for programs that register only their own.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The built-in strategies (`builtin_strategies!` above), in order.
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        register_builtin(&mut r);
        r
    }

    /// Adds a strategy, replacing one of the same name.
    pub fn register(&mut self, strategy: impl Strategy + 'static) {
        let strategy: Arc<dyn Strategy> = Arc::new(strategy);
        match self
            .strategies
            .iter_mut()
            .find(|s| s.name() == strategy.name())
        {
            Some(slot) => *slot = strategy,
            None => self.strategies.push(strategy),
        }
    }

    /// The strategy called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Strategy> {
        self.strategies
            .iter()
            .find(|s| s.name() == name)
            .map(|s| s.as_ref())
    }

    /// Every registered name, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.strategies
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// Every strategy, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Strategy> {
        self.strategies.iter().map(|s| s.as_ref())
    }
}
