//! Entity co-occurrence communities (the `graphrag` strategy): GraphRAG's
//! idea (an entity graph whose communities are the units of retrieval)
//! turned into contiguous segments.
//!
//! 1. Entities of each sentence: capitalised word runs that do not open the
//!    sentence ("Tracer Provider", "Kubernetes"; a run of two words or more
//!    anywhere), acronyms (`HTTP`, `OTLP`), inline code (`` `Vec` ``) and
//!    identifiers (`snake_case`, `CamelCase`, `a::b`); English and Russian
//!    alike. Lowercased; an entity counts when two or more sentences name it.
//! 2. The entity graph: an edge per pair of entities in one sentence (weight
//!    1) or in adjacent sentences (weight 1/2).
//! 3. Communities by label propagation, in a fixed order (each entity, in
//!    order of first mention, takes the label its neighbours hold with the
//!    most weight, ties to the smaller label; at most 20 rounds): the same
//!    input gives the same communities.
//! 4. Each sentence belongs to the community most of its entity mentions
//!    are in (ties to the earlier community); a sentence without entities
//!    belongs to the one before it. A boundary falls where the community
//!    changes and the new one holds for the next sentence too (a one-sentence
//!    excursion is no topic).

use rustc_hash::FxHashMap;

/// Parameters of [`entity_communities`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EntityGraphParams {
    /// An entity counts when this many sentences name it; default 2.
    pub min_mentions: usize,
    /// Label propagation rounds at most; default 20.
    pub max_rounds: usize,
}

impl Default for EntityGraphParams {
    fn default() -> Self {
        Self {
            min_mentions: 2,
            max_rounds: 20,
        }
    }
}

/// Function words that open sentences (English and Russian).
const OPENERS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "in",
    "on",
    "for",
    "to",
    "if",
    "when",
    "it",
    "its",
    "our",
    "we",
    "each",
    "every",
    "then",
    "with",
    "by",
    "as",
    "at",
    "from",
    "all",
    "some",
    "в",
    "на",
    "это",
    "эти",
    "как",
    "для",
    "при",
    "если",
    "когда",
    "с",
    "по",
    "из",
    "все",
    "каждый",
];

fn is_identifier(w: &str) -> bool {
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    letters >= 2
        && (w.contains('_')
            || w.contains("::")
            || w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase))
}

fn is_acronym(w: &str) -> bool {
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    letters >= 2 && !w.chars().any(char::is_lowercase) && w.chars().any(char::is_uppercase)
}

fn capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
}

/// The entities `sentence` names, lowercased, in order, each once.
pub fn entities(sentence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |e: String| {
        if !e.is_empty() && !out.contains(&e) {
            out.push(e);
        }
    };
    // Inline code.
    let mut rest = sentence;
    while let Some(a) = rest.find('`') {
        let after = &rest[a + 1..];
        let Some(z) = after.find('`') else { break };
        let code = after[..z].trim();
        if !code.is_empty() && code.len() <= 60 {
            push(code.to_lowercase());
        }
        rest = &after[z + 1..];
    }
    let words: Vec<&str> = sentence
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '"' | '«' | '»' | '`' | '*')
        })
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut run: Vec<&str> = Vec::new();
    let mut run_start = 0;
    let flush = |run: &mut Vec<&str>, start: usize, push: &mut dyn FnMut(String)| {
        // A sentence's first word is capitalised anyway: a function word
        // there is no part of a name, a lone word no name of its own.
        let mut name: &[&str] = run;
        if start == 0
            && name
                .first()
                .is_some_and(|w| OPENERS.contains(&w.to_lowercase().as_str()))
        {
            name = &name[1..];
        }
        if name.len() >= 2 || (name.len() == 1 && (start > 0 || name.len() < run.len())) {
            push(name.join(" ").to_lowercase());
        }
        run.clear();
    };
    for (k, w) in words.iter().enumerate() {
        if is_identifier(w) || is_acronym(w) {
            flush(&mut run, run_start, &mut push);
            push(w.to_lowercase());
            continue;
        }
        if capitalised(w) && w.chars().count() >= 2 {
            if run.is_empty() {
                run_start = k;
            }
            run.push(w);
        } else {
            flush(&mut run, run_start, &mut push);
        }
    }
    flush(&mut run, run_start, &mut push);
    out
}

