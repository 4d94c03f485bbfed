//! Word tokenization shared by the lexical segmenters ([`mod@super::texttiling`],
//! [`mod@super::c99`]).
//!
//! [`SentenceTerms::new`] turns sentences into sparse term-frequency vectors
//! over dense `u32` term ids. One pass over each sentence's characters:
//!
//! 1. A word is a maximal run of alphanumeric characters (any script, by
//!    [`char::is_alphanumeric`]); everything else separates words, so
//!    `don't` is `don` + `t` and `что-то` is `что` + `то`.
//! 2. Every word counts towards the sentence's raw word count
//!    ([`SentenceTerms::words`]), which TextTiling's block budget uses (Hearst
//!    counts tokens before stopword removal).
//! 3. The word is lowercased (full Unicode lowercasing) with `ё` folded to
//!    `е`. Words of one character and words made only of digits are dropped,
//!    and so are stopwords ([`is_stopword`]: a compact compiled-in list of
//!    about 190 English and 160 Russian function words, including contraction
//!    stubs such as `don`, `isn`, `ll`, `ve`).
//! 4. Optionally the word is stemmed by [`stem`], a light suffix stripper
//!    (documented there), so `planets` and `planet`, `звёзды` and `звезда`
//!    share a term.
//! 5. The surviving term gets a dense id, assigned in order of first
//!    occurrence. The hash map only answers lookups and is never iterated, so
//!    ids (and every result built on them) are deterministic.
//!
//! Each sentence's terms are stored sorted by id with their counts, in one
//! flat array (no allocation per sentence).

use rustc_hash::FxHashMap;

/// Stopwords, lowercase with `ё` folded to `е`, sorted by byte order (which
/// [`is_stopword`]'s binary search relies on; a test checks it).
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "cannot", "could", "couldn", "did", "didn", "do", "does",
    "doesn", "doing", "don", "done", "down", "during", "each", "either", "else", "etc", "even",
    "ever", "every", "few", "for", "from", "further", "get", "gets", "got", "had", "hadn",
    "has", "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "however", "if", "in", "into", "is", "isn", "it", "its", "itself",
    "just", "least", "less", "let", "lets", "like", "ll", "made", "make", "makes", "many",
    "may", "me", "might", "more", "most", "much", "must", "my", "myself", "neither", "no",
    "nor", "not", "now", "of", "off", "often", "on", "once", "one", "only", "onto", "or",
    "other", "others", "our", "ours", "ourselves", "out", "over", "own", "per", "rather", "re",
    "really", "same", "say", "says", "shall", "she", "should", "shouldn", "since", "so",
    "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
    "there", "these", "they", "this", "those", "though", "through", "thus", "to", "too",
    "under", "until", "up", "upon", "us", "use", "used", "uses", "using", "ve", "very", "via",
    "was", "wasn", "we", "were", "weren", "what", "when", "where", "whether", "which", "while",
    "who", "whom", "whose", "why", "will", "with", "within", "without", "won", "would",
    "wouldn", "yet", "you", "your", "yours", "yourself", "yourselves", "без", "более",
    "больше", "будем", "будет", "будете", "будешь", "буду", "будут", "бы", "был", "была",
    "были", "было", "быть", "вам", "вас", "ваш", "ваша", "ваше", "ваши", "весь", "во", "вот",
    "все", "всего", "всем", "всех", "всю", "вся", "вы", "где", "да", "даже", "для", "до",
    "его", "ее", "ей", "ему", "если", "есть", "еще", "же", "за", "здесь", "из", "или", "им",
    "ими", "их", "как", "какая", "какие", "каким", "какой", "когда", "кого", "ком", "кому",
    "кто", "ли", "либо", "лишь", "между", "меня", "мне", "мной", "может", "можно", "мои",
    "мой", "моя", "мы", "на", "над", "надо", "нам", "нами", "нас", "наш", "наша", "наше",
    "наши", "не", "него", "нее", "ней", "нем", "нему", "нет", "ни", "ним", "ними", "них", "но",
    "ну", "об", "однако", "он", "она", "они", "оно", "от", "очень", "по", "под", "после",
    "потому", "при", "про", "раз", "сам", "сама", "сами", "само", "свое", "свои", "свой",
    "своя", "себе", "себя", "со", "так", "также", "такие", "такой", "там", "те", "тем", "теми",
    "тех", "то", "того", "тоже", "той", "только", "том", "тот", "ту", "тут", "ты", "уже",
    "хотя", "чего", "чей", "чем", "что", "чтобы", "эта", "эти", "этим", "этими", "этих", "это",
    "этого", "этой", "этом", "этому", "этот",
];

