//! Issue 17, finding 1: a profile that names its embedder (`[embedder]`)
//! gets chunks whose `embed_text` fits the embedder's window in the
//! embedder's own tokens, and every record says how many (`embed_token_count`).
//! Checked on every fixture for each span strategy and the structural one,
//! with a window small enough to force splits of prose, tables and code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{fixtures, invariant_violations, level_for, meta, Level};
use shared::embed::{BpeWindow, EmbedTokenizer};
use shared::{ChunkError, Engine};

const WINDOW: usize = 48;

fn profile(name: &str, strategy: &str, params: &str, tokenizer: &str) -> String {
    format!(
        "name = \"{name}\"\nstrategy = \"{strategy}\"\nbreadcrumb_mode = \"always\"\n\n[embedder]\nname = \"small\"\nmax_tokens = {WINDOW}\ntokenizer = \"{tokenizer}\"\n\n[params]\n{params}\n"
    )
}

fn profiles() -> Vec<(String, String)> {
    vec![
        (
            "w-structural".into(),
            profile(
                "w-structural",
                "structural",
                "target_tokens = 350\nhard_max_tokens = 520\noverlap = { percent_of_target = 15 }",
                "cl100k_base",
            ),
        ),
        (
            "w-recursive".into(),
            profile(
                "w-recursive",
                "recursive",
                "chunk_size = 300\nchunk_overlap = 60",
                "cl100k_base",
            ),
        ),
        (
            "w-markdown".into(),
            profile(
                "w-markdown",
                "markdown_headers",
                "chunk_size = 300\nchunk_overlap = 60",
                "o200k_base",
            ),
        ),
        (
            "w-token".into(),
            profile(
                "w-token",
                "token",
                "chunk_size = 200\nchunk_overlap = 50",
                "cl100k_base",
            ),
        ),
    ]
}

#[test]
fn embed_text_fits_the_window_on_every_fixture() {
    let mut builder = Engine::builder();
    for (name, toml) in profiles() {
        builder = builder.profile_source(format!("{name}.toml"), toml);
    }
    let engine = builder.build().unwrap();
    let mut failures = Vec::new();
    let mut split = 0usize;
    for (name, _) in profiles() {
        let p = engine.profile(Some(&name)).unwrap();
        let w = p.embedder.as_ref().unwrap();
        let counter = match w.tokenizer {
            shared::profile::WindowTokenizer::Bpe(k) => BpeWindow(k),
            _ => unreachable!(),
        };
        for path in fixtures() {
            let bytes = std::fs::read(&path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let out = match engine.chunk(&bytes, &meta("t", &file, "v1"), Some(&name)) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name} / {file}: {e}"));
                    continue;
                }
            };
            for c in &out.chunks {
                let n = counter.count(&c.embed_text);
                if c.embed_token_count != Some(n as u32) || n > WINDOW {
                    failures.push(format!(
                        "{name} / {file} #{}: embed_token_count {:?}, recounted {n}, window {WINDOW}",
                        c.ordinal, c.embed_token_count
                    ));
                }
                if counter.count(&c.chunk_text) > WINDOW / 2 {
                    split += 1;
                }
            }
            let v =
                invariant_violations(&out.normalized, &out.chunks, p, level_for(p, Level::Full));
            if !v.is_empty() {
                failures.push(format!("{name} / {file}: {}", common::describe(&v)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        split > 50,
        "the window forced too few splits to test anything ({split})"
    );
}

#[test]
fn without_an_embedder_records_carry_no_window_count() {
    let engine = Engine::builtin().unwrap();
    let out = engine
        .chunk(
            b"# T\n\nSome text.\n",
            &meta("t", "d", "v1"),
            Some("spec-v1"),
        )
        .unwrap();
    assert!(out.chunks.iter().all(|c| c.embed_token_count.is_none()));
    let json = serde_json::to_string(&out.chunks[0]).unwrap();
    assert!(!json.contains("embed_token_count"), "{json}");
}

#[test]
fn a_tokenizer_file_that_was_not_loaded_is_named_and_an_attached_one_is_used() {
    let src = profile(
        "w-file",
        "structural",
        "target_tokens = 350\nhard_max_tokens = 520",
        "models/x/tokenizer.json",
    );
    let engine = Engine::builder()
        .profile_source("w-file.toml", src.clone())
        .build()
        .unwrap();
    let err = engine
        .chunk(b"Some text.\n", &meta("t", "d", "v1"), Some("w-file"))
        .unwrap_err();
    assert!(
        matches!(err, ChunkError::WindowTokenizerMissing { ref tokenizer, .. } if tokenizer == "models/x/tokenizer.json"),
        "{err}"
    );
    assert_eq!(err.code().as_str(), "UNKNOWN_PROFILE");
    // The printed profile loads again as the same profile, [embedder] included.
    let p = engine.profile(Some("w-file")).unwrap();
    assert!(p.to_toml().contains(
        "[embedder]\nname = \"small\"\nmax_tokens = 48\ntokenizer = \"models/x/tokenizer.json\"\n"
    ));
    #[derive(Debug)]
    struct Chars;
    impl EmbedTokenizer for Chars {
        fn id(&self) -> &str {
            "chars"
        }
        fn count(&self, text: &str) -> usize {
            text.chars().count()
        }
    }
    let engine = Engine::builder()
        .profile_source("w-file.toml", p.to_toml())
        .window_tokenizer("models/x/tokenizer.json", std::sync::Arc::new(Chars))
        .build()
        .unwrap();
    let text = "word ".repeat(60);
    let out = engine
        .chunk(text.as_bytes(), &meta("t", "d", "v1"), Some("w-file"))
        .unwrap();
    assert!(out.chunks.len() >= 7, "{}", out.chunks.len());
    assert!(out
        .chunks
        .iter()
        .all(|c| c.embed_token_count.unwrap() <= 48 && c.embed_text.chars().count() <= 48));
}

#[test]
fn an_embedder_table_is_checked() {
    for (bad, why) in [
        (
            "max_tokens = 4\ntokenizer = \"cl100k_base\"",
            "max_tokens = 4",
        ),
        ("max_tokens = 256\ntokenizer = \"bert\"", "\"bert\""),
        ("max_tokens = 256\nsize = 3", "size"),
    ] {
        let src = format!(
            "name = \"x\"\nstrategy = \"token\"\n[embedder]\nname = \"e\"\n{bad}\n[params]\n"
        );
        let err = Engine::builder()
            .profile_source("x.toml", src)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
}

#[test]
fn a_part_past_a_heading_gets_that_heading_in_its_path() {
    // One recursive chunk holds a preamble, a heading and its section; the
    // window cuts it, and the part under the heading must say so.
    let src = profile(
        "w-pre",
        "recursive",
        "chunk_size = 400\nchunk_overlap = 0",
        "cl100k_base",
    );
    let engine = Engine::builder()
        .profile_source("w-pre.toml", src)
        .build()
        .unwrap();
    let md = format!(
        "{}\n\n# Installing\n\n{}\n",
        "The preamble says what this is about. ".repeat(6),
        "Run the installer and answer its questions. ".repeat(6)
    );
    let out = engine
        .chunk(md.as_bytes(), &meta("t", "d", "v1"), Some("w-pre"))
        .unwrap();
    assert!(out.chunks.len() >= 2);
    let last = out.chunks.last().unwrap();
    assert_eq!(last.headings_path, ["Installing"], "{:#?}", out.chunks);
    assert_eq!(out.chunks[0].headings_path, Vec::<String>::new());
}
