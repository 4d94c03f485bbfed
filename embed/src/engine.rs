//! An engine with what its profiles need from the model: the built-in
//! profiles plus profile sources, the `[embedder]` tokenizers profiles name,
//! and the sentence-embedding model when a profile that will be used needs
//! it. The worker (config, CLI) and the Python package both build their
//! engine here; each reads its own files and passes their text.

use std::path::PathBuf;
use std::sync::Arc;

use shared::embed::EmbedTokenizer;
use shared::llm::ChatTransport;
use shared::{Engine, EngineBuilder, ProfileSet};

use crate::{MiniLm, Options, TokenizerFile};

/// Where the model is, how it runs, and whether to load it whatever the
/// profiles need.
#[derive(Debug, Clone)]
pub struct ModelSetup {
    /// Load the model even if no profile in `used` needs it.
    pub always: bool,
    /// The unpacked model (`scripts/fetch-model.sh` puts it there).
    pub dir: PathBuf,
    /// Device, cache and batch size.
    pub options: Options,
}

/// What to build: profile sources `(file name, TOML text)` in order, the
/// experimental opt-in, multi-granularity profiles on or off.
#[derive(Debug, Clone, Copy)]
pub struct EngineSpec<'a> {
    /// `(file name shown in errors, TOML text)`, later files win.
    pub sources: &'a [(String, String)],
    /// Experimental strategies enabled.
    pub experimental: bool,
    /// Multi-granularity profiles allowed.
    pub multi_granularity: bool,
    /// The chat-completion client `llm_chaptering` profiles ask (the
    /// worker's HTTP client); `None` leaves those profiles unusable, saying
    /// why.
    pub chat: Option<&'a Arc<dyn ChatTransport>>,
}

/// Builds the engine. The model is loaded (and given to the engine) when
/// `model.always`, when a profile named in `used` needs it, or when some
/// profile sets `gpu_required` (then the engine refuses to build without a
/// GPU). Errors name the file or the profile and what is wrong.
pub fn build_engine(
    spec: EngineSpec<'_>,
    model: &ModelSetup,
    used: &[&str],
) -> Result<(Engine, Option<Arc<MiniLm>>), String> {
    let builder = || {
        let base = Engine::builder()
            .experimental(spec.experimental)
            .multi_granularity(spec.multi_granularity);
        let base = match spec.chat {
            Some(chat) => base.chat(chat.clone()),
            None => base,
        };
        spec.sources.iter().fold(base, |b, (file, src)| {
            b.profile_source(file.clone(), src.clone())
        })
    };
    let profiles = EngineBuilder::profile_set(builder()).map_err(|e| e.to_string())?;
    let windows = window_tokenizers(&profiles, model, used)?;
    let builder = || {
        windows.iter().fold(builder(), |b, (spelling, counter)| {
            b.window_tokenizer(spelling.clone(), counter.clone())
        })
    };
    let needs_model = model.always
        || profiles.iter().any(|p| {
            p.chunker().gpu_required()
                || (p.chunker().needs_embedder() && used.contains(&p.name.as_str()))
        });
    if !needs_model {
        return builder()
            .build()
            .map(|e| (e, None))
            .map_err(|e| e.to_string());
    }
    let loaded = MiniLm::load(&model.dir, model.options)
        .map(Arc::new)
        .map_err(|e| e.to_string())?;
    let engine = builder()
        .embedder(loaded.clone())
        .build()
        .map_err(|e| e.to_string())?;
    Ok((engine, Some(loaded)))
}

/// A loaded `[embedder] tokenizer`.
type WindowCounter = Arc<dyn EmbedTokenizer>;

/// The tokenizers that profiles' `[embedder]` tables name beyond
/// cl100k/o200k (`model`: the model's `tokenizer.json`; else a path),
/// loaded once each. One that cannot be loaded is an error when a profile
/// in `used` needs it; otherwise its profiles stay unusable (they say why
/// when asked to chunk).
fn window_tokenizers(
    profiles: &ProfileSet,
    model: &ModelSetup,
    used: &[&str],
) -> Result<Vec<(String, WindowCounter)>, String> {
    let mut out: Vec<(String, WindowCounter)> = Vec::new();
    for p in profiles.iter() {
        let Some(w) = &p.embedder else { continue };
        let path = match &w.tokenizer {
            shared::profile::WindowTokenizer::Bpe(_) => continue,
            shared::profile::WindowTokenizer::Model => model.dir.join("tokenizer.json"),
            shared::profile::WindowTokenizer::File(f) => PathBuf::from(f),
        };
        let spelling = w.tokenizer.spelling();
        if out.iter().any(|(s, _)| *s == spelling) {
            continue;
        }
        match TokenizerFile::load(&path) {
            Ok(t) => out.push((spelling, Arc::new(t))),
            Err(e) if used.contains(&p.name.as_str()) => {
                return Err(format!(
                    "profile {:?} fits chunks to the embedder {:?}: {e}",
                    p.name, w.name
                ))
            }
            Err(_) => {}
        }
    }
    Ok(out)
}
