//! Punkt's learned parameters (NLTK's `PunktParameters`): abbreviation
//! types, collocations, frequent sentence starters and orthographic
//! context. LlamaIndex's `SentenceSplitter` uses none (an untrained
//! `PunktSentenceTokenizer()`), which is [`PunktParameters::default`];
//! Haystack's uses a trained model (`super::Model`, NLTK's `punkt_tab`
//! data shipped in `data/`), which both annotation passes consult.

use std::collections::{HashMap, HashSet};

/// Orthographic context: seen upper case at the beginning of a sentence.
pub const ORTHO_BEG_UC: u32 = 1 << 1;
/// Seen upper case in the middle of a sentence.
pub const ORTHO_MID_UC: u32 = 1 << 2;
/// Seen upper case in an unknown position.
pub const ORTHO_UNK_UC: u32 = 1 << 3;
/// Seen lower case at the beginning of a sentence.
pub const ORTHO_BEG_LC: u32 = 1 << 4;
/// Seen lower case in the middle of a sentence.
pub const ORTHO_MID_LC: u32 = 1 << 5;
/// Seen lower case in an unknown position.
pub const ORTHO_UNK_LC: u32 = 1 << 6;
/// Seen upper case anywhere.
pub const ORTHO_UC: u32 = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC;
/// Seen lower case anywhere.
pub const ORTHO_LC: u32 = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC;

/// What a Punkt model learned; empty for the untrained tokenizer.
/// Word types are lowercased tokens (`##number##` for numbers), without
/// their final period for abbreviations and collocations' first words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PunktParameters {
    /// Known abbreviations (`abbrev_types`), e.g. `"dr"`, `"u.s"`.
    pub abbrev_types: HashSet<String>,
    /// Word pairs across a period that do not break a sentence
    /// (`collocations`), e.g. `("s", "bach")`.
    pub collocations: HashSet<(String, String)>,
    /// Words that often start a sentence (`sent_starters`).
    pub sent_starters: HashSet<String>,
    /// Orthographic context flags by word type (`ortho_context`,
    /// `ORTHO_*` bits).
    pub ortho_context: HashMap<String, u32>,
}

impl PunktParameters {
    /// `typ in abbrev_types`.
    pub fn is_abbreviation(&self, typ: &str) -> bool {
        !self.abbrev_types.is_empty() && self.abbrev_types.contains(typ)
    }

    /// `(typ, next) in collocations`.
    pub fn is_collocation(&self, typ: &str, next: &str) -> bool {
        !self.collocations.is_empty()
            && self
                .collocations
                .contains(&(typ.to_owned(), next.to_owned()))
    }

    /// `typ in sent_starters`.
    pub fn is_sent_starter(&self, typ: &str) -> bool {
        !self.sent_starters.is_empty() && self.sent_starters.contains(typ)
    }

    /// `ortho_context[typ]` (0 when unseen).
    pub fn ortho(&self, typ: &str) -> u32 {
        self.ortho_context.get(typ).copied().unwrap_or(0)
    }
}
