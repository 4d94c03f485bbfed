#![allow(clippy::unwrap_used)]
use super::*;

fn split<'a>(s: &HaystackSentences, text: &'a str) -> Vec<&'a str> {
    s.split(text).into_iter().map(|r| &text[r]).collect()
}

fn en() -> HaystackSentences {
    HaystackSentences::new("en", true, true).unwrap()
}

#[test]
fn sentences_match_haystack_on_tricky_english() {
    // Each checked with haystack-ai 3.4.1 / NLTK 3.10.4:
    // SentenceSplitter("en", keep_white_spaces=True).split_sentences.
    // Abbreviations (trained and Haystack's), initials, ellipses, numbers,
    // quotes (the apostrophe quote span joins "don't ... isn't"), list
    // numbers, brackets, realigned closers, trailing whitespace.
    let cases: &[(&str, &[&str])] = &[
        ("Mr. Smith went home. He slept.", &["Mr. Smith went home. ", "He slept."]),
        ("e.g. this one. And that.", &["e.g. ", "this one. ", "And that."]),
        ("Wait... Then go.", &["Wait... Then go."]),
        ("Wait... then go.", &["Wait... then go."]),
        ("Very bad acting!!! I promise.", &["Very bad acting!!! ", "I promise."]),
        ("(Sent1.) Sent2.", &["(Sent1.) ", "Sent2."]),
        ("He said \"Hi.\" Bye.", &["He said \"Hi.\" ", "Bye."]),
        ("He said \"Hi.\", then left. Ok.", &["He said \"Hi.\", then left. ", "Ok."]),
        ("He asked \"Why?\" Then left.", &["He asked \"Why?\" Then left."]),
        ("I don't know. It isn't here. Fine.", &["I don't know. It isn't here. ", "Fine."]),
        ("Steps:\n1. First thing.\n2. Second thing.", &["Steps:\n1. First thing.\n", "2. Second thing."]),
        ("It costs 12. Foo now. Take 12. foo now.", &["It costs 12. ", "Foo now. ", "Take 12. foo now."]),
        ("J. S. Bach was here. A. Smith came.", &["J. S. Bach was here. ", "A. Smith came."]),
        ("End. \" Next one.", &["End. \"", "Next one."]),
        ("Hi.\")", &["Hi.\")"]),
        ("Hi.  ", &["Hi."]),
        ("  Lead. Two.\n\n", &["  Lead. ", "Two."]),
        ("Dr. Who? No. (Maybe.) [x] Yes.", &["Dr. Who? ", "No. (Maybe.) [x] Yes."]),
        ("U.S. officials said so. The U.S. Army too.", &["U.S. officials said so. ", "The U.S. Army too."]),
        ("It was 3 p.m. The end.", &["It was 3 p.m. ", "The end."]),
        ("x-. Next. Etc. And so on.", &["x-. Next. ", "Etc. And so on."]),
        ("Version 1.2.3 is out. Yes!\nNext line", &["Version 1.2.3 is out. ", "Yes!\n", "Next line"]),
        ("a.b.c d. E", &["a.b.c d. E"]),
        ("«Привет.» Да. Нет.", &["«Привет.» ", "Да. ", "Нет."]),
        ("Hi.\u{1c} Next.", &["Hi.\u{1c} Next."]),
    ];
    let s = en();
    for (text, theirs) in cases {
        assert_eq!(split(&s, text), *theirs, "{text:?}");
    }
}

#[test]
fn options_and_languages_match_haystack() {
    let no_rules = HaystackSentences::new("en", false, true).unwrap();
    let no_ext = HaystackSentences::new("en", true, false).unwrap();
    let ru = HaystackSentences::new("ru", true, true).unwrap();
    let unknown = HaystackSentences::new("xx", true, true).unwrap();
    let t = "Steps:\n1. First thing.\n2. Second thing.";
    assert_eq!(split(&no_rules, t), ["Steps:\n1. ", "First thing.\n", "2. ", "Second thing."]);
    assert_eq!(split(&no_ext, t), ["Steps:\n1. First thing.\n", "2. Second thing."]);
    let t = "I don't know. It isn't here. Fine.";
    assert_eq!(split(&no_rules, t), ["I don't know. ", "It isn't here. ", "Fine."]);
    let t = "Dr. Who? No. (Maybe.) [x] Yes.";
    assert_eq!(split(&no_rules, t), ["Dr. Who? ", "No. ", "(Maybe.) ", "[x] Yes."]);
    assert_eq!(split(&ru, t), ["Dr. ", "Who? ", "No. (Maybe.) [x] Yes."]);
    let t = "Mr. Smith went home. He slept.";
    assert_eq!(split(&ru, t), ["Mr. ", "Smith went home. ", "He slept."]);
    assert_eq!(split(&unknown, t), ["Mr. Smith went home. ", "He slept."]);
    let e = HaystackSentences::new("de", true, true).unwrap_err();
    assert!(e.contains("\"en\", \"ru\""), "{e}");
}

#[test]
fn no_sentence_in_whitespace_and_no_panic_on_odd_text() {
    let s = en();
    assert!(s.split("").is_empty());
    assert!(s.split(" \n\t\u{1c}").is_empty());
    for t in [".", "?!", "\"", "'.'", ".\")", "é.\u{301} Ä. «»", "1.\n2.\n3.", "(.) [.]"] {
        for r in s.split(t) {
            assert!(t.get(r).is_some(), "{t:?}");
        }
    }
}

#[test]
fn words_are_pythons_split_and_groups_follow_haystack() {
    assert_eq!(word_count(" a\u{1c}b  c\n"), 3);
    let text = "a b. c d. e f. g h.";
    let sentences = [0..5, 5..10, 10..15, 15..19];
    // 2 words each, 5 words a chunk, overlap 1: closed when the next
    // sentence would pass 5; the last sentence (2 words > 1) is kept.
    assert_eq!(group_by_words(text, &sentences, 5, 1), [0..2, 1..3, 2..4]);
    assert_eq!(group_by_words(text, &sentences, 5, 0), [0..2, 2..4]);
    // One sentence longer than split_length is a chunk of its own.
    assert_eq!(group_by_words(text, &sentences, 1, 0), [0..1, 1..2, 2..3, 3..4]);
    assert!(group_by_words(text, &[], 5, 1).is_empty());
}
