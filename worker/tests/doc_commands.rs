//! Every `chunk-worker ...` command shown in README.md, BENCHMARKS.md, ARCHITECTURE.md and docs/*.md parses
//! with the CLI's own definition, so a renamed or removed flag fails here
//! before a reader meets it.
//!
//! A command is a line of a fenced block marked `sh`, `bash`, `shell`,
//! `console` or unmarked that starts (after `$ `, environment assignments
//! `NAME=value` and `cd ... &&`) with `chunk-worker`, or with `cargo run ...
//! -p worker -- ` (what follows `--` is the command). Lines ending in `\`
//! continue on the next line. The command ends at a shell comment, a pipe, a
//! redirection, `;`, `&&` or `||`. Synopses with `[OPTIONS]` belong in
//! `text` blocks, which are not read. docs/benchmarks-log.md is left out: a
//! lab notebook records the commands as they were run on the day.

use std::path::{Path, PathBuf};

use clap::Parser;
use worker::cli::Cli;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md, BENCHMARKS.md, ARCHITECTURE.md and every docs/*.md, sorted.
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut out = vec![
        root.join("README.md"),
        root.join("BENCHMARKS.md"),
        root.join("ARCHITECTURE.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .filter(|p| !p.ends_with("benchmarks-log.md"))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    out.extend(docs);
    out
}

/// Shell words of `line`, quotes removed, up to the first comment or
/// operator that ends the command.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '|' | ';' | '>' | '<' | '&' if !in_word || cur.chars().all(|x| x.is_ascii_digit()) => {
                // `2>` is a redirection too: drop the digits collected.
                cur.clear();
                in_word = false;
                break;
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// The arguments after the program name, if `words` runs chunk-worker.
fn chunk_worker_args(words: &[String]) -> Option<Vec<String>> {
    let mut i = 0;
    if words.first().is_some_and(|w| w == "$") {
        i += 1;
    }
    while words.get(i).is_some_and(|w| {
        w.contains('=')
            && !w.starts_with('-')
            && w.split('=').next().is_some_and(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    }) {
        i += 1;
    }
    let program = words.get(i)?;
    if program == "chunk-worker" || program.ends_with("/chunk-worker") {
        return Some(words[i + 1..].to_vec());
    }
    if program == "cargo" && words.get(i + 1).is_some_and(|w| w == "run") {
        let rest = &words[i + 2..];
        let is_worker = rest.windows(2).any(|w| w[0] == "-p" && w[1] == "worker");
        let dashdash = rest.iter().position(|w| w == "--")?;
        if is_worker {
            return Some(rest[dashdash + 1..].to_vec());
        }
    }
    None
}

/// `(file, line number, command line)` of every command in the fenced
/// shell blocks of `text`.
fn commands_in(file: &Path, text: &str) -> Vec<(String, usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut fence: Option<(String, bool)> = None; // (marker, is a shell block)
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some((marker, shell)) = &fence {
            if trimmed.starts_with(marker.as_str())
                && trimmed
                    .trim_end()
                    .chars()
                    .all(|c| c == marker.chars().next().unwrap_or('`'))
            {
                fence = None;
                pending = None;
                continue;
            }
            if !shell {
                continue;
            }
            let (start, mut joined) = pending.take().unwrap_or((n + 1, String::new()));
            joined.push_str(raw.trim());
            if let Some(stripped) = joined.strip_suffix('\\') {
                pending = Some((start, format!("{stripped} ")));
                continue;
            }
            // `cd DIR && chunk-worker ...`: look at the last command.
            let last = joined.rsplit("&& ").next().unwrap_or(&joined).to_owned();
            if let Some(args) = chunk_worker_args(&shell_words(&last)) {
                out.push((file.display().to_string(), start, args));
            }
            continue;
        }
        let marker: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        if marker.len() >= 3
            && marker
                .chars()
                .all(|c| c == marker.chars().next().unwrap_or('`'))
        {
            let info = trimmed[marker.len()..].trim().to_lowercase();
            let lang = info.split_whitespace().next().unwrap_or("");
            let shell = matches!(lang, "" | "sh" | "bash" | "shell" | "console");
            fence = Some((marker, shell));
        }
    }
    out
}

#[test]
fn every_documented_command_parses() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap_or_default();
        for (file, line, args) in commands_in(&doc, &text) {
            checked += 1;
            let argv = std::iter::once("chunk-worker".to_owned()).chain(args.iter().cloned());
            match Cli::try_parse_from(argv) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp
                            | clap::error::ErrorKind::DisplayVersion
                            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    ) => {}
                Err(e) => failures.push(format!(
                    "{file}:{line}: chunk-worker {}\n{}",
                    args.join(" "),
                    e.render()
                )),
            }
        }
    }
    assert!(
        checked >= 20,
        "only {checked} chunk-worker commands found in the documents"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} documented commands do not parse:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_extraction_reads_shell_lines() {
    let text =
        "```sh\n$ CHUNK_WORKER__X=1 chunk-worker chunk --profile spec-v1 a.md | jq . # note\n\
                cargo run --release -p worker -- eval --k 5 \\\n  --out x\n```\n\
                ```text\nchunk-worker chunk [--profile NAME]\n```\n";
    let found = commands_in(Path::new("t.md"), text);
    let args: Vec<Vec<String>> = found.into_iter().map(|(_, _, a)| a).collect();
    assert_eq!(
        args,
        [
            vec!["chunk", "--profile", "spec-v1", "a.md"],
            vec!["eval", "--k", "5", "--out", "x"],
        ]
    );
}
