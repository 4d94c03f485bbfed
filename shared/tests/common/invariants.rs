//! The independent reading of the docs/contract.md#chunk-record and #validation contract: every invariant
//! re-derived from the chunk records and the normalized document alone (see
//! the module documentation of `common`).

use super::*;

/// Panics with a readable list if any invariant is broken.
pub fn assert_invariants(normalized: &str, chunks: &[Chunk], profile: &Profile) {
    let v = invariant_violations(normalized, chunks, profile, Level::Full);
    if !v.is_empty() {
        panic!("{}", describe(&v));
    }
}

/// Every broken invariant, one line each (empty when all hold). A
/// multi-granularity profile's output is checked granularity by granularity
/// (each with the sub-profile that made it), then its parents.
pub fn invariant_violations(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
) -> Vec<String> {
    if !profile.active_auxiliaries().is_empty() {
        return multi_violations(normalized, chunks, profile, level);
    }
    let cover = profile.granularity != shared::Granularity::Document;
    check_group(
        normalized,
        chunks,
        profile,
        level,
        profile.granularity,
        cover,
    )
}

/// The checks of a multi-granularity output: granularities listed coarse to
/// fine, each group keeping its sub-profile's contract (the `document`
/// granularity covers the document's head only, a `table` auxiliary the
/// tables only), ids unique across groups, every chunk keyed, and every
/// `parent_chunk_id` naming a chunk of a coarser granularity whose own span
/// contains the child's.
pub fn multi_violations(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
) -> Vec<String> {
    let mut v = Vec::new();
    let ranks: Vec<u8> = chunks
        .iter()
        .map(|c| shared::profile::rank(c.granularity))
        .collect();
    if ranks.windows(2).any(|w| w[0] > w[1]) {
        v.push("granularities are not listed coarse to fine".to_owned());
    }
    let mut ids = std::collections::HashMap::new();
    for c in chunks {
        if ids.insert(c.chunk_id.clone(), c).is_some() {
            v.push(format!(
                "duplicate chunk_id {} across granularities",
                short(&c.chunk_id)
            ));
        }
        if c.chunk_key.is_none() {
            v.push(format!(
                "{} chunk {} has no chunk_key",
                c.granularity.as_str(),
                c.ordinal
            ));
        }
    }
    for c in chunks {
        let Some(pid) = &c.parent_chunk_id else {
            continue;
        };
        match ids.get(pid) {
            None => v.push(format!(
                "{} chunk {}: parent {} is not in the output",
                c.granularity.as_str(),
                c.ordinal,
                short(pid)
            )),
            Some(p) => {
                let coarser =
                    shared::profile::rank(p.granularity) < shared::profile::rank(c.granularity);
                let contains = p.byte_start <= c.byte_start && c.byte_end <= p.byte_end;
                if !coarser || !contains {
                    v.push(format!(
                        "{} chunk {} ({}..{}): parent {} chunk {} ({}..{}) is not a coarser chunk containing it",
                        c.granularity.as_str(), c.ordinal, c.byte_start, c.byte_end,
                        p.granularity.as_str(), p.ordinal, p.byte_start, p.byte_end
                    ));
                }
            }
        }
    }
    let mut groups: Vec<shared::Granularity> = chunks.iter().map(|c| c.granularity).collect();
    groups.dedup();
    for g in groups {
        let group: Vec<Chunk> = chunks
            .iter()
            .filter(|c| c.granularity == g)
            .cloned()
            .collect();
        let sub = if g == profile.granularity {
            profile
        } else {
            match profile
                .auxiliaries
                .iter()
                .find(|a| a.profile.granularity == g)
            {
                Some(a) => &a.profile,
                None => {
                    v.push(format!(
                        "granularity {} comes from no strategy of the profile",
                        g.as_str()
                    ));
                    continue;
                }
            }
        };
        let cover = g != shared::Granularity::Document
            && !(g == shared::Granularity::Table && g != profile.granularity);
        let lvl = level_for(sub, level);
        for line in check_group(normalized, &group, sub, lvl, profile.granularity, cover) {
            v.push(format!("[{}] {line}", g.as_str()));
        }
    }
    v
}