/// Russian inflectional endings [`stem`] strips, longest first so the first
/// match is the longest one.
#[rustfmt::skip]
const RUSSIAN_ENDINGS: &[&str] = &[
    // Three letters.
    "ами", "ями", "ого", "его", "ому", "ему", "ыми", "ими", "ешь", "ишь", "ете", "ите", "ать",
    "ять", "ить", "еть", "ует", "уют", "ают", "яют", "ала", "ила", "ела", "али", "или", "ели",
    // Two letters.
    "ах", "ях", "ам", "ям", "ом", "ем", "ой", "ей", "ий", "ый", "ая", "яя", "ое", "ее", "ые",
    "ие", "ую", "юю", "ых", "их", "ым", "им", "ов", "ев", "ью", "ия", "ии", "ть", "ет", "ит",
    "ут", "ют", "ат", "ят", "ал", "ил", "ел", "ла", "ло", "ли",
    // One letter.
    "а", "я", "о", "е", "и", "ы", "у", "ю", "ь", "й",
];

/// The shortest stem (in characters) [`stem`] leaves; shorter words are
/// mostly roots already, and stripping them merges unrelated words.
const MIN_STEM_CHARS: usize = 3;

/// Whether `word` (lowercase, `ё` folded to `е`) is an English or Russian
/// stopword.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Writes the stem of `word` (lowercase, `ё` folded to `е`) into `out`,
/// replacing its contents. A light suffix stripper, not Porter or Snowball:
/// it only has to make inflected forms of a word meet, and never has to
/// produce a real word.
///
/// Words of ASCII letters (English):
/// 1. plurals: `-sses` to `-ss`, `-ies` to `-i` (words over four letters),
///    otherwise a final `-s` goes unless it follows `s`, `u` or `i`
///    (`class`, `virus`, `axis` stay) or the word has three letters or fewer;
/// 2. then one of `-ing` and `-ed` when at least three letters holding a
///    vowel remain (a final doubled consonant other than `l`, `s`, `z` is
///    undoubled: `running` to `run`), or `-ly` when five letters remain;
/// 3. then a final `-e` goes and a final `-y` becomes `-i` when three letters
///    remain, so `bake`, `baked`, `baking` all give `bak`, and `galaxy`,
///    `galaxies` give `galaxi`.
///
/// Words of Russian letters: a reflexive `-ся` / `-сь` goes when four letters
/// remain, then the longest inflectional ending (noun, adjective and verb
/// endings such as `-ами`, `-ого`, `-ать`, `-ах`, `-ый`, `-а`, `-ь`) whose
/// removal leaves at least three letters: `планетами`, `планеты` and
/// `планета` all give `планет`.
///
/// Any other word (digits, mixed scripts, other alphabets) is copied as is.
pub fn stem(word: &str, out: &mut String) {
    out.clear();
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase()) {
        stem_english(word, out);
    } else if !word.is_empty() && word.chars().all(|c| ('а'..='я').contains(&c)) {
        out.push_str(stem_russian(word));
    } else {
        out.push_str(word);
    }
}

fn stem_english(word: &str, out: &mut String) {
    // Step 1: plurals.
    let mut s = if let Some(base) = word.strip_suffix("sses") {
        &word[..base.len() + 2]
    } else if word.len() > 4 && word.ends_with("ies") {
        &word[..word.len() - 2]
    } else if word.len() > 3
        && word.ends_with('s')
        && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is"))
    {
        &word[..word.len() - 1]
    } else {
        word
    };
    // Step 2: -ing, -ed, -ly.
    let has_vowel = |t: &str| {
        t.bytes()
            .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
    };
    if let Some(base) = s
        .strip_suffix("ing")
        .or_else(|| s.strip_suffix("ed"))
        .filter(|b| b.len() >= MIN_STEM_CHARS && has_vowel(b))
    {
        s = undouble(base);
    } else if let Some(base) = s.strip_suffix("ly").filter(|b| b.len() >= 5) {
        s = base;
    }
    // Step 3: final -e and -y.
    if s.len() > MIN_STEM_CHARS && s.ends_with('e') {
        s = &s[..s.len() - 1];
        out.push_str(s);
    } else if s.len() > MIN_STEM_CHARS && s.ends_with('y') {
        out.push_str(&s[..s.len() - 1]);
        out.push('i');
    } else {
        out.push_str(s);
    }
}

/// Drops the last letter of a final doubled consonant (`runn`, `stopp`),
/// except `ll`, `ss`, `zz` (`fall`, `pass`).
fn undouble(s: &str) -> &str {
    let b = s.as_bytes();
    match b {
        [.., x, y]
            if x == y && !matches!(x, b'a' | b'e' | b'i' | b'o' | b'u' | b'l' | b's' | b'z') =>
        {
            &s[..s.len() - 1]
        }
        _ => s,
    }
}