/// Community labels of the entity graph (node `i` is entity `i`).
fn communities(n: usize, edges: &FxHashMap<(usize, usize), f64>, rounds: usize) -> Vec<usize> {
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    let mut pairs: Vec<(&(usize, usize), &f64)> = edges.iter().collect();
    pairs.sort_by_key(|(k, _)| **k);
    for (&(a, b), &w) in pairs {
        adj[a].push((b, w));
        adj[b].push((a, w));
    }
    let mut label: Vec<usize> = (0..n).collect();
    for _ in 0..rounds {
        let mut changed = false;
        for v in 0..n {
            let mut score: Vec<(usize, f64)> = Vec::new();
            for &(u, w) in &adj[v] {
                match score.iter_mut().find(|(l, _)| *l == label[u]) {
                    Some(s) => s.1 += w,
                    None => score.push((label[u], w)),
                }
            }
            let best = score
                .iter()
                .copied()
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            if let Some((l, w)) = best {
                // Keep the own label on a tie with it.
                let own = score
                    .iter()
                    .find(|(x, _)| *x == label[v])
                    .map_or(0.0, |s| s.1);
                if l != label[v] && w > own {
                    label[v] = l;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    label
}

/// Topic boundaries of `sentences` by entity communities (see the module
/// docs). A boundary `i` falls between sentence `i - 1` and `i`; ascending.
pub fn entity_communities(sentences: &[&str], p: &EntityGraphParams) -> Vec<usize> {
    let n = sentences.len();
    if n < 3 {
        return Vec::new();
    }
    let named: Vec<Vec<String>> = sentences.iter().map(|s| entities(s)).collect();
    let mut mentions: FxHashMap<&str, usize> = FxHashMap::default();
    for e in named.iter().flatten() {
        *mentions.entry(e.as_str()).or_default() += 1;
    }
    // Entity ids in order of first mention.
    let mut id: FxHashMap<&str, usize> = FxHashMap::default();
    let mut per_sentence: Vec<Vec<usize>> = Vec::with_capacity(n);
    for es in &named {
        let mut ids = Vec::new();
        for e in es {
            if mentions.get(e.as_str()).copied().unwrap_or(0) < p.min_mentions.max(1) {
                continue;
            }
            let next = id.len();
            ids.push(*id.entry(e.as_str()).or_insert(next));
        }
        per_sentence.push(ids);
    }
    let mut edges: FxHashMap<(usize, usize), f64> = FxHashMap::default();
    let mut link = |a: usize, b: usize, w: f64| {
        if a != b {
            *edges.entry((a.min(b), a.max(b))).or_default() += w;
        }
    };
    for (k, ids) in per_sentence.iter().enumerate() {
        for (x, &a) in ids.iter().enumerate() {
            for &b in &ids[x + 1..] {
                link(a, b, 1.0);
            }
            if let Some(next) = per_sentence.get(k + 1) {
                for &b in next {
                    link(a, b, 0.5);
                }
            }
        }
    }
    let label = communities(id.len(), &edges, p.max_rounds);
    // Each sentence's community.
    let mut community: Vec<Option<usize>> = Vec::with_capacity(n);
    for ids in &per_sentence {
        let mut count: Vec<(usize, usize)> = Vec::new();
        for &e in ids {
            match count.iter_mut().find(|(l, _)| *l == label[e]) {
                Some(c) => c.1 += 1,
                None => count.push((label[e], 1)),
            }
        }
        let best = count
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
        community.push(
            best.map(|(l, _)| l)
                .or_else(|| community.last().copied().flatten()),
        );
    }
    let mut out = Vec::new();
    for i in 1..n {
        let (Some(before), Some(here)) = (community[i - 1], community[i]) else {
            continue;
        };
        let holds = community.get(i + 1).is_none_or(|next| *next == Some(here));
        if before != here && holds && out.last() != Some(&i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_are_names_acronyms_code_and_identifiers() {
        assert_eq!(
            entities(
                "The Tracer Provider sends spans over OTLP to the `Collector` via send_batch."
            ),
            ["collector", "tracer provider", "otlp", "send_batch"]
        );
        assert_eq!(
            entities("Rust is fast. Москва и Казань."),
            ["москва", "казань"]
        );
    }

    #[test]
    fn a_change_of_entity_community_is_a_boundary() {
        let s = [
            "Kubernetes schedules Pods onto Nodes.",
            "The Kubernetes scheduler weighs Nodes by free resources.",
            "Pods that fit no Node wait in the Kubernetes queue.",
            "PostgreSQL stores rows in Heap pages.",
            "A Heap page of PostgreSQL holds tuples and a header.",
            "Vacuum cleans PostgreSQL Heap pages of dead tuples.",
        ];
        assert_eq!(entity_communities(&s, &EntityGraphParams::default()), [3]);
        // Deterministic: the same input, the same boundaries.
        assert_eq!(
            entity_communities(&s, &EntityGraphParams::default()),
            entity_communities(&s, &EntityGraphParams::default())
        );
        assert!(entity_communities(&s[..2], &EntityGraphParams::default()).is_empty());
    }
}
