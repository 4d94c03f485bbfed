//! The MiniLM tokenizer as an embedder window (issue 17): counts equal the
//! word pieces the model reads (specials included, no truncation), and a
//! profile fitted to it never gives the model more than 256 of them, on the
//! project's fixtures. Skips, saying so, without the model
//! (`scripts/fetch-model.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use embed::{LoadError, MiniLm, Options, TokenizerFile, MAX_WORD_PIECES};
use shared::embed::EmbedTokenizer;
use shared::{DocumentMeta, Engine};

fn model_dir() -> Option<PathBuf> {
    testkit::model_file("tokenizer.json")
}

#[test]
fn counts_are_the_word_pieces_the_model_reads() {
    let Some(dir) = model_dir() else { return };
    let counter = TokenizerFile::load(&dir.join("tokenizer.json")).unwrap();
    let model = MiniLm::load(&dir, Options::default()).unwrap();
    for text in [
        "Hello, world!",
        "Сервис разбиения документов получает нормализованные документы.",
        "",
        "| a | b |\n|---|---|\n| 1 | 2 |",
    ] {
        assert_eq!(
            counter.count(text),
            model.input_ids(text).unwrap().len(),
            "{text:?}"
        );
    }
    // Beyond the model's truncation the count goes on (the window decides).
    let long = "word ".repeat(400);
    assert_eq!(counter.count(&long), 402);
    assert_eq!(model.input_ids(&long).unwrap().len(), MAX_WORD_PIECES);
}

#[test]
fn a_missing_tokenizer_file_is_named() {
    let err = TokenizerFile::load(Path::new("/nonexistent/tokenizer.json")).unwrap_err();
    assert!(matches!(err, LoadError::Missing { .. }));
    assert!(err.to_string().contains("/nonexistent/tokenizer.json"));
}

#[test]
fn a_profile_fitted_to_minilm_never_overruns_its_window() {
    let Some(dir) = model_dir() else { return };
    let counter = Arc::new(TokenizerFile::load(&dir.join("tokenizer.json")).unwrap());
    let profile = "name = \"fit\"\nstrategy = \"structural\"\nbreadcrumb_mode = \"always\"\n\n[embedder]\nname = \"all-MiniLM-L6-v2\"\nmax_tokens = 256\ntokenizer = \"model\"\n\n[params]\ntarget_tokens = 350\nhard_max_tokens = 520\noverlap = { percent_of_target = 15 }\n";
    let engine = Engine::builder()
        .profile_source("fit.toml", profile)
        .window_tokenizer("model", counter.clone())
        .build()
        .unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures");
    let mut checked = 0;
    let mut over_without = 0;
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "md") || path.ends_with("README.md") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let meta = DocumentMeta {
            document_id: path.display().to_string(),
            ..DocumentMeta::default()
        };
        let out = engine.chunk(&bytes, &meta, Some("fit")).unwrap();
        for c in &out.chunks {
            let n = counter.count(&c.embed_text);
            assert_eq!(c.embed_token_count, Some(n as u32));
            assert!(n <= 256, "{}: {n} word pieces", path.display());
            checked += 1;
        }
        let plain = Engine::builtin()
            .unwrap()
            .chunk(&bytes, &meta, Some("spec-v1"))
            .unwrap();
        over_without += plain
            .chunks
            .iter()
            .filter(|c| counter.count(&c.embed_text) > 256)
            .count();
    }
    assert!(checked > 100, "{checked}");
    // The fixtures do overrun the window without [embedder]: the test can fail.
    assert!(over_without > 5, "{over_without}");
}
