//! Chunking strategies behind one [`Chunker`] trait, and the [`Registry`]
//! that maps a profile's `strategy` name to its implementation.
//!
//! [`Engine`] is the library's front door: bytes + metadata + profile name in,
//! normalized document + validated chunks out.

mod structural;

use std::collections::BTreeMap;

use crate::chunk::profile::{Profile, ProfileSet, DEFAULT_PROFILE};
use crate::chunk::record::{Chunk, DocumentMeta};
use crate::chunk::validate::validate;
use crate::error::ChunkError;
use crate::normalize::{normalize, NormalizedDocument};

pub use structural::Structural;

/// A chunking strategy: a pure function from a normalized document to chunks.
pub trait Chunker: Send + Sync + std::fmt::Debug {
    /// Registry name (`structural`).
    fn name(&self) -> &'static str;
    /// Implementation version; `chunker_version` is `name:version`.
    fn version(&self) -> &'static str;
    /// Chunks `doc` under `profile`. The result is validated by the caller.
    fn chunk(
        &self,
        doc: &NormalizedDocument,
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
#[derive(Debug)]
pub struct Engine {
    profiles: ProfileSet,
    registry: Registry,
}

impl Engine {
    /// The built-in profiles and strategies.
    pub fn builtin() -> Result<Self, ChunkError> {
        let engine = Self {
            profiles: ProfileSet::builtin()?,
            registry: Registry::builtin(),
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
        chunk_document(&self.registry, &doc, meta, profile)
    }
}

/// Chunks an already normalized document and validates the result.
pub fn chunk_document(
    registry: &Registry,
    doc: &NormalizedDocument,
    meta: &DocumentMeta,
    profile: &Profile,
) -> Result<ChunkedDocument, ChunkError> {
    let chunker = registry.for_profile(profile)?;
    let chunks = chunker.chunk(doc, meta, profile)?;
    validate(doc, &chunks, profile)?;
    Ok(ChunkedDocument {
        normalized: doc.text.clone(),
        chunks,
    })
}
