//! The grammar of generated Markdown documents, and the check that it
//! really produces the hard cases.

use proptest::prelude::*;

use crate::common;
use crate::config;

pub(crate) const EN: &[&str] = &[
    "the",
    "worker",
    "reads",
    "a",
    "message",
    "from",
    "queue",
    "and",
    "writes",
    "chunks",
    "into",
    "database",
    "every",
    "document",
    "has",
    "version",
    "operator",
    "replays",
    "dead",
    "letters",
    "after",
    "incident",
    "index",
    "search",
    "tenant",
    "heading",
    "table",
    "list",
    "pipeline",
    "stage",
    "embedding",
    "model",
];
const RU: &[&str] = &[
    "документ",
    "разбивается",
    "на",
    "фрагменты",
    "по",
    "заголовкам",
    "и",
    "таблицам",
    "сервис",
    "читает",
    "очередь",
    "пишет",
    "в",
    "базу",
    "данных",
    "оператор",
    "повторяет",
    "сообщения",
    "после",
    "сбоя",
    "поиск",
    "индекс",
    "версия",
    "страница",
];
const SPECIAL: &[&str] = &[
    "e.g.",
    "i.e.",
    "Dr.",
    "vs.",
    "т.е.",
    "и т.д.",
    "г.",
    "3.14",
    "1 234,56",
    "3,5",
    "v1.2.3",
    "https://example.com/a/b?x=1.5&y=2",
    "www.example.org",
    "А. С. Пушкин",
    "U.S.",
    "approx.",
    "👩‍👩‍👧",
    "🇷🇺",
    "👍🏽",
    "e\u{301}",
    "Z\u{324}\u{354}\u{367}\u{311}",
    "1\u{fe0f}\u{20e3}",
    "שלום",
    "\u{a0}",
    "a\u{200b}b",
    "soft\u{ad}hyphen",
    "𝔘𝔫𝔦",
    "*emphasis*",
    "**bold**",
    "`code`",
    "[link](https://example.com/x \"t\")",
    "<https://auto.link/x>",
    "&amp;",
    "[ref-1]",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::sample::select(EN).prop_map(str::to_owned),
        4 => proptest::sample::select(RU).prop_map(str::to_owned),
        1 => proptest::sample::select(SPECIAL).prop_map(str::to_owned),
    ]
}

fn plain_word() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(EN).prop_map(str::to_owned),
        proptest::sample::select(RU).prop_map(str::to_owned)
    ]
}

/// Separators between words: mostly one space, sometimes tabs and runs.
fn sep() -> impl Strategy<Value = &'static str> {
    prop_oneof![12 => Just(" "), 1 => Just("  "), 1 => Just("\t"), 1 => Just(" \t  ")]
}

fn join_words(words: Vec<String>, seps: Vec<&'static str>) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            s.push_str(seps[i % seps.len()]);
        }
        s.push_str(w);
    }
    s
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn sentence() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(word(), 3..16),
        proptest::collection::vec(sep(), 1..4),
        proptest::sample::select(&[".", ".", ".", "!", "?", "…", "?!"][..]),
    )
        .prop_map(|(w, s, end)| format!("{}{end}", capitalize(&join_words(w, s))))
}

fn words(n: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    proptest::collection::vec(word(), n).prop_map(|w| w.join(" "))
}

fn paragraph() -> impl Strategy<Value = String> {
    (proptest::collection::vec(sentence(), 1..6), any::<bool>())
        .prop_map(|(s, wrap)| s.join(if wrap { "\n" } else { " " }))
}

fn long_paragraph() -> impl Strategy<Value = String> {
    proptest::collection::vec(sentence(), 90..120).prop_map(|s| s.join(" "))
}

fn long_sentence() -> impl Strategy<Value = String> {
    proptest::collection::vec(plain_word(), 900..1300).prop_map(|w| w.join(" "))
}

fn heading() -> impl Strategy<Value = String> {
    (1usize..=6, words(1..5), 0u8..6, any::<bool>()).prop_map(|(level, text, style, closing)| {
        let text = match style {
            0 => format!("{text} {{#sec-{level}}}"),
            1 => format!("*{text}* and `code`"),
            _ => text,
        };
        let close = if closing {
            format!(" {}", "#".repeat(level))
        } else {
            String::new()
        };
        format!("{} {text}{close}", "#".repeat(level))
    })
}

fn setext() -> impl Strategy<Value = String> {
    (words(1..5), any::<bool>(), 1usize..12)
        .prop_map(|(t, h1, n)| format!("{t}\n{}", if h1 { "=" } else { "-" }.repeat(n.max(3))))
}

