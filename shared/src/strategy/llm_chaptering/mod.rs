//! The experimental `llm_chaptering` strategy, profile `llm_chaptering-v1`
//! (LLM-assisted chunking): a chat model reads the document as numbered
//! units ([`crate::chunk::topic`]: sentences, whole tables, code blocks and
//! lists, headings) and answers which units open a new section
//! (`{"boundaries": [...]}`, [`prompt`]); every proposal is checked
//! ([`validate`]: inside the document, not inside a table, code block or
//! list, not right after a heading, at a coherence dip of the semantic
//! strategy's coherence) and the rest is discarded as hallucinated and
//! reported to the shell ([`crate::llm::ChatTransport::discarded`]); the
//! kept boundaries are packed under the hard max by the topic packer
//! (headings stay hard stops, a run over the hard max is cut at its weakest
//! coherence).
//!
//! The model is reached through the engine's [`crate::llm::ChatTransport`]
//! (the worker's HTTP client: an OpenAI-compatible chat-completions
//! endpoint, temperature 0, a fixed seed; time-outs, 429 and 5xx retried
//! with back-off, then `LLM_UNAVAILABLE`). An answer that cannot be read
//! is asked again (`answer_attempts`), then fails the same way. Readable
//! answers are cached in process by the SHA-256 of (prompt version, model,
//! section limit, prompt window, document text), `cache_entries` of them,
//! oldest evicted first: the same document asks once, a changed
//! `prompt_version` or model asks again.
//!
//! Determinism: the chunks are a pure function of the document and the
//! model's answers; with the cache, a document chunked twice in one process
//! gives the same bytes whatever the thread count. Across processes that
//! rests on the model answering the same at temperature 0 with the same
//! seed, which a hosted model does not promise.

mod answer;
mod cache;
mod prompt;
mod validate;

use std::sync::Arc;
use std::time::Duration;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::chunk::topic::{lexical_coherence, pack, units, PackLimits, Plan, Unit};
use crate::chunk::topic_explain::explain_gaps;
use crate::error::ChunkError;
use crate::explain::reason::EndReason;
use crate::llm::{ChatRequest, ChatTransport};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{embedding_coherence, parse_sizes, sizes_limits, sizes_table};

use cache::ProposalCache;

/// LLM-assisted chaptering.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlmChaptering;

const KEYS: [&str; 20] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "endpoint",
    "model",
    "max_section_tokens",
    "prompt_version",
    "coherence",
    "window",
    "min_dip",
    "max_prompt_tokens",
    "max_answer_tokens",
    "timeout_ms",
    "attempts",
    "retry_base_ms",
    "answer_attempts",
    "seed",
    "api_key_file",
    "api_key_env",
    "cache_entries",
];

/// Where the coherence that confirms a boundary comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coherence {
    /// The engine's sentence embedder (the semantic strategy's coherence).
    Embedding,
    /// Word overlap: no model needed.
    Lexical,
}

