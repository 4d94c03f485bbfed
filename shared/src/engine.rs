//! The library's front door: [`Engine`] turns bytes + metadata + a profile
//! name into a normalized document and validated chunks.
//!
//! An engine is built once per process from a [`Registry`] of strategies and
//! the profiles: the built-in ones plus any the caller loaded from files
//! ([`EngineBuilder::profile_source`]; this crate does no I/O, the caller
//! reads the file). Every document is analysed once (normalization, blocks,
//! token counts) and the same analysis feeds the strategy and validation.

use std::sync::Arc;

use crate::chunk::record::{Chunk, DocumentMeta};
use crate::chunk::validate::validate;
use crate::embed::{EmbedTokenizer, Embedder};
use crate::error::ChunkError;
use crate::explain::{explain_chunks, EndReason};
use crate::llm::ChatTransport;
use crate::markdown::{parse_blocks, Block, CharIndex};
use crate::normalize::{normalize_with_blocks, prepare, Normalization, NormalizedDocument};
use crate::profile::model::{Profile, ProfileOrigin};
use crate::profile::{ProfileSet, DEFAULT_PROFILE};
use crate::strategy::chunker::ChunkInput;
use crate::strategy::Registry;
use crate::tokens::DocumentTokens;

/// The result of chunking one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedDocument {
    /// The normalized document all offsets refer to.
    pub normalized: String,
    /// Validated chunks in ordinal order.
    pub chunks: Vec<Chunk>,
    /// The profile applied.
    pub profile: String,
    /// `strategy:version` that produced the chunks (also when there are none).
    pub chunker_version: String,
    /// The tokenizer all counts are in.
    pub tokenizer: &'static str,
}

/// Builds an [`Engine`]: strategies, extra profiles, experimental opt-in.
#[derive(Debug)]
pub struct EngineBuilder {
    registry: Registry,
    sources: Vec<(ProfileOrigin, String)>,
    experimental: bool,
    multi_granularity: bool,
    embedder: Option<Arc<dyn Embedder>>,
    chat: Option<Arc<dyn ChatTransport>>,
    window_tokenizers: Vec<(String, Arc<dyn EmbedTokenizer>)>,
}

impl EngineBuilder {
    /// The counter of an `[embedder] tokenizer` that is not cl100k/o200k:
    /// `spelling` is how profiles name it (`model`, a `tokenizer.json`
    /// path), `counter` the loaded tokenizer (the `embed` crate's).
    pub fn window_tokenizer(
        mut self,
        spelling: impl Into<String>,
        counter: Arc<dyn EmbedTokenizer>,
    ) -> Self {
        self.window_tokenizers.push((spelling.into(), counter));
        self
    }

    /// The sentence embedder semantic profiles use (the `embed` crate's
    /// model, or a [`crate::ToyEmbedder`] in tests).
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// The chat-completion client `llm_chaptering` profiles ask (the
    /// worker's HTTP client, or a [`crate::ToyChat`] in tests).
    pub fn chat(mut self, chat: Arc<dyn ChatTransport>) -> Self {
        self.chat = Some(chat);
        self
    }

    /// Uses `registry` instead of the built-in strategies (its strategies'
    /// built-in profiles come with it).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Adds the profile in `toml`, read by the caller from `file`.
    pub fn profile_source(mut self, file: impl Into<String>, toml: impl Into<String>) -> Self {
        self.sources
            .push((ProfileOrigin::File(file.into()), toml.into()));
        self
    }

    /// Allows profiles of experimental strategies to be used (the Chunking System specification).
    pub fn experimental(mut self, enabled: bool) -> Self {
        self.experimental = enabled;
        self
    }

    /// `false` runs every multi-granularity profile's primary strategy alone
    /// (the `multi_granularity` setting); `true` (the default) leaves each
    /// profile's own `multi_granularity` in charge.
    pub fn multi_granularity(mut self, enabled: bool) -> Self {
        self.multi_granularity = enabled;
        self
    }

