//! The drop-in `llama.hierarchical` strategy, profile `llama.hierarchical`:
//! LlamaIndex's `HierarchicalNodeParser.from_defaults(chunk_sizes,
//! chunk_overlap)` (llama-index-core 0.14.25; `scripts/peers/ADAPTERS.md`
//! section 5): level 0 is LlamaIndex's `SentenceSplitter` of the first size
//! over the document, each node of a level split again by the next size
//! (see [`crate::strategy::llama_sentence`] and its
//! [`hierarchical_nodes`]). One configured chunker gives one level's nodes
//! (`level`), so a profile holds the levels as its granularities: the
//! built-in one has level 0 as `section` chunks (primary), level 1 as
//! `paragraph` and level 2 as `window` auxiliaries, each repeating the
//! same `chunk_sizes` and `chunk_overlap`.
//!
//! A node's parent is the engine's (`parent_chunk_id`: the coarser chunk
//! whose own span holds the node's own span, its own span being what it
//! adds after the node before it); LlamaIndex's is the node it was split
//! from. They agree on every node of the parity fixtures.
//!
//! Intended differences: besides `llama.sentence`'s (the empty document is
//! no record here, one empty node per level there), a node whose text lies
//! wholly inside the node before it on its level (a parent's overlap split
//! again into a node of its own) is not a record; none of the fixtures has
//! one. The levels a profile can hold are its granularities (three in the
//! built-in profile: section, paragraph, window).

use std::sync::Arc;

use regex::Regex;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::sentence::punkt::Punkt;
use crate::strategy::llama_sentence::{
    hierarchical_nodes, LlamaTokens, SentenceSplitter, DEFAULT_SECONDARY_REGEX,
};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::TokenizerKind;

/// LlamaIndex's `HierarchicalNodeParser`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlamaHierarchical;

const KEYS: [&str; 3] = ["chunk_sizes", "chunk_overlap", "level"];

/// LlamaIndex's default `chunk_sizes`.
const DEFAULT_SIZES: [usize; 3] = [2048, 512, 128];

impl Strategy for LlamaHierarchical {
    fn name(&self) -> &'static str {
        "llama.hierarchical"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LlamaIndex's HierarchicalNodeParser (llama-index-core 0.14.25): one level of SentenceSplitter nodes split from the level above, with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/llama.hierarchical.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let chunk_sizes = match p.value("chunk_sizes") {
            None => DEFAULT_SIZES.to_vec(),
            Some(toml::Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|v| {
                    v.as_integer()
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|n| (1..=1_000_000).contains(n))
                })
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| {
                    p.error(
                        "chunk_sizes",
                        "holds a value that is not an integer in 1..=1000000",
                    )
                })?,
            Some(v) => {
                return Err(p.error(
                    "chunk_sizes",
                    format!("= {v} is not valid; expected a non-empty array of token sizes, e.g. [2048, 512, 128]"),
                ))
            }
        };
        let chunk_overlap = p.usize_in("chunk_overlap", Some(20), 0..=1_000_000)?;
        if let Some(&small) = chunk_sizes.iter().filter(|&&s| s < chunk_overlap).min() {
            return Err(p.error(
                "chunk_overlap",
                format!("= {chunk_overlap} is larger than the chunk size {small} of a level; it must not be (LlamaIndex: Got a larger chunk overlap than chunk size)"),
            ));
        }
        let level = p.usize_in("level", Some(0), 0..=chunk_sizes.len() - 1)?;
        let secondary = Regex::new(DEFAULT_SECONDARY_REGEX)
            .map_err(|e| p.error("chunk_sizes", format!("(internal) {e}")))?;
        Ok(Arc::new(LlamaHierarchicalChunker {
            splitter: SentenceSplitter {
                chunk_size: chunk_sizes[0],
                chunk_overlap,
                separator: " ".to_owned(),
                paragraph_separator: "\n\n\n".to_owned(),
                secondary,
                punkt: Punkt::untrained(),
                tokens: LlamaTokens::new(TokenizerKind::Cl100kBase),
            },
            chunk_sizes,
            level,
        }))
    }
}

/// The llama.hierarchical strategy configured by one profile (one level).
#[derive(Debug, Clone)]
pub struct LlamaHierarchicalChunker {
    splitter: SentenceSplitter,
    /// The size of each level, top first (`chunk_sizes`).
    pub chunk_sizes: Vec<usize>,
    /// The level whose nodes are this chunker's chunks (0: the top).
    pub level: usize,
}

impl Chunker for LlamaHierarchicalChunker {
    fn limits(&self) -> Limits {
        let size = self.chunk_sizes.get(self.level).copied().unwrap_or(1);
        Limits {
            target_tokens: size,
            // As llama.sentence: sums of pieces' counts, special tokens.
            hard_max_tokens: size.saturating_mul(8).saturating_add(64),
            min_tokens: 0,
            overlap_tokens: self.splitter.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LlamaIndex HierarchicalNodeParser",
            package: "llama-index-core 0.14.25",
            unit: Some("tokens"),
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let sizes: Vec<toml::Value> = self
            .chunk_sizes
            .iter()
            .map(|&s| toml::Value::Integer(s as i64))
            .collect();
        t.insert("chunk_sizes".into(), toml::Value::Array(sizes));
        t.insert(
            "chunk_overlap".into(),
            (self.splitter.chunk_overlap as i64).into(),
        );
        t.insert("level".into(), (self.level as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let splitter = SentenceSplitter {
            tokens: LlamaTokens::new(input.profile.tokenizer),
            ..self.splitter.clone()
        };
        let text = input.doc.text.as_str();
        let levels = &self.chunk_sizes[..=self.level.min(self.chunk_sizes.len() - 1)];
        let spans: Vec<_> = hierarchical_nodes(text, &splitter, levels)
            .into_iter()
            .filter(|n| n.level == self.level)
            .map(|n| n.range)
            .collect();
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn refuse(src: &str) -> String {
        let table: toml::Table = src.parse().unwrap();
        let p = Params::new(&table, "params");
        LlamaHierarchical.configure(&p).map(|_| ()).unwrap_err().0
    }

    #[test]
    fn configure_names_the_key_it_refuses() {
        assert!(refuse("chunk_sizes = []").contains("params.chunk_sizes"));
        assert!(refuse("chunk_sizes = [512, 0]").contains("params.chunk_sizes"));
        assert!(refuse("chunk_sizes = \"512\"").contains("params.chunk_sizes"));
        assert!(refuse("chunk_sizes = [512, 8]\nchunk_overlap = 10").contains("params.chunk_overlap"));
        assert!(refuse("chunk_sizes = [512, 128]\nlevel = 2").contains("params.level"));
        let table: toml::Table = "level = 2".parse().unwrap();
        let c = LlamaHierarchical
            .configure(&Params::new(&table, "params"))
            .unwrap();
        assert_eq!(c.limits().target_tokens, 128);
        assert_eq!(c.params()["chunk_overlap"].as_integer(), Some(20));
    }
}
