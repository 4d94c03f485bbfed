#![allow(clippy::unwrap_used)]
use crate::sentence::punkt::Punkt;
use crate::strategy::pystr::py_isspace;
use crate::tokens::TokenCounter;
use super::*;

fn sentences(text: &str) -> Vec<&str> {
    Punkt::untrained()
        .span_tokenize(text)
        .into_iter()
        .map(|r| &text[r])
        .collect()
}

fn pieces(text: &str) -> Vec<&str> {
    Punkt::untrained()
        .sentence_pieces(text)
        .into_iter()
        .map(|r| &text[r])
        .collect()
}

#[test]
fn untrained_punkt_matches_nltk_on_the_checked_examples() {
    // ADAPTERS.md 4.1, checked with the pinned NLTK.
    assert_eq!(
        sentences("Mr. Smith went home. He slept."),
        ["Mr.", "Smith went home.", "He slept."]
    );
    assert_eq!(sentences("e.g. this one."), ["e.g.", "this one."]);
    assert_eq!(sentences("Wait... Then go."), ["Wait... Then go."]);
    assert_eq!(
        sentences("Very bad acting!!! I promise."),
        ["Very bad acting!!!", "I promise."]
    );
    assert_eq!(sentences("(Sent1.) Sent2."), ["(Sent1.)", "Sent2."]);
    // Initials and numbers: no break before a capital (initial) or a
    // lowercase word; a number breaks before a capital.
    assert_eq!(sentences("A. Smith came."), ["A. Smith came."]);
    assert_eq!(sentences("A. smith came."), ["A. smith came."]);
    assert_eq!(sentences("See A. 2 more."), ["See A.", "2 more."]);
    assert_eq!(sentences("Take 12. foo now."), ["Take 12. foo now."]);
    assert_eq!(sentences("Take 12. Foo now."), ["Take 12.", "Foo now."]);
    // Pieces run to the next start: the whitespace belongs to the sentence
    // before; trailing whitespace stays on the last.
    assert_eq!(pieces("One. Two.  \n"), ["One. ", "Two.  \n"]);
    assert!(pieces("").is_empty());
    assert!(pieces(" \n\t\u{1c}").is_empty());
}

#[test]
fn untrained_punkt_reproduces_llamaindex_sentences_of_every_fixture_document() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let data: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("adapters/llama.semantic.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for doc in data["documents"].as_array().unwrap() {
        let name = doc["name"].as_str().unwrap();
        let text = std::fs::read_to_string(root.join(doc["path"].as_str().unwrap())).unwrap();
        let theirs: Vec<&str> = data["sentences"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let ours = pieces(&text);
        if let Some(at) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
            panic!("{name}: sentence {at}: ours {:?} theirs {:?}", ours[at], theirs[at]);
        }
        assert_eq!(ours.len(), theirs.len(), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 22);
}

fn splitter(chunk_size: usize, chunk_overlap: usize) -> SentenceSplitter {
    SentenceSplitter {
        chunk_size,
        chunk_overlap,
        separator: " ".into(),
        paragraph_separator: "\n\n\n".into(),
        secondary: Regex::new(DEFAULT_SECONDARY_REGEX).unwrap(),
        punkt: Punkt::untrained(),
        tokens: LlamaTokens::new(TokenizerKind::Cl100kBase),
    }
}

fn chunks(s: &SentenceSplitter, text: &str) -> Vec<String> {
    s.split_text(text)
        .into_iter()
        .map(|r| text[r].to_owned())
        .collect()
}

#[test]
fn separators_start_the_next_piece_and_empty_parts_go() {
    let text = " a  b ";
    let parts: Vec<&str> = split_keep_separator(text, " ")
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(parts, [" a", " ", " b", " "]);
    let text = "x\n\n\ny\n\n\n";
    let parts: Vec<&str> = split_keep_separator(text, "\n\n\n")
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(parts, ["x", "\n\n\ny", "\n\n\n"]);
}