    /// The profiles this builder would give the engine, parsed and checked
    /// (to decide, say, whether a model must be loaded before building).
    pub fn profile_set(self) -> Result<ProfileSet, ChunkError> {
        let mut profiles = ProfileSet::builtin(&self.registry)?;
        for (origin, src) in self.sources {
            profiles.add(Profile::parse(&src, origin, &self.registry)?)?;
        }
        Ok(profiles)
    }

    /// Parses and checks every profile. A profile with `gpu_required` and
    /// no GPU embedder stops the build (`GpuRequired`).
    pub fn build(mut self) -> Result<Engine, ChunkError> {
        let registry = self.registry.clone();
        let (experimental, embedder) = (self.experimental, self.embedder.clone());
        let chat = self.chat.clone();
        let window_tokenizers = std::mem::take(&mut self.window_tokenizers);
        let multi = self.multi_granularity;
        let mut profiles = self.profile_set()?;
        if !multi {
            profiles.disable_multi_granularity();
        }
        for (spelling, counter) in &window_tokenizers {
            profiles.attach_window_tokenizer(spelling, counter);
        }
        for p in profiles.iter().filter(|p| p.chunker().gpu_required()) {
            let reason = match &embedder {
                None => "no sentence-embedding model is loaded".to_owned(),
                Some(e) if !e.on_gpu() => format!(
                    "the embedding model {} runs on the CPU: no CUDA device is available",
                    e.id()
                ),
                Some(_) => continue,
            };
            return Err(ChunkError::GpuRequired {
                profile: p.name.clone(),
                reason,
            });
        }
        Ok(Engine {
            profiles,
            registry,
            experimental,
            embedder,
            chat,
        })
    }
}

/// Profiles + strategies: everything needed to chunk documents.
///
/// An engine is shared by all threads that chunk (`Arc<Engine>`); counting a
/// document reuses the piece counts of earlier documents through the
/// thread's [`crate::tokens::PieceCache`].
#[derive(Debug)]
pub struct Engine {
    profiles: ProfileSet,
    registry: Registry,
    experimental: bool,
    embedder: Option<Arc<dyn Embedder>>,
    chat: Option<Arc<dyn ChatTransport>>,
}

impl Engine {
    /// The built-in strategies and profiles, experimental ones disabled.
    pub fn builtin() -> Result<Self, ChunkError> {
        Self::builder().build()
    }

    /// A builder starting from the built-in strategies and profiles.
    pub fn builder() -> EngineBuilder {
        EngineBuilder {
            registry: Registry::builtin(),
            sources: Vec::new(),
            experimental: false,
            multi_granularity: true,
            embedder: None,
            chat: None,
            window_tokenizers: Vec::new(),
        }
    }

    /// Puts every profile's `embed_text` under breadcrumb `mode` (the per-chunk file format
    /// `breadcrumbMode`; the CLI's `--breadcrumb-mode`). Ids, spans and
    /// every other field stay as the profiles make them.
    pub fn set_breadcrumb_mode(&mut self, mode: crate::profile::settings::BreadcrumbMode) {
        self.profiles.set_breadcrumb_mode(mode);
    }

    /// Every profile this engine knows, usable or not.
    pub fn profiles(&self) -> &ProfileSet {
        &self.profiles
    }

    /// The strategies.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Whether experimental strategies may be used.
    pub fn experimental_enabled(&self) -> bool {
        self.experimental
    }

