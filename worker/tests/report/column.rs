//! One column of the page checked against what `chunk` and `normalize`
//! print for the same file.

use std::path::Path;

use serde_json::Value;

use crate::common::chunk_worker;
use crate::page::{Column, Tok};

/// What `chunk --profile P FILE` prints.
fn records(file: &Path, profile: &str) -> Vec<Value> {
    let out = chunk_worker(["chunk", "--profile", profile, file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn normalized(file: &Path) -> String {
    let out = chunk_worker(["normalize", file.to_str().unwrap()]);
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn num(tok: &Tok, key: &str) -> u64 {
    tok.attr(key).unwrap().parse().unwrap()
}

/// Checks one column against `chunk`'s records and `normalize`'s text.
pub(crate) fn check_column(file: &Path, profile: &str, col: &Column) {
    let text = normalized(file);
    let recs = records(file, profile);
    let at = format!("{} under {profile}", file.display());
    assert_eq!(col.text, text, "{at}: spans + gaps are not the document");
    assert_eq!(col.chunks.len(), recs.len(), "{at}: chunk count");
    let mut last_end = 0;
    let mut synthetic = 0;
    let mut overlapping = 0;
    for (n, (shown, rec)) in col.chunks.iter().zip(&recs).enumerate() {
        let o = &shown.open;
        assert_eq!(num(o, "data-ordinal"), n as u64, "{at}: ordinals in order");
        let (bs, be) = (num(o, "data-bs"), num(o, "data-be"));
        assert_eq!(bs, rec["byte_start"].as_u64().unwrap(), "{at} #{n}");
        assert_eq!(be, rec["byte_end"].as_u64().unwrap(), "{at} #{n}");
        assert!(bs >= last_end, "{at} #{n}: spans out of order");
        last_end = be;
        assert_eq!(
            shown.text,
            text[bs as usize..be as usize],
            "{at} #{n}: the element's text is not its own span"
        );
        assert_eq!(o.attr("data-id"), rec["chunk_id"].as_str(), "{at} #{n}");
        assert_eq!(o.attr("data-path"), rec["chunk_path"].as_str(), "{at} #{n}");
        assert_eq!(o.attr("data-type"), rec["chunk_type"].as_str(), "{at} #{n}");
        assert_eq!(num(o, "data-tokens"), rec["token_count"].as_u64().unwrap());
        assert_eq!(o.attr("data-hash"), rec["content_hash"].as_str());

        // The prefix: overlap (marked in the document) or synthetic (a badge).
        let chunk_text = rec["chunk_text"].as_str().unwrap();
        let k = rec["overlap_prefix_chars"].as_u64().unwrap() as usize;
        let prefix: String = chunk_text.chars().take(k).collect();
        let is_overlap = k > 0 && text[..bs as usize].ends_with(&prefix);
        let pre_badges: Vec<_> = shown.badges.iter().filter(|b| b.has_class("pre")).collect();
        if is_overlap {
            overlapping += 1;
            assert!(pre_badges.is_empty(), "{at} #{n}: overlap shown as a badge");
            assert_eq!(
                num(o, "data-ov") as usize,
                prefix.encode_utf16().count(),
                "{at} #{n}"
            );
            let marked: String = col
                .overlaps
                .iter()
                .filter(|(of, _)| *of as usize == n)
                .map(|(_, t)| t.as_str())
                .collect();
            assert!(
                !marked.is_empty() && prefix.ends_with(&marked),
                "{at} #{n}: overlap marks {marked:?} are not the end of the prefix {prefix:?}"
            );
        } else if k > 0 {
            synthetic += 1;
            assert_eq!(
                pre_badges.len(),
                1,
                "{at} #{n}: no badge for a synthetic prefix"
            );
            assert_eq!(pre_badges[0].attr("data-t"), Some(prefix.as_str()));
        } else {
            assert!(pre_badges.is_empty() && o.attr("data-ov").is_none());
        }
        let s = rec["closing_suffix_chars"].as_u64().unwrap() as usize;
        let suf_badges: Vec<_> = shown.badges.iter().filter(|b| b.has_class("suf")).collect();
        if s > 0 {
            let suffix: String = {
                let mut v: Vec<char> = chunk_text.chars().rev().take(s).collect();
                v.reverse();
                v.into_iter().collect()
            };
            assert_eq!(suf_badges.len(), 1, "{at} #{n}");
            assert_eq!(suf_badges[0].attr("data-t"), Some(suffix.as_str()));
        } else {
            assert!(suf_badges.is_empty(), "{at} #{n}");
        }

        // embed_text: stored whole, or as what comes before chunk_text.
        let embed = rec["embed_text"].as_str().unwrap();
        let head = o.attr("data-e").unwrap_or("");
        if o.attr("data-ef").is_some() {
            assert_eq!(head, embed, "{at} #{n}");
        } else {
            assert_eq!(format!("{head}{chunk_text}"), embed, "{at} #{n}");
        }
    }
    // Every mark belongs to a chunk whose prefix is overlap.
    for (of, _) in &col.overlaps {
        assert!(col.chunks[*of as usize].open.attr("data-ov").is_some());
    }
    eprintln!(
        "{at}: {} chunks, {} gaps, {overlapping} overlap prefixes, {synthetic} synthetic",
        recs.len(),
        col.gaps
    );
}