impl Strategy for LlmChaptering {
    fn name(&self) -> &'static str {
        "llm_chaptering"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "A chat model proposes section boundaries; kept where coherence dips, packed under the hard max"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/llm_chaptering-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (800, 1200, 120))?;
        let endpoint = p
            .opt_string("endpoint")?
            .unwrap_or_else(|| "http://127.0.0.1:8000/v1/chat/completions".to_owned());
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(p.error("endpoint", format!("= {endpoint:?} is not an http:// or https:// URL")));
        }
        let model = p.opt_string("model")?.unwrap_or_else(|| "gpt-4o-mini".to_owned());
        if model.trim().is_empty() {
            return Err(p.error("model", "is empty; name the model the endpoint serves"));
        }
        let coherence = match p.choice("coherence", "embedding", &["embedding", "lexical"])? {
            "lexical" => Coherence::Lexical,
            _ => Coherence::Embedding,
        };
        let ms = |key: &str, default: usize, range| p.usize_in(key, Some(default), range);
        Ok(Arc::new(LlmChapteringChunker {
            sizes,
            endpoint,
            model,
            max_section_tokens: p.usize_in("max_section_tokens", Some(1200), 50..=32_768)?,
            prompt_version: p.choice("prompt_version", "v1", &prompt::VERSIONS)?,
            coherence,
            window: p.usize_in("window", Some(3), 1..=10)?,
            min_dip: p.f64_in("min_dip", 0.0, 0.0..=2.0)?,
            max_prompt_tokens: p.usize_in("max_prompt_tokens", Some(8000), 500..=1_000_000)?,
            max_answer_tokens: p.usize_in("max_answer_tokens", Some(1024), 16..=32_768)?,
            timeout_ms: ms("timeout_ms", 60_000, 1..=3_600_000)?,
            attempts: p.usize_in("attempts", Some(4), 1..=10)?,
            retry_base_ms: ms("retry_base_ms", 500, 0..=60_000)?,
            answer_attempts: p.usize_in("answer_attempts", Some(2), 1..=5)?,
            seed: p.usize_in("seed", Some(0), 0..=u32::MAX as usize)?,
            api_key_file: p.opt_string("api_key_file")?,
            api_key_env: Some(
                p.opt_string("api_key_env")?
                    .unwrap_or_else(|| "CHUNK_WORKER_LLM_API_KEY".to_owned()),
            ),
            cache: ProposalCache::new(p.usize_in("cache_entries", Some(1024), 0..=1_000_000)?),
        }))
    }
}

/// The llm_chaptering strategy configured by one profile.
#[derive(Debug)]
pub struct LlmChapteringChunker {
    sizes: PackLimits,
    /// The chat-completions URL.
    pub endpoint: String,
    /// The model asked.
    pub model: String,
    /// The section limit the prompt states.
    pub max_section_tokens: usize,
    /// The prompt's version (part of the cache key).
    pub prompt_version: &'static str,
    /// Where the confirming coherence comes from.
    pub coherence: Coherence,
    /// Units on each side of a gap whose mean vectors are compared, and
    /// gaps on each side a dip is measured against.
    pub window: usize,
    /// The depth a dip must pass.
    pub min_dip: f64,
    /// The most estimated tokens of unit lines in one request.
    pub max_prompt_tokens: usize,
    /// The most tokens of an answer.
    pub max_answer_tokens: usize,
    timeout_ms: usize,
    attempts: usize,
    retry_base_ms: usize,
    answer_attempts: usize,
    seed: usize,
    api_key_file: Option<String>,
    api_key_env: Option<String>,
    cache: ProposalCache,
}

