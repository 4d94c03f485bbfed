//! Chunking strategies behind one [`Chunker`] trait, and the [`Registry`]
//! that maps a profile's `strategy` name to its implementation.
//!
//! [`Engine`] is the library's front door: bytes + metadata + profile name in,
//! normalized document + validated chunks out.

mod structural;

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::chunk::profile::{Profile, ProfileSet, DEFAULT_PROFILE};
use crate::chunk::record::{Chunk, DocumentMeta};
use crate::chunk::validate::validate;
use crate::error::ChunkError;
use crate::markdown::{parse_blocks, Block};
use crate::normalize::{normalize, NormalizedDocument};
use crate::tokens::{DocumentTokens, PieceCache, TokenizerKind};

pub use structural::Structural;

/// A chunking strategy: a pure function from a normalized document to chunks.
pub trait Chunker: Send + Sync + std::fmt::Debug {
    /// Registry name (`structural`).
    fn name(&self) -> &'static str;
    /// Implementation version; `chunker_version` is `name:version`.
    fn version(&self) -> &'static str;
    /// Chunks `doc` under `profile`. The caller analyses the document once
    /// and passes the results: `blocks` (its top-level Markdown blocks) and
    /// `tokens` (its token counts in the profile's tokenizer). The result is
    /// validated by the caller.
    fn chunk(
        &self,
        doc: &NormalizedDocument,
        blocks: &[Block],
        tokens: &DocumentTokens<'_>,
        meta: &DocumentMeta,
        profile: &Profile,
    ) -> Result<Vec<Chunk>, ChunkError>;
}

/// Strategies by name.
#[derive(Debug)]
pub struct Registry {
    chunkers: BTreeMap<&'static str, Box<dyn Chunker>>,
}

impl Registry {
    /// The built-in strategies.
    pub fn builtin() -> Self {
        let mut r = Self {
            chunkers: BTreeMap::new(),
        };
        r.register(Box::new(Structural));
        r
    }

    /// Adds (or replaces) a strategy under its name.
    pub fn register(&mut self, chunker: Box<dyn Chunker>) {
        self.chunkers.insert(chunker.name(), chunker);
    }

    /// The strategy a profile names.
    pub fn for_profile(&self, profile: &Profile) -> Result<&dyn Chunker, ChunkError> {
        self.chunkers
            .get(profile.strategy.as_str())
            .map(|c| c.as_ref())
            .ok_or_else(|| ChunkError::UnknownStrategy {
                profile: profile.name.clone(),
                strategy: profile.strategy.clone(),
                valid: self.chunkers.keys().map(|k| k.to_string()).collect(),
            })
    }
}

/// The result of chunking one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedDocument {
    /// The normalized document all offsets refer to.
    pub normalized: String,
    /// Validated chunks in ordinal order.
    pub chunks: Vec<Chunk>,
}

/// Profiles + strategies: everything needed to chunk documents.
///
/// An engine is shared by all threads that chunk (`Arc<Engine>`); it keeps a
/// small pool of [`PieceCache`]s so that counting a document reuses the
/// piece counts of earlier documents.
#[derive(Debug)]
pub struct Engine {
    profiles: ProfileSet,
    registry: Registry,
    // A std Mutex: held only to pop or push a cache, never across chunking,
    // so threads never wait on each other's work.
    caches: Mutex<Vec<PieceCache>>,
}

impl Engine {
    /// The built-in profiles and strategies.
    pub fn builtin() -> Result<Self, ChunkError> {
        let engine = Self {
            profiles: ProfileSet::builtin()?,
            registry: Registry::builtin(),
            caches: Mutex::new(Vec::new()),
        };
        // Every profile must name a registered strategy: checked once, here.
        for p in engine.profiles.iter() {
            engine.registry.for_profile(p)?;
        }
        Ok(engine)
    }

    /// The profiles this engine knows.
    pub fn profiles(&self) -> &ProfileSet {
        &self.profiles
    }

    /// Resolves a profile name (`None` = the default `spec-v1`).
    pub fn profile(&self, name: Option<&str>) -> Result<&Profile, ChunkError> {
        self.profiles.get(name.unwrap_or(DEFAULT_PROFILE))
    }

    /// Normalizes `markdown` and chunks it under the named profile, then
    /// validates the result against the SPEC 3.6 checklist.
    pub fn chunk(
        &self,
        markdown: &[u8],
        meta: &DocumentMeta,
        profile: Option<&str>,
    ) -> Result<ChunkedDocument, ChunkError> {
        let profile = self.profile(profile)?;
        let doc = normalize(markdown)?;
        let kind = profile.tokenizer;
        let mut cache = self.take_cache(kind);
        let tokens = DocumentTokens::with_cache(kind.counter(), &doc.text, &mut cache);
        self.put_cache(cache);
        let chunks = chunk_with_tokens(&self.registry, &doc, &tokens, meta, profile)?;
        drop(tokens);
        // The normalized text moves into the result: a large document is
        // never held twice.
        Ok(ChunkedDocument {
            normalized: doc.text,
            chunks,
        })
    }

    fn take_cache(&self, kind: TokenizerKind) -> PieceCache {
        let mut pool = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
        match pool.iter().position(|c| c.kind() == kind) {
            Some(i) => pool.swap_remove(i),
            None => PieceCache::new(kind),
        }
    }

    fn put_cache(&self, cache: PieceCache) {
        self.caches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(cache);
    }
}

/// Chunks an already normalized document and validates the result.
pub fn chunk_document(
    registry: &Registry,
    doc: &NormalizedDocument,
    meta: &DocumentMeta,
    profile: &Profile,
) -> Result<ChunkedDocument, ChunkError> {
    let tokens = DocumentTokens::new(profile.tokenizer.counter(), &doc.text);
    let chunks = chunk_with_tokens(registry, doc, &tokens, meta, profile)?;
    Ok(ChunkedDocument {
        normalized: doc.text.clone(),
        chunks,
    })
}

fn chunk_with_tokens(
    registry: &Registry,
    doc: &NormalizedDocument,
    tokens: &DocumentTokens<'_>,
    meta: &DocumentMeta,
    profile: &Profile,
) -> Result<Vec<Chunk>, ChunkError> {
    let chunker = registry.for_profile(profile)?;
    let blocks = parse_blocks(&doc.text);
    let chunks = chunker.chunk(doc, &blocks, tokens, meta, profile)?;
    validate(doc, &blocks, &chunks, profile)?;
    Ok(chunks)
}
