//! LlamaIndex's hierarchical and semantic splitters against the pinned
//! package's output (`llama.hierarchical.json`, `llama.semantic.json`): per
//! level for the hierarchy, with the fixture's stand-in embedding for the
//! semantic splitter.

use shared::embed::EmbedError;

use super::*;

/// `llama.hierarchical`: each setting becomes a profile whose level 0 is
/// the primary (`section`) and levels 1 and 2 the `paragraph` and `window`
/// auxiliaries; each level's chunk texts, in order, are compared with the
/// framework's nodes of that level, and every node's parent (the engine's:
/// the coarser chunk containing its own span) with the node LlamaIndex
/// split it from.
#[test]
fn llama_hierarchical_matches_llamaindex_text_for_text_per_level() {
    let path = fixtures().join("adapters/llama.hierarchical.json");
    let data: Value = serde_json::from_slice(&std::fs::read(&path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = data["documents"].as_array().cloned().unwrap_or_default();
    let settings = data["settings"].as_array().cloned().unwrap_or_default();
    let granularities = ["section", "paragraph", "window"];
    let (mut same, mut total, mut content, mut same_content) = (0, 0, 0, 0);
    let (mut parents_same, mut parents_total) = (0, 0);
    let mut failures = Vec::new();
    for case in data["cases"].as_array().cloned().unwrap_or_default() {
        let doc = docs
            .iter()
            .find(|d| d["name"] == case["document"])
            .unwrap_or_else(|| panic!("no document {}", case["document"]));
        let kwargs = &settings
            .iter()
            .find(|s| s["name"] == case["settings"])
            .unwrap_or_else(|| panic!("no settings"))["kwargs"];
        let sizes: Vec<i64> = kwargs["chunk_sizes"]
            .as_array()
            .map_or(vec![2048, 512, 128], |a| {
                a.iter().filter_map(Value::as_i64).collect()
            });
        let overlap = kwargs["chunk_overlap"].as_i64().unwrap_or(20);
        let sizes_toml = format!("{sizes:?}");
        let mut src = format!(
            "name = \"parity\"\nstrategy = \"llama.hierarchical\"\ngranularity = \"section\"\n[params]\nchunk_sizes = {sizes_toml}\nchunk_overlap = {overlap}\nlevel = 0\n"
        );
        for (level, g) in granularities.iter().enumerate().take(sizes.len()).skip(1) {
            src.push_str(&format!(
                "[[auxiliary]]\nstrategy = \"llama.hierarchical\"\ngranularity = \"{g}\"\nparams = {{ chunk_sizes = {sizes_toml}, chunk_overlap = {overlap}, level = {level} }}\n"
            ));
        }
        let engine = Engine::builder()
            .profile_source("parity.toml", src)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let bytes = std::fs::read(fixtures().join(doc["path"].as_str().unwrap_or_default()))
            .unwrap_or_default();
        let out = engine
            .chunk(&bytes, &DocumentMeta::default(), Some("parity"))
            .unwrap_or_else(|e| panic!("{} {}: {e}", case["document"], case["settings"]));
        let theirs = case["chunks"].as_array().cloned().unwrap_or_default();
        let has_content = !bytes.iter().all(u8::is_ascii_whitespace);
        total += 1;
        content += usize::from(has_content);
        let mut identical = true;
        for (level, g) in granularities.iter().enumerate().take(sizes.len()) {
            let ours: Vec<&str> = out
                .chunks
                .iter()
                .filter(|c| c.granularity.as_str() == *g)
                .map(|c| c.chunk_text.as_str())
                .collect();
            let t: Vec<&str> = theirs
                .iter()
                .filter(|c| c["level"].as_u64() == Some(level as u64))
                .map(|c| c["text"].as_str().unwrap_or_default())
                .collect();
            if ours != t {
                identical = false;
                if has_content {
                    let at = ours
                        .iter()
                        .zip(&t)
                        .position(|(a, b)| a != b)
                        .unwrap_or(ours.len().min(t.len()));
                    failures.push(format!("{} {} level {level} ({} nodes, theirs {}): node {at} ours {:?} theirs {:?}", case["document"], case["settings"], ours.len(), t.len(),
                        ours.get(at).map(|s| s.chars().take(80).collect::<String>()), t.get(at).map(|s| s.chars().take(80).collect::<String>())));
                }
            }
        }
        if identical {
            same += 1;
            same_content += usize::from(has_content);
            // Parents: the engine's parent chunk of the k-th node of a level
            // against the node LlamaIndex split it from, both as (level,
            // position in the level).
            let place = |granularity: &str, id: &str| {
                let level = granularities.iter().position(|g| *g == granularity)?;
                let k = out
                    .chunks
                    .iter()
                    .filter(|c| c.granularity.as_str() == granularity)
                    .position(|c| c.chunk_id == id)?;
                Some((level, k))
            };
            let their_place = |i: usize| {
                let level = theirs.get(i)?["level"].as_u64()?;
                let k = theirs[..i]
                    .iter()
                    .filter(|c| c["level"].as_u64() == Some(level))
                    .count();
                Some((level as usize, k))
            };
            for c in out
                .chunks
                .iter()
                .filter(|c| c.granularity.as_str() != "section")
            {
                let Some((level, k)) = place(c.granularity.as_str(), &c.chunk_id) else {
                    continue;
                };
                let ours = c.parent_chunk_id.as_ref().and_then(|p| {
                    let parent = out.chunks.iter().find(|x| &x.chunk_id == p)?;
                    place(parent.granularity.as_str(), p)
                });
                let node = theirs
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t["level"].as_u64() == Some(level as u64))
                    .nth(k)
                    .map(|(i, _)| i);
                let theirs_parent = node
                    .and_then(|i| theirs[i]["parent"].as_u64())
                    .and_then(|p| their_place(p as usize));
                parents_total += 1;
                parents_same += usize::from(ours.is_some() && ours == theirs_parent);
            }
        } else if has_content {
            // Reported above.
        } else {
            println!("llama.hierarchical {} {}: differs, the empty document is one empty node per level to LlamaIndex and no record here", case["document"], case["settings"]);
        }
    }
    println!(
        "llama.hierarchical: {same} of {total} cases identical at every level ({:.1}%); {same_content} of the {content} cases of documents with content; parents equal LlamaIndex's for {parents_same} of {parents_total} nodes below level 0",
        100.0 * same as f64 / total.max(1) as f64
    );
    assert!(
        failures.is_empty(),
        "llama.hierarchical: unexplained differences:\n{}",
        failures.join("\n")
    );
    assert!(same_content * 100 >= content * 95);
    assert_eq!(
        parents_same, parents_total,
        "llama.hierarchical: parents differ"
    );
}

/// The fixture's stand-in embedding (`fake_embedding` in
/// `llama.semantic.json`, scripts/peers/ADAPTERS.md section 6): a bag of
/// words hashed (64-bit FNV-1a) into 63 buckets plus a bias, all integers,
/// so both sides compute the same distances bit for bit.
#[derive(Debug)]
struct FnvBagOfWords;

impl Embedder for FnvBagOfWords {
    fn id(&self) -> &str {
        "fnv64-bag-of-words-64"
    }

    fn dimensions(&self) -> usize {
        64
    }

    fn max_tokens(&self) -> usize {
        usize::MAX
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| fnv_bag(t)).collect())
    }
}

