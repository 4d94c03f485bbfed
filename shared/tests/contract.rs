//! The contract every strategy and every built-in profile keeps (issue 9,
//! docs/contract.md#strategies), on the project's own fixtures: the universal invariants
//! (checked independently of the engine's validator, with tiktoken counts),
//! the strategy's own rules where it declares them (structural), byte-for-
//! byte determinism, ids that depend on the document, no empty output
//! for a document with content, and the CLI's JSON line equal to
//! `serde_json`'s for every chunk. Generated Markdown and arbitrary bytes run
//! over every profile in `properties/`; the fuzz target covers every
//! profile too.
//!
//! A strategy registered without a built-in profile would escape all of
//! this, so that is a failure too.

mod common;

use std::path::PathBuf;

use common::{engine, fixtures, invariant_violations, level_for, meta, Level};

#[test]
fn every_registered_strategy_ships_a_builtin_profile() {
    let engine = engine();
    for name in engine.registry().names() {
        assert!(
            engine.profiles().iter().any(|p| p.strategy == name),
            "strategy {name} has no built-in profile: the contract suite would not run it"
        );
    }
}

/// Whether the CLI's JSON line for `c` (`shared::chunk::json`) is what
/// `serde_json` writes for it, as it is and with the optional fields that
/// come from the message (metadata, source URL, file path) flipped.
fn json_line_is_serde_json(c: &shared::Chunk) -> bool {
    let mut flipped = c.clone();
    flipped.metadata = match &c.metadata {
        Some(_) => None,
        None => Some(std::sync::Arc::new(serde_json::json!({
            "space": "ENG", "n": [1, 2.5, -3e20], "nested": {"q": "a \"b\"\n"}, "none": null
        }))),
    };
    flipped.source_url = match &c.source_url {
        Some(_) => None,
        None => Some("https://x.test/a?b=\"c\"".into()),
    };
    flipped.file_path = match &c.file_path {
        Some(_) => None,
        None => Some("dir\\file.md".into()),
    };
    let same = |chunk: &shared::Chunk| {
        let mut mine = Vec::new();
        shared::chunk::json::push_chunk_json(chunk, &mut mine).is_ok()
            && serde_json::to_vec(chunk).ok() == Some(mine)
    };
    same(c) && same(&flipped)
}

