//! Trained Punkt models compiled into the crate (`data/`, see its
//! README): NLTK's `punkt_tab` English and Russian parameters, read as
//! NLTK 3.10.4's `load_punkt_params` reads them (`PunktDecoder`: one entry
//! a line, the final newline removed, `.tab` fields split at tabs), each
//! parsed once and shared.

use std::sync::{Arc, OnceLock};

use super::params::PunktParameters;

/// A trained model shipped with the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// `punkt_tab/english` (Penn Treebank WSJ, Kiss & Strunk).
    English,
    /// `punkt_tab/russian`.
    Russian,
}

/// The four files of one model.
struct Files {
    abbrev_types: &'static str,
    collocations: &'static str,
    sent_starters: &'static str,
    ortho_context: &'static str,
}

const ENGLISH: Files = Files {
    abbrev_types: include_str!("data/english/abbrev_types.txt"),
    collocations: include_str!("data/english/collocations.tab"),
    sent_starters: include_str!("data/english/sent_starters.txt"),
    ortho_context: include_str!("data/english/ortho_context.tab"),
};

const RUSSIAN: Files = Files {
    abbrev_types: include_str!("data/russian/abbrev_types.txt"),
    collocations: include_str!("data/russian/collocations.tab"),
    sent_starters: include_str!("data/russian/sent_starters.txt"),
    ortho_context: include_str!("data/russian/ortho_context.tab"),
};

/// Haystack's `haystack/data/abbreviations/en.txt` (haystack-ai 3.4.1).
const HAYSTACK_EN: &str = include_str!("data/haystack/en.txt");

/// The lines of a file as Python iterates a text file: each without its
/// final newline; none for an empty file.
fn lines(s: &str) -> impl Iterator<Item = &str> {
    s.split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
}

fn parse(f: &Files) -> PunktParameters {
    PunktParameters {
        abbrev_types: lines(f.abbrev_types).map(str::to_owned).collect(),
        sent_starters: lines(f.sent_starters).map(str::to_owned).collect(),
        collocations: lines(f.collocations)
            .filter_map(|l| l.split_once('\t'))
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect(),
        ortho_context: lines(f.ortho_context)
            .filter_map(|l| l.split_once('\t'))
            .filter_map(|(t, n)| Some((t.to_owned(), n.trim().parse::<u32>().ok()?)))
            .collect(),
    }
}

impl Model {
    /// The model's parameters (parsed on first use).
    pub fn params(self) -> Arc<PunktParameters> {
        static EN: OnceLock<Arc<PunktParameters>> = OnceLock::new();
        static RU: OnceLock<Arc<PunktParameters>> = OnceLock::new();
        match self {
            Model::English => EN.get_or_init(|| Arc::new(parse(&ENGLISH))).clone(),
            Model::Russian => RU.get_or_init(|| Arc::new(parse(&RUSSIAN))).clone(),
        }
    }

    /// The English model with Haystack's curated abbreviations added
    /// (`SentenceSplitter(extend_abbreviations=True)`: the lines of
    /// `en.txt` by `split("\n")`, the empty string from its final newline
    /// included).
    pub fn english_with_haystack_abbreviations() -> Arc<PunktParameters> {
        static EXT: OnceLock<Arc<PunktParameters>> = OnceLock::new();
        EXT.get_or_init(|| {
            let mut p = (*Model::English.params()).clone();
            p.abbrev_types
                .extend(HAYSTACK_EN.split('\n').map(str::to_owned));
            Arc::new(p)
        })
        .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_models_have_nltks_sizes() {
        let en = Model::English.params();
        // As NLTK 3.10.4 loads them (the files end without a newline).
        assert_eq!(en.abbrev_types.len(), 156);
        assert_eq!(en.collocations.len(), 37);
        assert_eq!(en.sent_starters.len(), 39);
        assert_eq!(en.ortho_context.len(), 20_366);
        assert!(en.is_abbreviation("u.s"));
        assert!(!en.is_abbreviation(""));
        let ext = Model::english_with_haystack_abbreviations();
        assert!(ext.is_abbreviation(""));
        assert!(ext.is_abbreviation("zool"));
        let ru = Model::Russian.params();
        assert!(ru.is_abbreviation(""));
        assert!(ru.collocations.is_empty() && ru.sent_starters.is_empty());
        assert_eq!(ru.ortho("download"), 0);
        assert_eq!(ru.ortho_context.len(), 1);
        assert_eq!(ru.abbrev_types.len(), 1989);
    }
}