    /// The sentence embedder, when one was given.
    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
    }

    /// The chat-completion client, when one was given.
    pub fn chat(&self) -> Option<&dyn ChatTransport> {
        self.chat.as_deref()
    }

    /// Resolves a profile name (`None` = the default `spec-v1`) to a profile
    /// that may be used: unknown names and experimental profiles while
    /// experimental strategies are disabled are `UNKNOWN_PROFILE`.
    pub fn profile(&self, name: Option<&str>) -> Result<&Profile, ChunkError> {
        let profile = self.profiles.get(name.unwrap_or(DEFAULT_PROFILE))?;
        if profile.experimental && !self.experimental {
            return Err(ChunkError::ExperimentalDisabled {
                profile: profile.name.clone(),
                strategy: profile.strategy.clone(),
            });
        }
        if profile.needs_embedder() && self.embedder.is_none() {
            return Err(ChunkError::EmbedderMissing {
                profile: profile.name.clone(),
                strategy: profile.strategy.clone(),
            });
        }
        if profile.chunker().needs_chat() && self.chat.is_none() {
            return Err(ChunkError::chat_missing(&profile.name));
        }
        Ok(profile)
    }

    /// Normalizes `markdown` and chunks it under the named profile, then
    /// validates the result (docs/contract.md#validation).
    pub fn chunk(
        &self,
        markdown: &[u8],
        meta: &DocumentMeta,
        profile: Option<&str>,
    ) -> Result<ChunkedDocument, ChunkError> {
        let profile = self.profile(profile)?;
        window_ready(profile)?;
        let counter = profile.tokenizer.counter();
        let (doc, tokens, blocks);
        if crate::multi::parallel(profile, markdown.len()) {
            // A multi-granularity profile uses the cores from the start: the
            // blocks are parsed while the tokens are counted.
            doc = prepare(markdown, profile.normalization)?;
            (tokens, blocks) = std::thread::scope(|s| {
                let blocks = s.spawn(|| parse_blocks(&doc.text));
                let tokens = DocumentTokens::with_thread_cache(counter, &doc.text);
                // A panic there panics here, as it would have unthreaded.
                let blocks = blocks.join().unwrap_or_else(|_| parse_blocks(&doc.text));
                (tokens, blocks)
            });
        } else if profile.normalization == Normalization::Standard {
            // One parse serves normalization and the blocks.
            (doc, blocks) = normalize_with_blocks(markdown)?;
            // The thread's piece cache, shared with every other count on
            // this thread (breadcrumbs, probes) and kept across documents.
            tokens = DocumentTokens::with_thread_cache(counter, &doc.text);
        } else {
            // The text as sent (the drop-in splitters).
            doc = prepare(markdown, profile.normalization)?;
            blocks = parse_blocks(&doc.text);
            tokens = DocumentTokens::with_thread_cache(counter, &doc.text);
        }
        let services = (self.embedder(), self.chat());
        let chunks = chunk_with_tokens(&doc, &blocks, &tokens, meta, profile, services)?;
        drop(tokens);
        // The normalized text moves into the result: a large document is
        // never held twice.
        Ok(ChunkedDocument {
            normalized: doc.text,
            chunks,
            profile: profile.name.clone(),
            chunker_version: profile.chunker_version.clone(),
            tokenizer: profile.tokenizer.name(),
        })
    }

    /// Chunks `markdown` exactly as [`Engine::chunk`] does, then says why
    /// each chunk ends ([`crate::explain`]), one reason per chunk in the
    /// same order. The chunks are [`Engine::chunk`]'s, byte for byte: the
    /// analysis is made again from the normalized text for the explainer.
    pub fn explain(
        &self,
        markdown: &[u8],
        meta: &DocumentMeta,
        profile: Option<&str>,
    ) -> Result<(ChunkedDocument, Vec<EndReason>), ChunkError> {
        let out = self.chunk(markdown, meta, profile)?;
        let profile = self.profile(profile)?;
        let doc = prepare(markdown, profile.normalization)?;
        let blocks = parse_blocks(&doc.text);
        let tokens = DocumentTokens::with_thread_cache(profile.tokenizer.counter(), &doc.text);
        let chars = CharIndex::new(&doc.text);
        let input = ChunkInput {
            doc: &doc,
            blocks: &blocks,
            tokens: &tokens,
            chars: &chars,
            meta,
            profile,
            embedder: self.embedder(),
            chat: self.chat(),
            only: None,
        };
        let reasons = explain_chunks(&input, profile, &out.chunks);
        drop(tokens);
        Ok((out, reasons))
    }
}

