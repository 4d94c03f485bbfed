//! The per-chunk files of every profile: one chain per granularity, and no
//! stale chain after a change of profile.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::{assert_valid, chunk_files, chunk_worker, fixtures, schema, temp_dir};

/// Every file of a run, by its path below `chunks/` (`NAME` or
/// `GRANULARITY/NAME`).
fn read_all_files(out: &Path) -> BTreeMap<String, Value> {
    let mut files = BTreeMap::new();
    let chunks = out.join("chunks");
    for e in fs::read_dir(&chunks).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let dir = p.file_name().unwrap().to_string_lossy().into_owned();
            for f in fs::read_dir(&p).unwrap() {
                let f = f.unwrap().path();
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                files.insert(
                    format!("{dir}/{name}"),
                    serde_json::from_slice(&fs::read(&f).unwrap()).unwrap(),
                );
            }
        } else {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            files.insert(
                name,
                serde_json::from_slice(&fs::read(&p).unwrap()).unwrap(),
            );
        }
    }
    files
}

/// Every built-in profile, single- and multi-granularity, through `--format
/// files` over every fixture: the primary granularity under the format's
/// own names, every other in its folder; in each chain `chunkNumber` is the
/// N of the name, ids are unique and end in `::ch{N}`, `prevId`/`nextId`
/// link the chain in order both ways; the files are the JSONL records of the
/// same run (ids, texts, granularities, keys), and parent links name files.
#[test]
fn every_profile_writes_one_chain_per_granularity() {
    let files_schema = schema("chunk-file.schema.json");
    let inputs = fixtures();
    let engine = shared::Engine::builder()
        .experimental(true)
        .build()
        .unwrap();
    let model = testkit::model_dir();
    // The fixtures some profile ran (indices into `inputs`).
    let covered = std::sync::Mutex::new(std::collections::BTreeSet::new());
    // Every profile runs two processes over every fixture: two threads
    // share the profiles (the slowest test of CI's run otherwise).
    let check = |profile: &shared::Profile| -> bool {
        let mut flags: Vec<String> = vec!["--profile".into(), profile.name.clone()];
        if profile.experimental {
            flags.push("--experimental".into());
        }
        if profile.chunker().needs_embedder() {
            let Some(dir) = &model else {
                println!("{}: skipped (no model)", profile.name);
                return false;
            };
            flags.extend(["--model-dir".into(), dir.display().to_string()]);
        }
        let primary = profile.granularity.as_str();
        let out = temp_dir(&format!("chains-{}", profile.name));
        let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
        // The chains are the engine's, not the strategy's: each profile
        // takes every second fixture, the model's profiles (which embed
        // every sentence in a test build) every fourth and the drop-ins
        // (framework ports whose records are built as every strategy's)
        // every third, from an offset drawn from the profile's name, so the
        // profiles together still cover every fixture.
        let step = if profile.chunker().needs_embedder() {
            4
        } else if profile.chunker().framework().is_some() {
            3
        } else {
            2
        };
        let offset = profile.name.bytes().map(usize::from).sum::<usize>() % step;
        args.extend(inputs.iter().skip(offset).step_by(step).map(String::as_str));
        covered
            .lock()
            .unwrap()
            .extend((offset..inputs.len()).step_by(step));
        let run = chunk_files(&out, &args);
        assert!(
            run.status.success(),
            "{}: {}",
            profile.name,
            String::from_utf8_lossy(&run.stderr)
        );
        let files = read_all_files(&out);
        let mut jsonl_args = vec!["chunk"];
        jsonl_args.extend(args.iter().copied());
        let jsonl = chunk_worker(&jsonl_args);
        assert!(jsonl.status.success());
        // Records by (document, granularity, ordinal).
        let mut records: BTreeMap<(String, String, u64), Value> = BTreeMap::new();
        for line in String::from_utf8(jsonl.stdout).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            records.insert(
                (
                    r["document_id"].as_str().unwrap().to_owned(),
                    r["granularity"].as_str().unwrap().to_owned(),
                    r["ordinal"].as_u64().unwrap(),
                ),
                r,
            );
        }
        assert_eq!(
            files.len(),
            records.len(),
            "{}: a file per record",
            profile.name
        );
        let granularities: std::collections::BTreeSet<&str> =
            records.keys().map(|k| k.1.as_str()).collect();
        let multi = granularities.len() > 1;
        let ids: std::collections::BTreeSet<&str> =
            files.values().map(|f| f["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), files.len(), "{}: ids are unique", profile.name);
        // Chains: (document, folder) -> numbers.
        let mut chains: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
        for (path, f) in &files {
            let what = format!("{} {path}", profile.name);
            assert_valid(&files_schema, &what, f);
            let (folder, name) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
            let g = f["chunkWorker"]["granularity"].as_str().unwrap();
            if folder.is_empty() {
                assert_eq!(g, primary, "{what}: the primary chain");
            } else {
                assert_eq!(g, folder, "{what}: a granularity's folder");
                assert_ne!(g, primary, "{what}");
            }
            let n = f["chunkNumber"].as_u64().unwrap();
            let doc = f["parentId"]
                .as_str()
                .unwrap()
                .strip_prefix("doc:")
                .unwrap();
            assert_eq!(name, format!("doc_{doc}__ch{n}.json"), "{what}");
            let id = |k: u64| {
                if folder.is_empty() {
                    format!("doc:{doc}::ch{k}")
                } else {
                    format!("doc:{doc}:{folder}::ch{k}")
                }
            };
            assert_eq!(f["id"], id(n).as_str(), "{what}");
            let r = &records[&(doc.to_owned(), g.to_owned(), n)];
            assert_eq!(f["chunkWorker"]["chunk_id"], r["chunk_id"], "{what}");
            assert_eq!(f["chunkWorker"]["chunk_key"], r["chunk_key"], "{what}");
            assert_eq!(f["chunkWorker"]["is_table"], r["is_table"], "{what}");
            assert_eq!(f["originalText"], r["chunk_text"], "{what}");
            let prev = n.checked_sub(1).map(id);
            assert_eq!(f["prevId"].as_str(), prev.as_deref(), "{what}");
            match f["nextId"].as_str() {
                Some(next) => {
                    assert_eq!(next, id(n + 1), "{what}");
                    let back = files
                        .values()
                        .find(|o| o["id"] == next)
                        .unwrap_or_else(|| panic!("{what}: nextId {next} names no file"));
                    assert_eq!(back["prevId"], f["id"], "{what}: the chain points back");
                }
                None => {
                    assert!(!ids.contains(id(n + 1).as_str()), "{what}: the chain ends")
                }
            }
            if let Some(parent) = f["chunkWorker"]["parent_file_id"].as_str() {
                assert!(ids.contains(parent), "{what}: parent {parent}");
                assert_eq!(
                    f["chunkWorker"]["parent_chunk_id"], r["parent_chunk_id"],
                    "{what}"
                );
            }
            chains
                .entry((doc.to_owned(), folder.to_owned()))
                .or_default()
                .push(n);
        }
        for ((doc, folder), mut numbers) in chains {
            numbers.sort_unstable();
            let expected: Vec<u64> = (0..numbers.len() as u64).collect();
            assert_eq!(numbers, expected, "{} {doc} {folder:?}", profile.name);
        }
        let _ = fs::remove_dir_all(&out);
        multi
    };
    let profiles: Vec<&shared::Profile> = engine.profiles().iter().collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let multi_seen = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(profile) =
                    profiles.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    if check(profile) {
                        multi_seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(
        covered.into_inner().unwrap().len(),
        inputs.len(),
        "the profiles' offsets leave a fixture out"
    );
    let multi_seen = multi_seen.into_inner();
    assert!(
        multi_seen >= 3,
        "window-v1, table-*, hierarchy-v1 write several chains"
    );
}

/// A document re-chunked with a profile whose primary granularity differs
/// leaves no stale chain behind: the old primary's files in `chunks/` and
/// the old folders are trimmed to what this run wrote.
#[test]
fn a_change_of_profile_leaves_no_stale_chain() {
    let out = temp_dir("rechain");
    let doc = "shared/tests/fixtures/20-grouped-table.md";
    for profile in ["hierarchy-v1", "window-v1", "spec-v1"] {
        let run = chunk_files(&out, &["--profile", profile, doc]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let files = read_all_files(&out);
        let mut jsonl = chunk_worker(&["chunk", "--profile", profile, doc]).stdout;
        jsonl.retain(|b| *b == b'\n');
        assert_eq!(
            files.len(),
            jsonl.len(),
            "{profile}: only this run's files: {:?}",
            files.keys()
        );
    }
    let _ = fs::remove_dir_all(&out);
}