#[test]
fn every_profile_keeps_the_contract_on_every_fixture() {
    let mut failures = Vec::new();
    for profile in common::all_profiles() {
        for path in fixtures() {
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) => panic!("{}: {e}", path.display()),
            };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            let m = meta("contract", &name, "v1");
            let first = engine().chunk(&bytes, &m, Some(&profile.name));
            let doc = match first {
                Ok(d) => d,
                Err(e) => {
                    failures.push(format!("{} / {name}: {e}", profile.name));
                    continue;
                }
            };
            // Determinism: the same bytes in give the same bytes out.
            let again = engine().chunk(&bytes, &m, Some(&profile.name));
            let same = again.as_ref().ok().map(|d| {
                serde_json::to_string(&d.chunks).ok() == serde_json::to_string(&doc.chunks).ok()
            });
            if same != Some(true) {
                failures.push(format!("{} / {name}: not deterministic", profile.name));
            }
            let level = level_for(profile, Level::Full);
            let v = invariant_violations(&doc.normalized, &doc.chunks, profile, level);
            if !v.is_empty() {
                failures.push(format!(
                    "{} / {name}: {}",
                    profile.name,
                    common::describe(&v)
                ));
            }
            let body = common::front_matter_len(&doc.normalized).unwrap_or(0);
            let has_content = !doc.normalized[body..].trim().is_empty();
            if has_content && doc.chunks.is_empty() {
                failures.push(format!("{} / {name}: no chunks", profile.name));
            }
            for c in &doc.chunks {
                if !json_line_is_serde_json(c) {
                    failures.push(format!(
                        "{} / {name}: chunk {}'s JSON line differs from serde_json's",
                        profile.name, c.ordinal
                    ));
                    break;
                }
                let key = c.chunk_key.as_deref().unwrap_or("");
                let table = c.granularity == shared::Granularity::Table
                    || c.chunk_type == shared::ChunkType::Table;
                if !key.starts_with(&format!("{}:", c.document_id))
                    || !key.ends_with(&format!(":{}:{}", c.granularity.as_str(), c.ordinal))
                    || c.is_table != Some(table)
                {
                    failures.push(format!(
                        "{} / {name}: chunk {} has chunk_key {:?} and is_table {:?}",
                        profile.name, c.ordinal, c.chunk_key, c.is_table
                    ));
                    break;
                }
                if c.profile != profile.name || c.chunker_version != profile.chunker_version {
                    failures.push(format!(
                        "{} / {name}: chunk {} names {} / {}",
                        profile.name, c.ordinal, c.profile, c.chunker_version
                    ));
                    break;
                }
            }
            // Another document id gives other ids (ids are per document).
            let other = engine().chunk(
                &bytes,
                &meta("contract", "other", "v1"),
                Some(&profile.name),
            );
            if let (Ok(o), Some(c)) = (other, doc.chunks.first()) {
                if o.chunks.first().map(|x| &x.chunk_id) == Some(&c.chunk_id) {
                    failures.push(format!(
                        "{} / {name}: ids ignore the document",
                        profile.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_profile_stays_under_its_hard_max_on_a_long_unstructured_document() {
    // One paragraph of 30,000 words without punctuation, then one "word" of
    // 20,000 characters: every strategy must cut inside both.
    let words: String = (0..30_000).map(|i| format!("w{} ", i % 997)).collect();
    let doc = format!("{words}\n\n{}\n", "x".repeat(20_000));
    for profile in common::all_profiles() {
        let out = match engine().chunk(
            doc.as_bytes(),
            &meta("contract", "long", "v1"),
            Some(&profile.name),
        ) {
            Ok(d) => d,
            Err(e) => panic!("{}: {e}", profile.name),
        };
        let level = level_for(profile, Level::Full);
        let v = invariant_violations(&out.normalized, &out.chunks, profile, level);
        assert!(v.is_empty(), "{}: {}", profile.name, common::describe(&v));
        // One chunk (the head) for the document granularity alone; LangChain's
        // CharacterTextSplitter, and so its drop-in, never cuts inside a
        // piece (here: the whole paragraph, then the long word).
        let whole = profile.granularity == shared::Granularity::Document
            || profile.strategy == "langchain.character"
            || profile.strategy == "langchain.markdown"
            || profile.strategy == "langchain.recursive"
            || profile.strategy == "llama.semantic";
        assert!(whole || out.chunks.len() > 10, "{}", profile.name);
    }
}

#[test]
fn a_profile_file_may_choose_o200k_for_any_strategy() {
    use shared::{Profile, ProfileOrigin, Registry};
    let md = std::fs::read(fixtures()[0].clone()).unwrap_or_default();
    for strategy in Registry::builtin().names() {
        let params = match strategy.as_str() {
            "structural" => "target_tokens = 200\nhard_max_tokens = 300\n",
            "semantic"
            | "semantic_cluster"
            | "texttiling"
            | "c99"
            | "bayesseg"
            | "lda_topic"
            | "graph_partition"
            | "discourse_segmenter"
            | "graphrag"
            | "llm_chaptering"
            | "clinical_role" => "target_tokens = 200\nhard_max_tokens = 300\nmin_tokens = 50\n",
            "document" => "max_tokens = 200\n",
            "langchain.markdown" | "unstructured.by_title" => "",
            "llama.semantic" => {
                "buffer_size = 1
"
            }
            "haystack.split" => "split_length = 40\nsplit_overlap = 5\n",
            "llama.hierarchical" => "chunk_sizes = [200, 50]\nchunk_overlap = 20\nlevel = 1\n",
            "sliding_window" | "section_aware" | "table" | "layout_heuristic" | "layout_aware"
            | "grobid" => "target_tokens = 200\nhard_max_tokens = 300\n",
            _ => "chunk_size = 200\nchunk_overlap = 20\n",
        };
        let granularity = if strategy == "document" {
            "document"
        } else {
            "section"
        };
        let src = format!(
            "name = \"o200k-{strategy}\"\nstrategy = \"{strategy}\"\ntokenizer = \"o200k_base\"\ngranularity = \"{granularity}\"\n[params]\n{params}"
        );
        let p = match Profile::parse(&src, ProfileOrigin::Builtin, &Registry::builtin()) {
            Ok(p) => p,
            Err(e) => panic!("{strategy}: {e}"),
        };
        let doc = shared::normalize::normalize(&md).unwrap_or_else(|e| panic!("{e}"));
        let toy = shared::ToyEmbedder::default();
        let m = meta("contract", "o200k", "v1");
        let out = if p.chunker().needs_chat() {
            // A chat model is reached through an engine's client only.
            shared::Engine::builder()
                .experimental(true)
                .embedder(std::sync::Arc::new(toy))
                .chat(std::sync::Arc::new(shared::ToyChat::default()))
                .profile_source("o200k.toml", src.clone())
                .build()
                .and_then(|e| e.chunk(&md, &m, Some(&p.name)))
        } else {
            shared::chunk_document(&doc, &m, &p, Some(&toy))
        }
        .unwrap_or_else(|e| panic!("{strategy}: {e}"));
        assert!(!out.chunks.is_empty());
        assert!(out.chunks.iter().all(|c| c.tokenizer == "o200k_base"));
        let level = level_for(&p, Level::Full);
        let v = invariant_violations(&out.normalized, &out.chunks, &p, level);
        assert!(v.is_empty(), "{strategy}: {}", common::describe(&v));
    }
}

/// Inputs the property tests found under other seeds (`PROPS_SEED`), kept so
/// the bugs they showed stay fixed: every profile chunks them within its
/// rules (structural 1.1.0 fixed both).
#[test]
fn regression_inputs_keep_the_contract_under_every_profile() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/regressions"
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    assert!(
        files.len() >= 2,
        "regression inputs missing in {}",
        dir.display()
    );
    for path in files {
        let bytes = std::fs::read(&path).unwrap_or_default();
        for profile in common::all_profiles() {
            let out = engine()
                .chunk(
                    &bytes,
                    &meta("contract", "regression", "v1"),
                    Some(&profile.name),
                )
                .unwrap_or_else(|e| panic!("{} / {}: {e}", profile.name, path.display()));
            let level = level_for(profile, Level::Full);
            let v = invariant_violations(&out.normalized, &out.chunks, profile, level);
            assert!(
                v.is_empty(),
                "{} / {}: {}",
                profile.name,
                path.display(),
                common::describe(&v)
            );
        }
    }
}

/// Every profile gives the same bytes whatever the thread count: each
/// fixture chunked on one thread, then by two threads at once sharing the
/// engine (its caches, the piece cache of each thread), record for record.
#[test]
fn every_profile_gives_the_same_bytes_on_one_thread_and_on_two() {
    let inputs: Vec<Vec<u8>> = fixtures()
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();
    let run = |profile: &str, md: &[u8]| -> String {
        match engine().chunk(md, &meta("contract", "threads", "v1"), Some(profile)) {
            Ok(d) => {
                let mut out = Vec::new();
                for c in &d.chunks {
                    if let Err(e) = shared::chunk::json::push_chunk_json(c, &mut out) {
                        return format!("json {e}");
                    }
                    out.push(b'\n');
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            Err(e) => format!("error {}: {e}", e.code()),
        }
    };
    for profile in common::all_profiles() {
        let alone: Vec<String> = inputs.iter().map(|md| run(&profile.name, md)).collect();
        let side_by_side: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|t| {
                    let inputs = &inputs;
                    let name = &profile.name;
                    s.spawn(move || {
                        // Each thread starts at another fixture.
                        let n = inputs.len();
                        let mut out = vec![String::new(); n];
                        for k in 0..n {
                            let i = (k + t * (n / 2)) % n;
                            out[i] = run(name, &inputs[i]);
                        }
                        out
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| panic!("a thread panicked")))
                .collect()
        });
        for (t, outs) in side_by_side.iter().enumerate() {
            for (i, (a, b)) in alone.iter().zip(outs).enumerate() {
                assert!(
                    a == b,
                    "{}: fixture {} differs on thread {t} of 2",
                    profile.name,
                    fixtures()[i].display()
                );
            }
        }
    }
}