/// Chunks an already normalized document under `profile` and validates the
/// result (no engine needed: the profile carries its configured strategy;
/// a semantic profile needs `embedder`).
pub fn chunk_document(
    doc: &NormalizedDocument,
    meta: &DocumentMeta,
    profile: &Profile,
    embedder: Option<&dyn Embedder>,
) -> Result<ChunkedDocument, ChunkError> {
    if profile.needs_embedder() && embedder.is_none() {
        return Err(ChunkError::EmbedderMissing {
            profile: profile.name.clone(),
            strategy: profile.strategy.clone(),
        });
    }
    window_ready(profile)?;
    let tokens = DocumentTokens::new(profile.tokenizer.counter(), &doc.text);
    let blocks = parse_blocks(&doc.text);
    let chunks = chunk_with_tokens(doc, &blocks, &tokens, meta, profile, (embedder, None))?;
    Ok(ChunkedDocument {
        normalized: doc.text.clone(),
        chunks,
        profile: profile.name.clone(),
        chunker_version: profile.chunker_version.clone(),
        tokenizer: profile.tokenizer.name(),
    })
}

/// A profile fitted to an embedder needs that embedder's counter.
fn window_ready(profile: &Profile) -> Result<(), ChunkError> {
    match &profile.embedder {
        Some(w) if w.counter().is_none() => Err(ChunkError::WindowTokenizerMissing {
            profile: profile.name.clone(),
            tokenizer: w.tokenizer.spelling(),
        }),
        _ => Ok(()),
    }
}