fn fnv_bag(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; 64];
    v[0] = 1.0;
    for piece in text.split_ascii_whitespace() {
        let tok = piece.trim_matches(|c: char| c.is_ascii_punctuation());
        if tok.is_empty() {
            continue;
        }
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in tok.to_ascii_lowercase().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        v[1 + (h % 63) as usize] += 1.0;
    }
    v
}

/// No sentence (empty or whitespace-only): LlamaIndex gives one empty
/// node, records never hold nothing.
fn no_sentence(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    (ours.is_empty() && theirs.iter().all(|t| t.trim().is_empty()))
        .then_some("no sentence: LlamaIndex returns one empty node, we no record")
}

#[test]
fn llama_semantic_matches_llamaindex_with_the_same_vectors() {
    // The stand-in reproduces the fixture's own examples.
    let data: Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("adapters/llama.semantic.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let examples = data["fake_embedding"]["examples"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(examples.len() >= 5);
    for ex in examples {
        let v = fnv_bag(ex["text"].as_str().unwrap_or_default());
        for (i, x) in v.iter().enumerate() {
            let want = ex["nonzero"][i.to_string()].as_f64().unwrap_or(0.0);
            assert_eq!(f64::from(*x), want, "{} [{i}]", ex["text"]);
        }
    }
    at_least_95(&run_cases(
        "llama.semantic",
        &[],
        no_sentence,
        &[],
        Some(Arc::new(FnvBagOfWords)),
    ));
}