#[test]
fn special_token_spellings_count_as_one_token() {
    let t = LlamaTokens::new(TokenizerKind::Cl100kBase);
    let plain = TokenizerKind::Cl100kBase.counter();
    assert_eq!(t.count("hello"), plain.count("hello"));
    assert_eq!(t.count("<|endoftext|>"), 1);
    assert_eq!(t.count("a<|fim_prefix|>b<|endofprompt|>"), 4);
    assert_eq!(t.count("<|nothing|>"), plain.count("<|nothing|>"));
    assert_eq!(t.count(""), 0);
    assert_eq!(t.count("<|<|endoftext|>"), plain.count("<|") + 1);
    // One pass however many there are.
    assert_eq!(t.count(&"<|endoftext|>".repeat(20_000)), 20_000);
    // The hard max allows each special spelling its ordinary tokens.
    for s in t_specials() {
        assert!(plain.count(s) <= 8, "{s}: {}", plain.count(s));
    }
    let o = LlamaTokens::new(TokenizerKind::O200kBase);
    assert_eq!(o.count("<|endoftext|><|fim_prefix|>"), 1 + TokenizerKind::O200kBase.counter().count("<|fim_prefix|>"));
}

fn t_specials() -> [&'static str; 5] {
    [
        "<|endoftext|>",
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|fim_suffix|>",
        "<|endofprompt|>",
    ]
}

#[test]
fn merging_carries_whole_pieces_within_the_overlap() {
    // Eight sentences of 4-5 tokens each, chunks of 12, overlap 5: each
    // chunk after the first starts with the last sentence of the one
    // before when it fits.
    let text = "One two three. Four five six. Seven eight nine. Ten eleven twelve. Thirteen fourteen.";
    let s = splitter(12, 5);
    let out = chunks(&s, text);
    assert!(out.len() > 1, "{out:?}");
    for c in &out {
        assert!(text.contains(c.as_str()));
        assert_eq!(c.trim(), c);
    }
    // Overlap: the second chunk starts inside the first.
    let first = text.find(&out[0]).unwrap();
    let second = text.find(&out[1]).unwrap();
    assert!(second < first + out[0].len());
    // Everything is covered.
    assert!(out.last().unwrap().ends_with("fourteen."));
}

#[test]
fn no_panic_on_odd_inputs_and_every_chunk_is_a_stripped_slice() {
    let long_word = "x".repeat(5000);
    let inputs = [
        "",
        "   \n\t ",
        "\u{1c}\u{1d}",
        "a\r\nb.\r\rC d.\r\n",
        "😀👩‍👩‍👧 e\u{301}. Ünïcödé! ¿Qué? 日本語。テスト！",
        long_word.as_str(),
        "<|endoftext|> <|endoftext|>. Next.",
        "...!!!???.,;:--",
        "\"Quoted.\" 'Single.' (Paren.) [Bracket.] «Guillemets.» “Curly.” Next",
        ". . . . and . .",
    ];
    for size in [1, 2, 3, 5, 16, 1024] {
        let s = splitter(size, size / 4);
        for text in inputs {
            let spans = s.split_text(text);
            let mut last_start = 0;
            for r in &spans {
                let c = &text[r.clone()];
                assert!(!c.is_empty());
                assert!(!c.starts_with(py_isspace) && !c.ends_with(py_isspace));
                assert!(r.start >= last_start, "{text:?} {size}");
                last_start = r.start;
            }
            let covered: usize = text.chars().filter(|c| !py_isspace(*c)).count();
            if covered > 0 {
                assert!(!spans.is_empty(), "{text:?} {size}");
            }
        }
    }
}

#[test]
fn a_text_within_the_size_is_one_chunk_stripped() {
    let s = splitter(1024, 200);
    assert_eq!(chunks(&s, "\n  Hello there. Bye.  \n"), ["Hello there. Bye."]);
    assert!(chunks(&s, "").is_empty());
    assert!(chunks(&s, " \u{1f} ").is_empty());
}

