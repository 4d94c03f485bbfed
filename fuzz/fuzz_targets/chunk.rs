//! Any bytes through the whole engine, every built-in profile (so every
//! registered strategy; experimental ones enabled, the semantic strategy on
//! the toy embedder) and two profiles fitted to a small embedder window,
//! plus link extraction, and the bytes as an HTML page:
//! it must never panic, and the docs/contract.md#validation checklist the engine runs on its
//! own output must never fail (`VALIDATION_FAILED` is a bug, not an input
//! error). Invalid UTF-8 and NUL-free garbage are fine inputs: they end in
//! a typed error or in chunks.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use shared::links::{extract_links, Classifier, LinkConfig};
use shared::Engine;
use shared::{DocumentMeta, ErrorCode};

const FIT_STRUCTURAL: &str = "name = \"fit-structural\"\nstrategy = \"structural\"\nbreadcrumb_mode = \"always\"\n[embedder]\nname = \"small\"\nmax_tokens = 64\ntokenizer = \"cl100k_base\"\n[params]\ntarget_tokens = 350\nhard_max_tokens = 520\noverlap = { percent_of_target = 15, sentence_aligned = true }\n";
const FIT_RECURSIVE: &str = "name = \"fit-recursive\"\nstrategy = \"recursive\"\n[embedder]\nname = \"small\"\nmax_tokens = 64\ntokenizer = \"o200k_base\"\n[params]\nchunk_size = 300\nchunk_overlap = 60\n";

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::builder()
            .experimental(true)
            .embedder(std::sync::Arc::new(shared::ToyEmbedder::default()))
            .chat(std::sync::Arc::new(shared::ToyChat::default()))
            // Issue 17: chunks fitted to a small embedder window (cl100k,
            // 64 tokens) for a typed-prefix and a preceding-text strategy.
            .profile_source("fit-structural.toml", FIT_STRUCTURAL)
            .profile_source("fit-recursive.toml", FIT_RECURSIVE)
            .build()
            .expect("the built-in profiles load")
    })
}

fuzz_target!(|data: &[u8]| {
    let meta = DocumentMeta {
        tenant_id: "fuzz".into(),
        document_id: "doc".into(),
        source_version_id: "v1".into(),
        title: None,
        source_url: Some("https://acme.atlassian.net/wiki/spaces/ENG/pages/1/Home".into()),
        file_path: None,
        metadata: None,
    };
    for profile in engine().profiles().iter() {
        match engine().chunk(data, &meta, Some(&profile.name)) {
            Ok(doc) => {
                let classifier =
                    Classifier::new(&LinkConfig::default(), meta.source_url.as_deref());
                let _ = extract_links(&doc.normalized, &doc.chunks, &classifier);
            }
            Err(e) => assert_ne!(e.code(), ErrorCode::ValidationFailed, "{e}"),
        }
    }
    // The same bytes as an HTML page (issue 10): converted, then chunked.
    if let Ok(page) = shared::html::to_markdown(data) {
        if let Err(e) = engine().chunk(page.markdown.as_bytes(), &meta, Some("hierarchy-v1")) {
            assert_ne!(e.code(), ErrorCode::ValidationFailed, "{e}");
        }
    }
});