impl LlmChapteringChunker {
    /// The model's proposals for the document (cached).
    fn proposals(
        &self,
        chat: &dyn ChatTransport,
        text: &str,
        units: &[Unit],
    ) -> Result<Arc<Vec<i64>>, ChunkError> {
        let limits = format!("{}/{}", self.max_section_tokens, self.max_prompt_tokens);
        let key = cache::key(&[self.prompt_version, &self.model, &limits], text);
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit);
        }
        let lines: Vec<String> = units
            .iter()
            .enumerate()
            .map(|(i, u)| prompt::unit_line(i, u, text))
            .collect();
        let mut all = Vec::new();
        for w in prompt::windows(&lines, self.max_prompt_tokens) {
            all.extend(self.ask(chat, &lines[w])?);
        }
        let all = Arc::new(all);
        self.cache.put(key, all.clone());
        Ok(all)
    }

    /// One window: asked again while the answer cannot be read.
    fn ask(&self, chat: &dyn ChatTransport, lines: &[String]) -> Result<Vec<i64>, ChunkError> {
        let request = ChatRequest {
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            messages: prompt::messages(self.prompt_version, self.max_section_tokens, lines),
            max_answer_tokens: self.max_answer_tokens,
            seed: self.seed as u64,
            timeout: Duration::from_millis(self.timeout_ms as u64),
            attempts: self.attempts as u32,
            retry_base: Duration::from_millis(self.retry_base_ms as u64),
            api_key_file: self.api_key_file.clone(),
            api_key_env: self.api_key_env.clone(),
        };
        let mut last = 0;
        for _ in 0..self.answer_attempts {
            let text = chat.complete(&request).map_err(|e| ChunkError::Llm(e.0))?;
            match answer::parse(&text) {
                Ok(p) => {
                    if p.junk > 0 {
                        chat.discarded(&self.model, 0, "entries that are not unit numbers");
                    }
                    return Ok(p.units);
                }
                Err(answer::Malformed::NoList) => last = text.chars().count(),
            }
        }
        Err(ChunkError::Llm(format!(
            "the model {:?} at {} answered {} time(s) without a readable {{\"boundaries\": [...]}} list (last answer: {last} characters)",
            self.model, self.endpoint, self.answer_attempts
        )))
    }

    /// Units, kept boundaries and coherences.
    fn plan(&self, input: &ChunkInput<'_>) -> Result<Plan, ChunkError> {
        let chat = input
            .chat
            .ok_or_else(|| ChunkError::chat_missing(&input.profile.name))?;
        let text = input.doc.text.as_str();
        let units = units(input.blocks, input.tokens, self.sizes.hard_max_tokens);
        let coherence = match self.coherence {
            Coherence::Lexical => lexical_coherence(&units, text, self.window),
            Coherence::Embedding => {
                let embedder = input.embedder.ok_or_else(|| ChunkError::EmbedderMissing {
                    profile: input.profile.name.clone(),
                    strategy: input.profile.strategy.clone(),
                })?;
                embedding_coherence(embedder, text, &units, self.window)?
            }
        };
        if units.len() < 2 {
            let none = vec![false; units.len()];
            return Ok((units, none, coherence));
        }
        let proposed = self.proposals(chat, text, &units)?;
        let verdict = validate::judge(
            &units,
            input.blocks,
            &coherence,
            &proposed,
            self.window,
            self.min_dip as f32,
        );
        for (unit, why) in &verdict.discarded {
            chat.discarded(&self.model, usize::try_from(*unit).unwrap_or(0), why);
        }
        Ok((units, verdict.candidate, coherence))
    }
}

impl Chunker for LlmChapteringChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        let int = |n: usize| toml::Value::from(n as i64);
        t.insert("endpoint".into(), self.endpoint.clone().into());
        t.insert("model".into(), self.model.clone().into());
        t.insert("max_section_tokens".into(), int(self.max_section_tokens));
        t.insert("prompt_version".into(), self.prompt_version.into());
        let coherence = match self.coherence {
            Coherence::Embedding => "embedding",
            Coherence::Lexical => "lexical",
        };
        t.insert("coherence".into(), coherence.into());
        t.insert("window".into(), int(self.window));
        t.insert("min_dip".into(), self.min_dip.into());
        t.insert("max_prompt_tokens".into(), int(self.max_prompt_tokens));
        t.insert("max_answer_tokens".into(), int(self.max_answer_tokens));
        t.insert("timeout_ms".into(), int(self.timeout_ms));
        t.insert("attempts".into(), int(self.attempts));
        t.insert("retry_base_ms".into(), int(self.retry_base_ms));
        t.insert("answer_attempts".into(), int(self.answer_attempts));
        t.insert("seed".into(), int(self.seed));
        if let Some(f) = &self.api_key_file {
            t.insert("api_key_file".into(), f.clone().into());
        }
        if let Some(e) = &self.api_key_env {
            t.insert("api_key_env".into(), e.clone().into());
        }
        t.insert("cache_entries".into(), int(self.cache.capacity));
        t
    }

    fn needs_embedder(&self) -> bool {
        self.coherence == Coherence::Embedding
    }

    fn needs_chat(&self) -> bool {
        true
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let (units, candidate, coherence) = self.plan(input)?;
        let spans = pack(&units, &candidate, &coherence, input.tokens, self.sizes);
        Ok(chunks_from_spans(input, &spans, true))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let (units, candidate, coherence) = self.plan(input).ok()?;
        let gaps = (units.as_slice(), candidate.as_slice(), coherence.as_slice());
        Some(explain_gaps(input, chunks, gaps, self.limits(), |_, score| {
            Some(EndReason::ModelBoundary {
                model: self.model.clone(),
                score,
            })
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
