//! The real model against reference vectors computed once with
//! sentence-transformers (`scripts/semantic/reference_vectors.py`), plus the
//! loading errors. Tests that need the model skip, saying so, when
//! `models/all-MiniLM-L6-v2` (or `$CHUNK_WORKER_MODEL_DIR`) is absent, and
//! fail under `CI=true` (`testkit`); CI fetches it first
//! (`scripts/fetch-model.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use embed::{LoadError, MiniLm, Options, MODEL_SHA256};
use shared::embed::{cosine, Embedder};

/// Where the model is (the tests that read it ask [`model`] first).
fn model_dir() -> PathBuf {
    testkit::model_dir().unwrap_or_default()
}

fn model() -> Option<&'static MiniLm> {
    static MODEL: OnceLock<Option<MiniLm>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = testkit::model_dir()?;
            Some(MiniLm::load(&dir, Options::default()).expect("the fetched model loads"))
        })
        .as_ref()
}

#[derive(serde::Deserialize)]
struct Reference {
    model_sha256: String,
    sentences: Vec<RefSentence>,
}

#[derive(serde::Deserialize)]
struct RefSentence {
    id: String,
    text: String,
    input_ids: Vec<u32>,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm_reference.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn vectors_match_sentence_transformers() {
    let Some(m) = model() else { return };
    let r = reference();
    assert_eq!(r.model_sha256, MODEL_SHA256);
    let texts: Vec<&str> = r.sentences.iter().map(|s| s.text.as_str()).collect();
    let ours = m.embed(&texts).unwrap();
    for (s, v) in r.sentences.iter().zip(&ours) {
        assert_eq!(
            m.input_ids(&s.text).unwrap(),
            s.input_ids,
            "word pieces of {}",
            s.id
        );
        let c = cosine(v, &s.vector);
        assert!(c > 0.999, "{}: cosine {c}", s.id);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{}: norm {norm}", s.id);
    }
    assert!(
        r.sentences.iter().any(|s| s.input_ids.len() == 256),
        "truncation exercised"
    );
}

#[test]
fn a_vector_depends_on_its_text_only() {
    let Some(m) = model() else { return };
    let r = reference();
    let texts: Vec<&str> = r.sentences.iter().map(|s| s.text.as_str()).collect();
    let fresh = MiniLm::load(
        &model_dir(),
        Options {
            cache_entries: 0,
            batch_tokens: 64,
            ..Options::default()
        },
    )
    .unwrap();
    let together = fresh.embed(&texts).unwrap();
    for (t, v) in texts.iter().zip(&together) {
        let alone = fresh.embed(&[t]).unwrap();
        assert_eq!(&alone[0], v, "bit-identical alone and in a batch: {t:?}");
        assert_eq!(
            &m.embed(&[t]).unwrap()[0],
            v,
            "batch size and cache change nothing"
        );
    }
}

fn copy_model(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["model.safetensors", "config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(f), to.join(f)).unwrap();
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("embed-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn a_missing_directory_names_the_path_and_the_fetch_script() {
    let dir = scratch("missing");
    let err = MiniLm::load(&dir, Options::default()).unwrap_err();
    assert!(matches!(err, LoadError::Missing { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&dir.display().to_string()) && msg.contains("scripts/fetch-model.sh"),
        "{msg}"
    );
}

#[test]
fn wrong_weights_name_the_file_and_both_hashes() {
    if model().is_none() {
        return;
    }
    let dir = scratch("hash");
    copy_model(&dir);
    let mut bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(dir.join("model.safetensors"), &bytes).unwrap();
    let msg = MiniLm::load(&dir, Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("model.safetensors") && msg.contains(MODEL_SHA256),
        "{msg}"
    );
    let actual = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    assert!(msg.contains(&actual), "{msg}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tokenizer_of_another_model_or_a_broken_config_is_refused() {
    if model().is_none() {
        return;
    }
    let dir = scratch("tokenizer");
    copy_model(&dir);
    let path = dir.join("tokenizer.json");
    let mut tok: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let vocab = tok["model"]["vocab"].as_object_mut().unwrap();
    let extra: Vec<String> = vocab
        .keys()
        .filter(|k| k.starts_with("##q"))
        .cloned()
        .collect();
    for k in extra {
        vocab.remove(&k);
    }
    std::fs::write(&path, serde_json::to_vec(&tok).unwrap()).unwrap();
    let err = MiniLm::load(&dir, Options::default()).unwrap_err();
    assert!(matches!(err, LoadError::TokenizerMismatch { .. }), "{err}");
    assert!(err.to_string().contains("tokenizer.json"), "{err}");

    copy_model(&dir);
    std::fs::write(dir.join("config.json"), b"{ not json").unwrap();
    let err = MiniLm::load(&dir, Options::default()).unwrap_err();
    assert!(
        matches!(err, LoadError::Invalid { .. }) && err.to_string().contains("config.json"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cuda_is_refused_without_a_gpu_build() {
    if cfg!(feature = "cuda") || model().is_none() {
        return;
    }
    let err = MiniLm::load(
        &model_dir(),
        Options {
            device: embed::DeviceChoice::Cuda,
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, LoadError::NoCuda { .. }), "{err}");
}
