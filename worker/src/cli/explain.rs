//! `chunk-worker explain`: why each chunk of one file ends.

use std::path::PathBuf;

use clap::Args;

use super::args::ProfileSelectArgs;

/// Says why each chunk of FILE ends where it does (heading, size budget,
/// table or code boundary, semantic dip, topic boundary, role change, ...).
/// The chunks are exactly those `chunk` prints.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The Markdown (or HTML) file to chunk and explain.
    #[arg(value_name = "FILE")]
    pub path: PathBuf,

    /// Profile to chunk with (see `chunk-worker profiles`); default: the
    /// last --profile-file's profile, else spec-v1.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// One JSON object per chunk and line (chunk_id, ordinal, token_count,
    /// char_start, char_end, reason, explanation) instead of the table.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub select: ProfileSelectArgs,
}

pub(super) const EXPLAIN_HELP: &str = "\
Each line is one chunk: its ordinal, tokens, character range in the
normalized document (`chunk-worker normalize`), its first words, and why it
ends: the next chunk starts at a heading, the size budget was reached
(tokens, target, hard max), a table, code block or list ends, a paragraph
or sentence ends, a splitter's separator, a semantic dip (coherence and
threshold), a topic boundary (coherence), a clinical role change, an
inferred heading or a new page (converted PDFs), the document ends; the
auxiliary chunks of a multi-granularity profile end with their granularity.
Strategies without their own explanation get the generic one, from the
chunk, the next chunk and the document's blocks. Explaining changes no
chunk: ids and offsets are those of `chunk`.

With --json, each line is an object: `reason` is tagged by `rule`
(`{\"rule\":\"heading\",\"level\":2,\"text\":\"Setup\"}`), `explanation` is the
sentence of the table.

Examples:
  chunk-worker explain notes.md                        # spec-v1, as a table
  chunk-worker explain notes.md --profile recursive-v1 --json
  chunk-worker explain notes.md --profile texttiling-v1 --experimental";