#[test]
fn configure_names_the_key_it_refuses() {
    let refuse = |src: &str| {
        let table: toml::Table = src.parse().unwrap();
        let p = Params::new(&table, "params");
        LlamaSentence.configure(&p).map(|_| ()).unwrap_err().0
    };
    assert!(refuse("chunk_size = 10\nchunk_overlap = 11").contains("params.chunk_overlap"));
    assert!(refuse("chunk_size = 0").contains("params.chunk_size"));
    assert!(refuse("separator = \"\"").contains("params.separator"));
    assert!(refuse("paragraph_separator = \"\"").contains("params.paragraph_separator"));
    assert!(refuse("secondary_chunking_regex = \"(?=x)\"").contains("params.secondary_chunking_regex"));
    let table: toml::Table = "chunk_size = 10\nchunk_overlap = 10".parse().unwrap();
    assert!(LlamaSentence.configure(&Params::new(&table, "params")).is_ok());
}

#[test]
fn hierarchical_nodes_match_llamaindex_text_level_and_parent() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let data: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("adapters/llama.hierarchical.json")).unwrap(),
    )
    .unwrap();
    let (mut same, mut total) = (0, 0);
    let mut failures = Vec::new();
    for case in data["cases"].as_array().unwrap() {
        let doc = data["documents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == case["document"])
            .unwrap();
        let kwargs = &data["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == case["settings"])
            .unwrap()["kwargs"];
        let sizes: Vec<usize> = kwargs["chunk_sizes"].as_array().map_or(vec![2048, 512, 128], |a| {
            a.iter().map(|v| v.as_u64().unwrap() as usize).collect()
        });
        let overlap = kwargs["chunk_overlap"].as_u64().unwrap_or(20) as usize;
        let text = std::fs::read_to_string(root.join(doc["path"].as_str().unwrap())).unwrap();
        let ours: Vec<(String, usize, Option<usize>)> =
            hierarchical_nodes(&text, &splitter(sizes[0], overlap), &sizes)
                .into_iter()
                .map(|n| (text[n.range].to_owned(), n.level, n.parent))
                .collect();
        let theirs: Vec<(String, usize, Option<usize>)> = case["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["text"].as_str().unwrap().to_owned(),
                    c["level"].as_u64().unwrap() as usize,
                    c["parent"].as_u64().map(|p| p as usize),
                )
            })
            .collect();
        total += 1;
        if ours == theirs {
            same += 1;
        } else if text.is_empty() && ours.is_empty() && theirs.iter().all(|t| t.0.is_empty()) {
            // The empty document: one empty node per level to LlamaIndex.
        } else {
            let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            failures.push(format!(
                "{} {}: {} nodes, theirs {}; first difference at {at:?}",
                case["document"],
                case["settings"],
                ours.len(),
                theirs.len()
            ));
        }
    }
    println!("llama.hierarchical (algorithm): {same} of {total} cases identical");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn random_texts_split_losslessly_into_stripped_slices_without_panic() {
    // A small LCG over an alphabet of the characters the splitters treat
    // specially: sentence ends, quotes and closers, separators, Python-only
    // whitespace, multi-byte letters and marks.
    let alphabet: Vec<char> = "aZ9 .?!,;:-()[]{}\"'‘’“”«»\n\r\t\u{1c}\u{85}\u{a0}\u{3000}é\u{301}😀。？！<|>"
        .chars()
        .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    for round in 0..400 {
        let len = next(120);
        let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
        let pieces = Punkt::untrained().sentence_pieces(&text);
        let joined: String = pieces.iter().map(|r| &text[r.clone()]).collect();
        if !pieces.is_empty() {
            assert_eq!(joined, text, "{text:?}");
        }
        let size = 1 + next(12);
        let s = splitter(size, next(size + 1));
        let spans = s.split_text(&text);
        let mut covered = vec![false; text.len()];
        for r in &spans {
            let c = &text[r.clone()];
            assert!(!c.is_empty() && !c.starts_with(py_isspace) && !c.ends_with(py_isspace));
            covered[r.clone()].iter_mut().for_each(|b| *b = true);
        }
        for (i, ch) in text.char_indices() {
            assert!(
                py_isspace(ch) || covered[i],
                "round {round}: {ch:?} at {i} of {text:?} is in no chunk"
            );
        }
    }
}