/// The checks of one granularity's chunks under the (sub-)profile that
/// made them; ids are namespaced against `primary`; `cover`: nothing lost.
pub fn check_group(
    normalized: &str,
    chunks: &[Chunk],
    profile: &Profile,
    level: Level,
    primary: shared::Granularity,
    cover: bool,
) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    let mut prev_end: Option<usize> = None;
    let mut prev_start: Option<usize> = None;
    // Running char count: spans increase, so offsets are counted in one pass.
    let mut cursor = (0usize, 0u64);
    let first_heading = if level == Level::Full {
        first_atx_heading(normalized)
    } else {
        None
    };
    for (i, c) in chunks.iter().enumerate() {
        let at = format!(
            "chunk #{i} ({}..{} {})",
            c.byte_start,
            c.byte_end,
            c.chunk_type.as_str()
        );
        // Ordinals run 0..n-1 within each granularity (docs/contract.md#strategies).
        let expected = chunks[..i]
            .iter()
            .filter(|p| p.granularity == c.granularity)
            .count();
        if c.ordinal as usize != expected {
            v.push(format!(
                "{at}: ordinal {} (expected {expected} among the {} chunks)",
                c.ordinal,
                c.granularity.as_str()
            ));
        }
        if let Some(key) = &c.chunk_key {
            let want = format!(
                "{}:{}:{}:{}",
                c.document_id,
                profile.strategy,
                c.granularity.as_str(),
                c.ordinal
            );
            if *key != want {
                v.push(format!("{at}: chunk_key {key}, expected {want}"));
            }
        }
        if c.chunk_text.trim().is_empty() {
            v.push(format!("{at}: empty chunk_text"));
        }
        // Issue 17: a profile fitted to an embedder keeps embed_text in its
        // window, counted afresh here.
        let window = profile.embedder.as_ref();
        match (
            window.and_then(|w| Some((w.counter()?, w.max_tokens))),
            c.embed_token_count,
        ) {
            (Some((counter, max)), Some(n)) => {
                let real = counter.count(&c.embed_text);
                if real != n as usize || real > max {
                    v.push(format!(
                        "{at}: embed_token_count {n}, recounted {real}, window {max}"
                    ));
                }
            }
            (None, None) => {}
            (w, n) => v.push(format!(
                "{at}: embed_token_count {n:?} with window {}",
                w.is_some()
            )),
        }
        if c.token_count as usize > profile.hard_max_tokens() {
            v.push(format!(
                "{at}: {} tokens > hard max {}",
                c.token_count,
                profile.hard_max_tokens()
            ));
        }
        let exact = reference_tokens(profile.tokenizer, &c.chunk_text);
        if exact != c.token_count as usize {
            v.push(format!(
                "{at}: token_count {} but tiktoken counts {exact}",
                c.token_count
            ));
        }
        if c.tokenizer != profile.tokenizer.name() || c.profile != profile.name {
            v.push(format!(
                "{at}: tokenizer/profile fields {} / {}",
                c.tokenizer, c.profile
            ));
        }
        if !ids.insert(c.chunk_id.clone()) {
            v.push(format!("{at}: duplicate chunk_id {}", c.chunk_id));
        }
        let want_id = expected_id_under(c, profile, primary);
        if want_id != c.chunk_id {
            v.push(format!(
                "{at}: chunk_id {} but the docs/contract.md#ids formula gives {want_id}",
                short(&c.chunk_id)
            ));
        }
        let typed = level != Level::Universal;
        if typed {
            check_fences(&c.chunk_text, &at, &mut v);
        }

        // Own span.
        let (bs, be) = (c.byte_start as usize, c.byte_end as usize);
        if !(bs < be
            && be <= normalized.len()
            && normalized.is_char_boundary(bs)
            && normalized.is_char_boundary(be))
        {
            v.push(format!(
                "{at}: own span empty, out of range or not on char boundaries"
            ));
            continue;
        }
        if prev_start.is_some_and(|p| p >= bs) || prev_end.is_some_and(|p| p > bs) {
            v.push(format!(
                "{at}: own span does not follow the previous one (prev end {prev_end:?})"
            ));
        }
        let before = prev_start.zip(prev_end);
        prev_start = Some(bs);
        prev_end = Some(be);
        let cs = char_offset(normalized, &mut cursor, bs);
        let ce = char_offset(normalized, &mut cursor, be);
        if (cs, ce) != (c.char_start, c.char_end) {
            v.push(format!(
                "{at}: char offsets {}..{} but the bytes give {cs}..{ce}",
                c.char_start, c.char_end
            ));
        }
        let own = &normalized[bs..be];
        if own.trim().is_empty() {
            v.push(format!("{at}: own span is only whitespace"));
        }
        // embed_text is the chunk text, or a breadcrumb of at most 32
        // tokens, a blank line, and the chunk text (issue 17).
        // A table summary (the `table` strategy's summary mode) is embedded
        // as its description in words.
        let summary = c
            .facet_json
            .as_ref()
            .is_some_and(|f| f["mode"] == "summary" && f.get("markdown").is_some());
        if summary && !c.embed_text.starts_with("Table") {
            v.push(format!(
                "{at}: a table summary's embed_text does not describe the table"
            ));
        }
        // The layout heuristic leaves running headers, footers and page
        // numbers (whole one-line paragraphs) out of the text it embeds.
        let furniture_left_out = matches!(
            profile.strategy.as_str(),
            "layout_heuristic" | "layout_aware" | "grobid"
        ) && furniture_left_out(&c.embed_text, &c.chunk_text);
        if c.embed_text != c.chunk_text && !summary && !furniture_left_out {
            match c
                .embed_text
                .strip_suffix(c.chunk_text.as_str())
                .and_then(|head| head.strip_suffix("\n\n"))
            {
                Some(crumb) => {
                    let n = reference_tokens(profile.tokenizer, crumb);
                    if n > 32 || crumb.trim().is_empty() {
                        v.push(format!(
                            "{at}: breadcrumb of {n} tokens: {:?}",
                            head(crumb, 60)
                        ));
                    }
                }
                None => v.push(format!(
                    "{at}: embed_text is not breadcrumb + blank line + chunk_text"
                )),
            }
        }

        // Page numbers only where the document has them, in order.
        match (c.page_start, c.page_end) {
            (None, None) => {}
            (Some(a), Some(z))
                if a <= z
                    && matches!(
                        profile.strategy.as_str(),
                        "layout_heuristic" | "layout_aware" | "grobid"
                    ) => {}
            other => v.push(format!("{at}: page_start/page_end {other:?}")),
        }

        // A strategy that renders its span as a framework does (LangChain's
        // Markdown header splitter) keeps the span's non-whitespace
        // characters in order, leaving some out, and adds no others.
        if !profile.rules().verbatim_text {
            if c.closing_suffix_chars != 0 {
                v.push(format!("{at}: a rendered chunk with a suffix"));
            }
            // An overlap prefix is drawn from the text before the own span.
            let split = prefix_len_bytes(&c.chunk_text, c.overlap_prefix_chars as usize)
                .unwrap_or(c.chunk_text.len());
            let (pre, rest) = c.chunk_text.split_at(split);
            use shared::chunk::rendered::drawn_in_order as drawn;
            if !drawn(rest, own) || !drawn(pre, &normalized[..bs]) {
                v.push(format!(
                    "{at}: chunk_text {:?} is not drawn from its own span {:?}",
                    head(&c.chunk_text, 40),
                    head(own, 40)
                ));
            }
            continue;
        }
        // chunk_text == prefix + own + suffix.
        let prefix_bytes = prefix_len_bytes(&c.chunk_text, c.overlap_prefix_chars as usize);
        let suffix_bytes = suffix_len_bytes(&c.chunk_text, c.closing_suffix_chars as usize);
        let (Some(prefix_bytes), Some(suffix_bytes)) = (prefix_bytes, suffix_bytes) else {
            v.push(format!(
                "{at}: prefix/suffix char counts exceed the chunk text"
            ));
            continue;
        };
        if prefix_bytes + suffix_bytes > c.chunk_text.len() {
            v.push(format!("{at}: prefix and suffix overlap"));
            continue;
        }
        let prefix = &c.chunk_text[..prefix_bytes];
        // Issue 17: overlap copies at most half of the previous chunk's own
        // text (structural; the whitespace between them may add a token).
        if level == Level::Full && !prefix.is_empty() {
            if let Some((ps, pe)) = before {
                let prev_tokens = reference_tokens(profile.tokenizer, &normalized[ps..pe]);
                let copied = reference_tokens(profile.tokenizer, prefix.trim_end());
                if copied * 2 > prev_tokens + 1
                    && matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed)
                {
                    v.push(format!(
                        "{at}: overlap of {copied} tokens is more than half of the previous chunk's {prev_tokens}"
                    ));
                }
            }
        }
        let middle = &c.chunk_text[prefix_bytes..c.chunk_text.len() - suffix_bytes];
        let suffix = &c.chunk_text[c.chunk_text.len() - suffix_bytes..];
        if middle != own {
            v.push(format!(
                "{at}: chunk_text is not prefix + normalized[own] + suffix (own starts {:?}, text middle starts {:?})",
                head(own, 40),
                head(middle, 40)
            ));
        }
        if !typed {
            if !suffix.is_empty() {
                v.push(format!(
                    "{at}: suffix {suffix:?} from a strategy that adds none"
                ));
            }
            // A table split by rows repeats its header (sliding windows
            // keep tables whole and split them only beyond the hard max).
            let header = c.chunk_type == ChunkType::Table
                && c.is_table == Some(true)
                && normalized[..bs].contains(prefix.trim_end());
            if !normalized[..bs].ends_with(prefix) && !header {
                v.push(format!(
                    "{at}: overlap prefix {:?} is not the text right before the own span",
                    head(prefix, 40)
                ));
            }
            continue;
        }
        if !suffix.is_empty() && !is_closing_fence_suffix(suffix) {
            v.push(format!(
                "{at}: closing suffix {suffix:?} is not \\n + a closing fence"
            ));
        }
        if !prefix.is_empty() {
            check_prefix(normalized, c, bs, prefix, &at, &mut v);
        }
        if c.chunk_type == ChunkType::Table {
            check_table_start(&c.chunk_text, &at, &mut v);
        }
        if let Some(h) = first_heading {
            if bs >= h && c.headings_path.is_empty() {
                v.push(format!("{at}: starts after the first ATX heading (byte {h}) but headings_path is empty"));
            }
        }
    }
    if cover {
        // Headings the strategy carries as metadata (LangChain's
        // strip_headers) may lie in no chunk.
        let headings = if profile.rules().headings_as_metadata {
            atx_heading_lines(normalized)
        } else {
            Vec::new()
        };
        check_nothing_lost(normalized, chunks, &headings, &mut v);
    }
    v
}

