//! What a strategy is: the [`Strategy`] trait (a named, versioned factory
//! that reads a profile's `[params]`), the configured [`Chunker`] it
//! returns, and the [`ChunkInput`] a chunker gets for one document.

use std::sync::Arc;

use crate::chunk::record::{Chunk, DocumentMeta};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::explain::reason::EndReason;
use crate::markdown::{Block, CharIndex};
use crate::normalize::NormalizedDocument;
use crate::profile::settings::Settings;
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::DocumentTokens;

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
    /// What documents go through before this strategy chunks them, unless
    /// a profile says otherwise (`normalization`): the drop-in splitters
    /// take the text exactly as sent.
    fn normalization(&self) -> crate::normalize::Normalization {
        crate::normalize::Normalization::Standard
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
    pub profile: &'a Settings,
    /// The sentence embedder, when the engine has one (semantic strategies).
    pub embedder: Option<&'a dyn Embedder>,
    /// The chat-completion client, when the engine has one
    /// (`llm_chaptering`).
    pub chat: Option<&'a dyn crate::llm::ChatTransport>,
    /// The caller keeps only the chunks of this granularity (an auxiliary
    /// of a multi-granularity profile): a strategy may skip the rest.
    pub only: Option<crate::chunk::record::Granularity>,
}

/// A strategy configured by one profile's parameters: a pure function from
/// an analysed document to chunks. The engine validates what it returns.
/// The framework call a drop-in strategy reproduces, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framework {
    /// The call: `LangChain MarkdownHeaderTextSplitter`.
    pub call: &'static str,
    /// The package and version its parity fixtures were made with:
    /// `langchain-text-splitters 1.1.3`.
    pub package: &'static str,
    /// What its sizes (`chunk_size`) count: `tokens`, `chars` (code
    /// points), `words`; `None` when it has no size.
    pub unit: Option<&'static str>,
}

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
    /// Whether [`Chunker::chunk`] asks a chat model through
    /// [`ChunkInput::chat`] (`llm_chaptering`).
    fn needs_chat(&self) -> bool {
        false
    }
    /// The framework call a drop-in reproduces (`langchain.token`: LangChain's
    /// `TokenTextSplitter`); `None` for our own strategies.
    fn framework(&self) -> Option<Framework> {
        None
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
    /// Why each of `chunks` (what [`Chunker::chunk`] returned for `input`,
    /// sealed) ends, one reason per chunk, where this strategy knows better
    /// than the generic explainer ([`crate::explain::generic`]); `None`
    /// (the default) leaves it to that explainer. Never changes a chunk.
    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let _ = (input, chunks);
        None
    }
    /// For tests and tools that need the concrete parameters.
    fn as_any(&self) -> &dyn std::any::Any;
}