fn stem_russian(word: &str) -> &str {
    let chars = |t: &str| t.chars().count();
    let mut s = word;
    for refl in ["ся", "сь"] {
        if let Some(base) = s.strip_suffix(refl) {
            if chars(base) >= 4 {
                s = base;
                break;
            }
        }
    }
    for ending in RUSSIAN_ENDINGS {
        if let Some(base) = s.strip_suffix(ending) {
            if chars(base) >= MIN_STEM_CHARS {
                return base;
            }
        }
    }
    s
}

/// Calls `f` with every content word of `text` in order (lowercased,
/// stopwords, numbers and one-letter words dropped, stemmed when
/// `stem_words`; see the module docs) and returns the raw word count (every
/// alphanumeric run).
pub fn content_words(text: &str, stem_words: bool, f: impl FnMut(&str)) -> usize {
    Scanner::default().scan(text, stem_words, f)
}

/// Word buffers reused across sentences.
#[derive(Debug, Default)]
struct Scanner {
    word: String,
    stemmed: String,
}

impl Scanner {
    /// See [`content_words`].
    fn scan(&mut self, text: &str, stem_words: bool, mut f: impl FnMut(&str)) -> usize {
        let mut count = 0;
        let mut chars = 0usize;
        let mut numeric = true;
        // One extra separator flushes the last word.
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() {
                chars += 1;
                numeric &= c.is_numeric();
                if c.is_ascii() {
                    self.word.push(c.to_ascii_lowercase());
                } else {
                    for l in c.to_lowercase() {
                        self.word.push(if l == 'ё' { 'е' } else { l });
                    }
                }
            } else if chars > 0 {
                count += 1;
                if chars >= 2 && !numeric && !is_stopword(&self.word) {
                    if stem_words {
                        stem(&self.word, &mut self.stemmed);
                        f(&self.stemmed);
                    } else {
                        f(&self.word);
                    }
                }
                self.word.clear();
                chars = 0;
                numeric = true;
            }
        }
        count
    }
}

/// Sentences as sparse term-frequency vectors over dense term ids, built by
/// [`SentenceTerms::new`] (see the module docs for the tokenization).
#[derive(Debug, Clone, Default)]
pub struct SentenceTerms {
    /// `(term id, count)` of every sentence, each sentence's run sorted by id.
    entries: Vec<(u32, u32)>,
    /// Sentence `i`'s run is `entries[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// Raw word count of each sentence (stopwords, numbers and one-letter
    /// words included).
    words: Vec<usize>,
    /// Number of distinct terms; ids are `0..vocab_len`.
    vocab_len: usize,
}

impl SentenceTerms {
    /// Tokenizes `sentences` (see the module docs); `stem` applies [`stem`]
    /// to every content word.
    pub fn new(sentences: &[&str], stem_words: bool) -> Self {
        let mut vocab: FxHashMap<String, u32> = FxHashMap::default();
        let mut entries: Vec<(u32, u32)> = Vec::new();
        let mut starts = Vec::with_capacity(sentences.len() + 1);
        let mut words = Vec::with_capacity(sentences.len());
        starts.push(0);
        let mut scanner = Scanner::default();
        let mut ids: Vec<u32> = Vec::new();
        for sentence in sentences {
            ids.clear();
            let count = scanner.scan(sentence, stem_words, |term| {
                let id = match vocab.get(term) {
                    Some(&id) => id,
                    None => {
                        // Saturates only past 4 billion distinct terms, which
                        // no document that fits in memory reaches.
                        let id = u32::try_from(vocab.len()).unwrap_or(u32::MAX);
                        vocab.insert(term.to_owned(), id);
                        id
                    }
                };
                ids.push(id);
            });
            ids.sort_unstable();
            let base = entries.len();
            for &id in &ids {
                if entries.len() > base {
                    if let Some((last, n)) = entries.last_mut() {
                        if *last == id {
                            *n = n.saturating_add(1);
                            continue;
                        }
                    }
                }
                entries.push((id, 1));
            }
            starts.push(entries.len());
            words.push(count);
        }
        Self {
            entries,
            starts,
            words,
            vocab_len: vocab.len(),
        }
    }

    /// Number of sentences.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are no sentences.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Sentence `i`'s `(term id, count)` pairs sorted by id; empty when `i` is
    /// out of range.
    pub fn terms(&self, i: usize) -> &[(u32, u32)] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => self.entries.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Sentence `i`'s raw word count (every alphanumeric run, stopwords
    /// included); 0 when `i` is out of range.
    pub fn words(&self, i: usize) -> usize {
        self.words.get(i).copied().unwrap_or(0)
    }