fn chunk_with_tokens(
    doc: &NormalizedDocument,
    blocks: &[Block],
    tokens: &DocumentTokens<'_>,
    meta: &DocumentMeta,
    profile: &Profile,
    (embedder, chat): (Option<&dyn Embedder>, Option<&dyn ChatTransport>),
) -> Result<Vec<Chunk>, ChunkError> {
    let chars = CharIndex::new(&doc.text);
    let input = ChunkInput {
        doc,
        blocks,
        tokens,
        chars: &chars,
        meta,
        profile,
        embedder,
        chat,
        only: None,
    };
    if !profile.active_auxiliaries().is_empty() {
        return crate::multi::chunk_all(&input, profile);
    }
    let mut chunks = profile.chunker().chunk(&input)?;
    crate::chunk::seal::seal(&mut chunks, profile, profile.id_primary);
    validate(doc, blocks, &chunks, profile, &chars)?;
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;
    use crate::strategy::chunker::Chunker;
    use crate::strategy::chunker::Strategy;
    use crate::strategy::limits::Limits;
    use crate::strategy::limits::Rules;
    use crate::strategy::params::ParamError;
    use crate::strategy::params::Params;

    /// A strategy defined outside the library: one chunk per document;
    /// `Whole(true)` is `boom`, which panics instead.
    #[derive(Debug)]
    struct Whole(bool);

    #[derive(Debug)]
    struct WholeChunker(bool);

    impl Strategy for Whole {
        fn name(&self) -> &'static str {
            if self.0 {
                "boom"
            } else {
                "whole"
            }
        }
        fn version(&self) -> &'static str {
            "0.1.0"
        }
        fn summary(&self) -> &'static str {
            "the whole document as one chunk"
        }
        fn experimental(&self) -> bool {
            true
        }
        fn param_keys(&self) -> &'static [&'static str] {
            &[]
        }
        fn configure(&self, _: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
            Ok(Arc::new(WholeChunker(self.0)))
        }
    }

    impl Chunker for WholeChunker {
        fn limits(&self) -> Limits {
            Limits {
                target_tokens: 100_000,
                hard_max_tokens: 100_000,
                min_tokens: 0,
                overlap_tokens: 0,
            }
        }
        fn rules(&self) -> Rules {
            Rules::UNIVERSAL
        }
        fn params(&self) -> toml::Table {
            toml::Table::new()
        }
        fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
            assert!(!self.0, "boom");
            let span = 0..input.doc.text.len();
            Ok(crate::chunk::span::chunks_from_spans(input, &[span], true))
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    const WHOLE_PROFILE: &str = "name = \"whole-v1\"\nstrategy = \"whole\"\n";

    #[test]
    fn a_registered_strategy_runs_from_a_profile_file_once_experimental_is_enabled() {
        let mut registry = Registry::builtin();
        registry.register(Whole(false));
        let build = |experimental| {
            Engine::builder()
                .registry(registry.clone())
                .profile_source("whole.toml", WHOLE_PROFILE)
                .experimental(experimental)
                .build()
                .unwrap()
        };
        let off = build(false);
        let err = off.profile(Some("whole-v1")).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::UnknownProfile);
        assert!(
            err.to_string().contains("experimental.enabled = true"),
            "{err}"
        );
        let on = build(true);
        let doc = on
            .chunk(
                b"# T\n\nSome text.\n",
                &DocumentMeta::default(),
                Some("whole-v1"),
            )
            .unwrap();
        assert_eq!(doc.chunks.len(), 1);
        assert_eq!(doc.chunker_version, "whole:0.1.0");
        assert_eq!(doc.chunks[0].chunk_text, "# T\n\nSome text.");
    }

    #[test]
    fn a_panicking_auxiliary_is_a_strategy_error_on_one_thread_and_on_several() {
        let mut registry = Registry::builtin();
        registry.register(Whole(true));
        let engine = Engine::builder()
            .registry(registry)
            .profile_source(
                "boom.toml",
                "name = \"boom-v1\"\nstrategy = \"structural\"\n\n[params]\ntarget_tokens = 200\nsoft_max_tokens = 250\nhard_max_tokens = 300\n\n[[auxiliary]]\nstrategy = \"boom\"\ngranularity = \"window\"\n",
            )
            .experimental(true)
            .build()
            .unwrap();
        let small = b"# T\n\nSome text.\n".to_vec();
        // Large enough for the branches to run on several threads.
        let large = "Some words of text in a paragraph.\n\n"
            .repeat(2000)
            .into_bytes();
        for doc in [small, large] {
            let err = engine
                .chunk(&doc, &DocumentMeta::default(), Some("boom-v1"))
                .unwrap_err();
            assert!(
                matches!(&err, ChunkError::StrategyPanicked { strategy } if strategy == "boom"),
                "{err}"
            );
        }
    }

    #[test]
    fn the_default_engine_knows_every_builtin_profile_and_reports_the_chunker() {
        let engine = Engine::builtin().unwrap();
        assert_eq!(
            engine.profiles().names(),
            [
                "spec-v1",
                "enterprise-v1",
                "docs-v1",
                "recursive-v1",
                "retrieval-v1",
                "retrieval-minilm-v1",
                "retrieval-lexical-v1",
                "retrieval-minilm-v2",
                "token-v1",
                "markdown-v1",
                "semantic-v1",
                "semantic-cluster-v1",
                "texttiling-v1",
                "c99-v1",
                "bayesseg-v1",
                "lda_topic-v1",
                "graph_partition-v1",
                "discourse_segmenter-v1",
                "graphrag-v1",
                "window-v1",
                "pmc-v1",
                "ctgov-v1",
                "dailymed-v1",
                "clinical-v1",
                "table-v1",
                "table-rows-v1",
                "table-summary-v1",
                "document-v1",
                "hierarchy-v1",
                "layout-v1",
                "layout_aware-v1",
                "grobid-v1",
                "llm_chaptering-v1",
                "langchain.character",
                "langchain.token",
                "langchain.markdown",
                "haystack.split",
                "langchain.recursive",
                "llama.sentence",
                "llama.hierarchical",
                "llama.semantic",
                "unstructured.by_title"
            ]
        );
        let doc = engine
            .chunk(b"Text.\n", &DocumentMeta::default(), None)
            .unwrap();
        assert_eq!(
            (doc.profile.as_str(), doc.chunker_version.as_str()),
            ("spec-v1", "structural:1.3.0")
        );
    }
}
