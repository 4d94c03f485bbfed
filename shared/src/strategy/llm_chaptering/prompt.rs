//! The few-shot prompt (`prompt_version = "v1"`): the document as numbered
//! units, the model asked for the units that open a new section, answered
//! as JSON. A long document is sent in windows of whole units, each its own
//! request, numbered as in the whole document.

use crate::chunk::topic::{Unit, UnitKind};
use crate::llm::ChatMessage;

/// Prompt versions this build knows.
pub(crate) const VERSIONS: [&str; 1] = ["v1"];

/// The most characters of a unit the model is shown: a long table, list or
/// code block is represented by its opening.
const SHOWN_CHARS: usize = 300;

const SYSTEM_V1: &str = "You split documents into coherent sections for retrieval. \
The document is given as numbered units: headings, sentences, and whole tables, code blocks or lists. \
Each unit shows its number, its kind and its size in tokens. \
Choose the units that START a new section, so that every section is about one topic and stays under the token limit. \
Never start a section inside a table, code block or list, and never right after a heading. \
Unit 0 always starts the first section: do not list it. \
Answer with JSON only, in this form: {\"boundaries\": [<unit number>, ...]} with the numbers in increasing order.";

const EXAMPLE_USER_V1: &str = "Section limit: 60 tokens.\n\
[0] (sentence, 14) Start the sauce by melting butter in a heavy pan over low heat.\n\
[1] (sentence, 16) Add the chopped onions and cook them until they turn soft and golden.\n\
[2] (sentence, 15) Stir in the crushed tomatoes and let the sauce simmer for twenty minutes.\n\
[3] (sentence, 13) Salt the boiling water generously before you add the pasta.\n\
[4] (sentence, 12) Cook the pasta until it is tender but still firm.\n\
[5] (heading, 3) ## Serving\n\
[6] (sentence, 14) Toss the pasta with the sauce and finish it with grated cheese.";

const EXAMPLE_ANSWER_V1: &str = "{\"boundaries\": [3, 5]}";

const EXAMPLE_USER_2_V1: &str = "Section limit: 80 tokens.\n\
[0] (heading, 4) # Backups\n\
[1] (sentence, 18) The database is backed up every night at 02:00 to the object store.\n\
[2] (sentence, 15) Backups are kept for thirty days and then deleted automatically.\n\
[3] (block, 40) | Tier | Retention | | --- | --- | | daily | 30 days | | weekly | 1 year |\n\
[4] (sentence, 17) Access to the monitoring dashboards requires a single sign-on account.\n\
[5] (sentence, 16) Dashboards refresh every minute and keep 90 days of history.";

const EXAMPLE_ANSWER_2_V1: &str = "{\"boundaries\": [4]}";

/// How a unit is named to the model.
fn kind(u: &Unit) -> &'static str {
    match u.kind {
        UnitKind::Heading => "heading",
        UnitKind::Sentence => "sentence",
        UnitKind::Block => "block",
    }
}

/// A unit's line: `[i] (kind, tokens) text`, whitespace runs folded to one
/// space, at most [`SHOWN_CHARS`] characters.
pub(crate) fn unit_line(i: usize, u: &Unit, text: &str) -> String {
    let mut shown = String::new();
    let mut chars = 0;
    let mut space = false;
    for c in text[u.range.clone()].chars() {
        if chars >= SHOWN_CHARS {
            shown.push('…');
            break;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !shown.is_empty() {
            shown.push(' ');
            chars += 1;
        }
        space = false;
        shown.push(c);
        chars += 1;
    }
    format!("[{i}] ({}, {}) {shown}", kind(u), u.tokens)
}

/// Splits the unit lines into windows of at most `budget` estimated tokens
/// (a line's bytes / 3, rounded up, plus 4), each at least one line.
pub(crate) fn windows(lines: &[String], budget: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, l) in lines.iter().enumerate() {
        let cost = l.len().div_ceil(3) + 4;
        if i > start && used + cost > budget {
            out.push(start..i);
            start = i;
            used = 0;
        }
        used += cost;
    }
    if start < lines.len() {
        out.push(start..lines.len());
    }
    out
}

/// The conversation for one window of unit lines.
pub(crate) fn messages(version: &str, max_section_tokens: usize, lines: &[String]) -> Vec<ChatMessage> {
    // Only "v1" exists; the version is checked when the profile is read.
    let _ = version;
    let mut user = format!("Section limit: {max_section_tokens} tokens.\n");
    for l in lines {
        user.push_str(l);
        user.push('\n');
    }
    vec![
        ChatMessage {
            role: "system",
            content: SYSTEM_V1.to_owned(),
        },
        ChatMessage {
            role: "user",
            content: EXAMPLE_USER_V1.to_owned(),
        },
        ChatMessage {
            role: "assistant",
            content: EXAMPLE_ANSWER_V1.to_owned(),
        },
        ChatMessage {
            role: "user",
            content: EXAMPLE_USER_2_V1.to_owned(),
        },
        ChatMessage {
            role: "assistant",
            content: EXAMPLE_ANSWER_2_V1.to_owned(),
        },
        ChatMessage {
            role: "user",
            content: user,
        },
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn unit(range: std::ops::Range<usize>, kind: UnitKind) -> Unit {
        Unit {
            range,
            kind,
            tokens: 5,
            section: 0,
        }
    }

    #[test]
    fn a_unit_line_folds_whitespace_and_shortens_long_units() {
        let text = "A  table\n| a | b |\n";
        assert_eq!(
            unit_line(2, &unit(0..text.len(), UnitKind::Block), text),
            "[2] (block, 5) A table | a | b |"
        );
        let long = "word ".repeat(200);
        let line = unit_line(0, &unit(0..long.len(), UnitKind::Sentence), &long);
        assert!(line.ends_with('…') && line.chars().count() < 330, "{line}");
    }

    #[test]
    fn windows_hold_whole_lines_under_the_budget() {
        let lines: Vec<String> = (0..10).map(|i| format!("[{i}] {}", "x".repeat(56))).collect();
        // 60 bytes -> 20 + 4 = 24 estimated tokens a line.
        assert_eq!(windows(&lines, 50), vec![0..2, 2..4, 4..6, 6..8, 8..10]);
        assert_eq!(windows(&lines, 10), (0..10).map(|i| i..i + 1).collect::<Vec<_>>());
        assert_eq!(windows(&lines, 10_000), vec![0..10]);
        assert!(windows(&[], 100).is_empty());
    }
}