    /// Number of distinct terms: every id is below it.
    pub fn vocab_len(&self) -> usize {
        self.vocab_len
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn words(text: &str, stem_words: bool) -> (Vec<String>, usize) {
        let mut out = Vec::new();
        let count = content_words(text, stem_words, |w| out.push(w.to_owned()));
        (out, count)
    }

    fn stemmed(word: &str) -> String {
        let mut out = String::new();
        stem(word, &mut out);
        out
    }

    #[test]
    fn stopwords_are_sorted_unique_lowercase_and_folded() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        for w in STOPWORDS {
            assert!(w.chars().count() >= 2, "{w}");
            assert_eq!(*w, w.to_lowercase(), "{w}");
            assert!(!w.contains('ё'), "{w}");
        }
        assert!(is_stopword("the") && is_stopword("doesn") && is_stopword("это"));
        assert!(is_stopword("еще"), "ё is folded before the lookup");
        assert!(!is_stopword("planet") && !is_stopword("планета"));
    }

    #[test]
    fn tokenizer_lowercases_splits_and_filters() {
        let (w, count) = words(
            "The Planets' orbits don't cross: 2024, 3D-printing, a X e.g. Ёлка!",
            false,
        );
        assert_eq!(w, ["planets", "orbits", "cross", "3d", "printing", "елка"]);
        // the planets orbits don t cross 2024 3d printing a x e g елка
        assert_eq!(count, 14);
        let (w, count) = words("", true);
        assert!(w.is_empty());
        assert_eq!(count, 0);
        let (w, count) = words("... --- *** 42 7 ", true);
        assert!(w.is_empty());
        assert_eq!(count, 2);
    }

    #[test]
    fn tokenizer_handles_any_script() {
        let (w, _) = words("Привет, МИР! 東京 🚀 naïve İstanbul ١٢٣", false);
        assert_eq!(w, ["привет", "мир", "東京", "naïve", "i\u{307}stanbul"]);
    }

    #[test]
    fn english_stemmer_merges_inflections() {
        for (forms, stem) in [
            (&["planet", "planets"][..], "planet"),
            (&["bake", "baked", "baking", "bakes"][..], "bak"),
            (&["galaxy", "galaxies"][..], "galaxi"),
            (&["run", "running", "runs"][..], "run"),
            (&["stop", "stopped", "stopping"][..], "stop"),
            (&["cook", "cooked", "cooking", "cooks"][..], "cook"),
            (&["quick", "quickly"][..], "quick"),
            (&["class", "classes"][..], "class"),
        ] {
            for form in forms {
                assert_eq!(stemmed(form), stem, "{form}");
            }
        }
        for keep in ["virus", "axis", "bring", "string", "fall", "is", "as"] {
            assert_eq!(stemmed(keep), keep);
        }
    }

    #[test]
    fn russian_stemmer_merges_inflections() {
        for (forms, stem) in [
            (
                &["планета", "планеты", "планетами", "планетах", "планету"][..],
                "планет",
            ),
            (&["звезда", "звезды", "звездами"][..], "звезд"),
            (
                &["телескоп", "телескопа", "телескопом", "телескопы"][..],
                "телескоп",
            ),
            (&["готовить", "готовим"][..], "готов"),
        ] {
            for form in forms {
                assert_eq!(stemmed(form), stem, "{form}");
            }
        }
        assert_eq!(stemmed("мяча"), "мяч");
        assert_eq!(stemmed("дом"), "дом", "stems keep three letters");
        assert_eq!(
            stemmed("учиться"),
            "учи",
            "reflexive, then the longest ending that leaves three letters"
        );
        assert_eq!(stemmed("3d"), "3d", "mixed words stay whole");
    }

    #[test]
    fn sentence_terms_count_and_sort_ids() {
        let t = SentenceTerms::new(
            &["Stars and stars and planets.", "", "Planets orbit stars."],
            true,
        );
        assert_eq!(t.len(), 3);
        assert_eq!(t.vocab_len(), 3);
        // Ids in order of first occurrence: star 0, planet 1, orbit 2.
        assert_eq!(t.terms(0), [(0, 2), (1, 1)]);
        assert_eq!(t.terms(1), []);
        assert_eq!(t.terms(2), [(0, 1), (1, 1), (2, 1)]);
        assert_eq!((t.words(0), t.words(1), t.words(2)), (5, 0, 3));
        assert_eq!(t.terms(3), [], "out of range is empty");
        assert_eq!(t.words(99), 0);
        assert!(SentenceTerms::new(&[], true).is_empty());
    }
}