fn code_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (plain_word(), 0u32..100).prop_map(|(w, n)| format!("let {w}_{n} = compute({n});")),
        (plain_word(), 0usize..3)
            .prop_map(|(w, i)| format!("{}if x > 0 {{ {w}();    }}", "    ".repeat(i))),
        Just("\t// tab indented   comment".to_owned()),
        Just(String::new()),
        Just("# not a heading inside code".to_owned()),
        Just("---".to_owned()),
        Just("| not | a | table |".to_owned()),
    ]
}

fn fenced_code() -> impl Strategy<Value = String> {
    let body = prop_oneof![
        8 => proptest::collection::vec(code_line(), 1..15),
        1 => proptest::collection::vec(code_line(), 650..700),
        1 => (0u32..1).prop_map(|_| vec![(0..700).map(|i| format!("v{i}")).collect::<Vec<_>>().join(",")]),
    ];
    (
        prop_oneof![Just('`'), Just('~')],
        3usize..6,
        proptest::sample::select(&["", "rust", "bash", "sql"][..]),
        body,
    )
        .prop_map(|(ch, len, lang, lines)| {
            let fence = ch.to_string().repeat(len);
            format!("{fence}{lang}\n{}\n{fence}", lines.join("\n"))
        })
}

fn indented_code() -> impl Strategy<Value = String> {
    proptest::collection::vec(code_line(), 1..6).prop_map(|l| {
        l.iter()
            .map(|x| format!("    {x}"))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn list() -> impl Strategy<Value = String> {
    let item = || {
        (
            sentence(),
            proptest::option::weighted(0.3, proptest::collection::vec(sentence(), 1..3)),
            proptest::option::weighted(0.15, fenced_code()),
        )
    };
    (
        any::<bool>(),
        proptest::sample::select(&["-", "*", "+"][..]),
        prop_oneof![6 => 1usize..7, 1 => 40usize..60],
    )
        .prop_flat_map(move |(ordered, bullet, n)| {
            (
                Just(ordered),
                Just(bullet),
                proptest::collection::vec(item(), n..n + 1),
            )
        })
        .prop_map(|(ordered, bullet, items)| {
            let mut out = String::new();
            for (i, (text, nested, code)) in items.into_iter().enumerate() {
                let marker = if ordered {
                    format!("{}.", i + 1)
                } else {
                    bullet.to_owned()
                };
                let indent = " ".repeat(marker.len() + 1);
                out.push_str(&format!("{marker} {text}\n"));
                for n in nested.unwrap_or_default() {
                    let sub = if ordered { "-" } else { "1." };
                    out.push_str(&format!("{indent}{sub} {n}\n"));
                }
                if let Some(code) = code {
                    out.push('\n');
                    for l in code.lines() {
                        out.push_str(&format!("{indent}{l}\n"));
                    }
                    out.push('\n');
                }
            }
            out.trim_end().to_owned()
        })
}

fn cell() -> impl Strategy<Value = String> {
    prop_oneof![4 => words(1..4), 1 => Just(String::new()), 1 => Just("`x`".to_owned())]
}

fn table() -> impl Strategy<Value = String> {
    let rows = prop_oneof![8 => 1usize..12, 1 => 100usize..130];
    (
        2usize..5,
        rows,
        any::<bool>(),
        proptest::option::weighted(0.1, proptest::collection::vec(plain_word(), 700..800)),
    )
        .prop_flat_map(|(cols, rows, pipes, huge)| {
            (
                Just(cols),
                Just(pipes),
                Just(huge),
                proptest::collection::vec(words(1..3), cols..cols + 1),
                proptest::collection::vec(
                    proptest::collection::vec(cell(), cols..cols + 1),
                    rows..rows + 1,
                ),
            )
        })
        .prop_map(|(cols, pipes, huge, header, mut rows)| {
            if let Some(h) = huge {
                let at = rows.len() / 2;
                rows[at][cols - 1] = h.join(" ");
            }
            let line = |cells: &[String]| {
                if pipes {
                    format!("| {} |", cells.join(" | "))
                } else {
                    cells.join(" | ")
                }
            };
            let align = [":---", "---:", ":-:", "---"];
            let delim: Vec<String> = (0..cols).map(|i| align[i % 4].to_owned()).collect();
            let mut out = vec![line(&header), line(&delim)];
            out.extend(rows.iter().map(|r| line(r)));
            out.join("\n")
        })
}

fn quote() -> impl Strategy<Value = String> {
    (proptest::collection::vec(sentence(), 1..4), any::<bool>()).prop_map(|(s, nested)| {
        let mut lines: Vec<String> = s.iter().map(|x| format!("> {x}")).collect();
        if nested {
            lines.push(">".to_owned());
            lines.push("> > nested quote line".to_owned());
        }
        lines.join("\n")
    })
}

fn html() -> impl Strategy<Value = String> {
    prop_oneof![
        sentence().prop_map(|s| format!("<div class=\"note\">\n<p>{s}</p>\n</div>")),
        words(1..6).prop_map(|w| format!("<!-- {w} -->")),
        sentence().prop_map(|s| format!("<details>\n<summary>More</summary>\n\n{s}\n\n</details>")),
    ]
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => heading(),
        1 => setext(),
        10 => paragraph(),
        1 => long_paragraph(),
        1 => long_sentence(),
        3 => list(),
        2 => table(),
        2 => fenced_code(),
        1 => indented_code(),
        2 => quote(),
        1 => proptest::sample::select(&["***", "---", "___", "* * *", "- - -"][..]).prop_map(str::to_owned),
        1 => html(),
        1 => (0u32..50).prop_map(|n| format!("[ref-{n}]: https://example.com/{n} \"Title {n}\"")),
        1 => Just(String::new()),
    ]
}

/// A whole generated document.
pub(crate) fn document() -> impl Strategy<Value = String> {
    (
        proptest::option::weighted(0.15, Just("---\ntitle: Generated\ntags: [a, b]\n---\n")),
        proptest::collection::vec(
            (
                block(),
                proptest::sample::select(&["\n\n", "\n\n", "\n\n", "\n\n\n", "\n", "\n \n"][..]),
            ),
            0..14,
        ),
        proptest::option::weighted(0.1, (fenced_code(), 0usize..3)),
        0u8..10,
        any::<bool>(),
    )
        .prop_map(|(front, blocks, unclosed, crlf, trailing)| {
            let mut doc = String::from(front.unwrap_or(""));
            for (b, s) in blocks {
                doc.push_str(&b);
                doc.push_str(s);
            }
            if let Some((code, cut)) = unclosed {
                // A fence left open at the end of the document.
                let lines: Vec<&str> = code.lines().collect();
                let keep = lines.len().saturating_sub(1 + cut).max(1);
                doc.push_str(&lines[..keep].join("\n"));
            }
            if !trailing {
                doc = doc.trim_end().to_owned();
            }
            match crlf {
                0 => doc.replace('\n', "\r\n"),
                1 => doc.replacen('\n', "\r", 3),
                _ => doc,
            }
        })
}

/// The grammar really produces the hard cases the properties are about
/// (otherwise a passing property would prove little).
#[test]
fn grammar_covers_the_hard_cases() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::new(config(1));
    let strategy = document();
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    let mut bytes = 0;
    for _ in 0..200 {
        let doc = strategy.new_tree(&mut runner).unwrap().current();
        bytes += doc.len();
        let features = [
            ("crlf", doc.contains("\r\n")),
            ("front matter", doc.starts_with("---\ntitle")),
            (
                "long table",
                doc.lines().filter(|l| l.contains(" | ")).count() > 100,
            ),
            ("long code", doc.lines().count() > 650),
            ("long line", doc.lines().any(|l| l.len() > 3000)),
            (
                "over 1000 tokens",
                common::reference_tokens(shared::tokens::TokenizerKind::Cl100kBase, &doc) > 1000,
            ),
            (
                "atx heading",
                doc.lines()
                    .any(|l| l.starts_with("# ") || l.starts_with("###")),
            ),
            ("setext", doc.contains("\n===")),
            (
                "nested list",
                doc.contains("\n  - ") || doc.contains("\n   - ") || doc.contains("\n  1. "),
            ),
            (
                "code in list",
                doc.contains("\n  ```") || doc.contains("\n   ```") || doc.contains("\n  ~~~"),
            ),
            ("html", doc.contains("<div") || doc.contains("<!--")),
            ("quote", doc.contains("> ")),
            ("tab", doc.contains('\t')),
            ("emoji", doc.contains('👩')),
        ];
        for (name, hit) in features {
            *seen.entry(name).or_default() += usize::from(hit);
        }
    }
    println!("grammar: 200 documents, {bytes} bytes, features {seen:?}");
    for (name, n) in &seen {
        assert!(
            *n >= 2,
            "the grammar produced {name} only {n} times in 200 documents"
        );
    }
}