/// The byte ranges of ATX heading lines (`#` to `######`, a space or the
/// line's end after them, up to three spaces of indentation).
fn atx_heading_lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches(' ');
        let hashes = body.bytes().take_while(|&b| b == b'#').count();
        let after = body[hashes..].chars().next();
        if line.len() - body.len() <= 3
            && (1..=6).contains(&hashes)
            && after.is_none_or(char::is_whitespace)
        {
            out.push((pos, pos + line.len()));
        }
        pos += line.len();
    }
    out
}

/// Whether `embed_text` is `chunk_text` (with or without a breadcrumb of at
/// most 32 tokens and a blank line before it) less some of its paragraphs,
/// each a single line of at most 100 characters (page furniture).
fn furniture_left_out(embed_text: &str, chunk_text: &str) -> bool {
    let paragraphs = |t: &str| -> Vec<String> {
        t.split("\n\n")
            .map(|p| p.trim_matches('\n').to_owned())
            .filter(|p| !p.trim().is_empty())
            .collect()
    };
    let all = paragraphs(chunk_text);
    let kept = paragraphs(embed_text);
    // The breadcrumb, if any, is the first paragraph of embed_text.
    [0usize, 1].iter().any(|&skip| {
        let Some(body) = kept.get(skip..) else {
            return false;
        };
        if body.is_empty() || body.len() == all.len() {
            return false;
        }
        // The kept paragraphs are the chunk's, in order; the dropped ones
        // are page furniture.
        let mut rest = all.iter();
        body.iter().all(|k| rest.by_ref().any(|p| p == k)) && {
            let dropped: Vec<&String> = all.iter().filter(|p| !body.contains(p)).collect();
            dropped
                .iter()
                .all(|p| !p.contains('\n') && p.chars().count() <= 100)
        }
    })
}
