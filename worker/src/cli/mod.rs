//! Command-line interface: the clap types of every `chunk-worker` subcommand.
//!
//! Arguments are parsed raw here and checked once: values with a fixed shape
//! (tenant ids, document ids) are validated by clap's value parsers, so a bad
//! value is a usage error (exit status 2) before any file is read. Checks that
//! need the chunking engine (the profile name) or the file list (`--document-id`
//! with several files) happen in [`crate::commands::offline`], also before any file is
//! read.

mod chunk;
pub mod dlq;
pub mod tenant;
pub mod topology;

use chunk::CHUNK_HELP;
pub use chunk::{BreadcrumbArg, ChunkArgs, ChunkFormat, DocNameArg};

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use crate::exit;

/// The tenant used when `--tenant` is not given.
pub const DEFAULT_TENANT: &str = "local";

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every input file was processed
  1  at least one file failed: stderr has one line per failed file,
     `CHUNKING_FAILED <CODE>: <path>: <what and where>` (codes as in docs/contract.md#error-codes,
     e.g. INVALID_UTF8, SOURCE_UNAVAILABLE); the other files are still
     processed. Also used for internal errors.
  2  usage error: bad flags, unknown profile, --document-id/--source-version/
     --title with more than one file, or no input files found";

const TOP_EXAMPLES: &str = "\
Examples:
  chunk-worker chunk notes.md                  # JSONL chunks of one file
  chunk-worker chunk --tenant acme-prod docs/  # every *.md, *.html under docs/
  chunk-worker normalize notes.md              # the text chunk offsets refer to
  chunk-worker profiles                        # profiles, strategies, budgets
  chunk-worker profiles show spec-v1           # one profile as TOML
  chunk-worker report notes.md -o report.html  # see where the boundaries fall
  chunk-worker chunk --help                    # every option of a subcommand";

const NORMALIZE_HELP: &str = "\
The normalized document is the text every chunk offset (char_start/char_end,
byte_start/byte_end) refers to: UTF-8, `\\n` line endings, runs of spaces
collapsed outside code and tables (docs/contract.md#normalization). It is written byte for byte.

Examples:
  chunk-worker normalize notes.md > notes.normalized.md
  chunk-worker normalize page.md | diff page.md -";

/// `chunk-worker`: turns normalized Markdown into retrieval-ready chunks.
#[derive(Debug, Parser)]
#[command(
    name = "chunk-worker",
    version,
    about = "Turn normalized Markdown into retrieval-ready chunks, deterministically.",
    long_about = "Turn normalized Markdown into retrieval-ready chunks, deterministically.\n\n\
        The offline commands (chunk, normalize, profiles, report) need no servers: they run the \
        same chunking engine as the queue worker on local files.",
    after_help = EXIT_STATUS_HELP,
    after_long_help = format!("{TOP_EXAMPLES}\n\n{EXIT_STATUS_HELP}"),
    propagate_version = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. Offline commands come first; the queue worker's commands
/// are added beside them.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Chunk Markdown files and write one JSON object per chunk (JSONL) to stdout.
    #[command(
        after_help = EXIT_STATUS_HELP,
        after_long_help = format!("{CHUNK_HELP}\n\n{EXIT_STATUS_HELP}")
    )]
    Chunk(ChunkArgs),
    /// Write the normalized document (the text all chunk offsets refer to) to stdout.
    #[command(
        after_help = EXIT_STATUS_HELP,
        after_long_help = format!("{NORMALIZE_HELP}\n\n{EXIT_STATUS_HELP}")
    )]
    Normalize(NormalizeArgs),
    /// List the chunking profiles (strategy, tokenizer, budgets, parameters,
    /// where each is defined), print one as TOML, or check profile files.
    #[command(after_long_help = PROFILES_HELP)]
    Profiles(ProfilesArgs),
    /// Measure chunkers: boundary F1, BM25 retrieval (Recall@K, token IoU,
    /// nDCG@10), cost and latency per profile (and external systems); writes
    /// leaderboard.json and leaderboard.html.
    #[command(after_long_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Extract the links of Markdown files and write one JSON object per link
    /// (JSONL) to stdout: URL, anchor text, link type, Confluence/Jira target,
    /// and the chunk holding it.
    #[command(
        after_help = EXIT_STATUS_HELP,
        after_long_help = format!("{LINKS_HELP}\n\n{EXIT_STATUS_HELP}")
    )]
    Links(LinksArgs),
    /// Write one self-contained HTML page showing where the chunk boundaries
    /// fall: each file's text with every chunk's span shaded, overlaps and
    /// repeated headers marked, a size histogram per profile, and several
    /// profiles side by side.
    #[command(
        after_help = EXIT_STATUS_HELP,
        after_long_help = format!("{REPORT_HELP}\n\n{EXIT_STATUS_HELP}")
    )]
    Report(ReportArgs),
    /// Run the queue worker: consume normalize_markdown.completed messages, store
    /// chunks, publish chunking.completed events, until SIGTERM/SIGINT.
    #[command(after_long_help = SERVICE_HELP)]
    Run,
    /// Serve the synchronous chunking API (POST /v1/chunk, GET /v1/profiles)
    /// alone: no queue consumer, no database; needs api.enabled and a key.
    #[command(after_long_help = SERVICE_HELP)]
    Serve,
    /// Create the database if it does not exist and apply the migrations.
    #[command(after_long_help = SERVICE_HELP)]
    Migrate,
    /// Inspect and replay the dead-letter queue: list, show, replay.
    Dlq(dlq::DlqArgs),
    /// Who may read which tenant's rows in SQL (row-level security): grant,
    /// revoke, list.
    Tenant(tenant::TenantArgs),
    /// The broker topology: declare it, or migrate a classic retry queue.
    Topology(topology::TopologyArgs),
    /// Run the whole pipeline once on the local services: start the worker,
    /// publish sample documents as upstream would, print what got stored.
    #[command(after_long_help = DEMO_HELP)]
    Demo {
        /// Markdown files or directories (walked for *.md) to publish
        /// [default: shared/tests/fixtures].
        inputs: Vec<std::path::PathBuf>,
    },
    /// Load test: start the worker, publish N documents as upstream would,
    /// report throughput and publish-to-chunking.completed latency.
    #[command(after_long_help = BENCH_HELP)]
    Bench {
        /// Markdown files or directories (walked for *.md), cycled
        /// [default: ../shared/corpus/en].
        inputs: Vec<std::path::PathBuf>,
        /// How many documents to publish.
        #[arg(long, default_value_t = 1000)]
        docs: usize,
        /// Documents per second to publish at; 0 = as fast as confirms allow.
        #[arg(long, default_value_t = 0.0)]
        rate: f64,
        /// Publish only the median-sized file of the inputs, --docs times.
        #[arg(long)]
        median: bool,
        /// The chunking profile every message names (see `chunk-worker
        /// profiles`); without it the worker's settings choose.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Publish every document before the worker starts, then time the
        /// drain (workers started to last event); --rate is ignored.
        #[arg(long)]
        backlog: bool,
        /// Run the worker as N `chunk-worker run` child processes on the
        /// same queue, sharing worker.concurrency, amqp.prefetch and
        /// database.write_slots between them, instead of in-process
        /// [default: 0, in-process].
        #[arg(long, value_name = "N", default_value_t = 0)]
        processes: usize,
    },
}

const BENCH_HELP: &str = "\
The worker runs in-process (topology prefix `bench.` unless
CHUNK_WORKER__TOPOLOGY__PREFIX sets one) on the configured database; every
document gets a fresh id (tenant `bench`), so each is real work. Latency is
measured from the publish confirm to the matching chunking.completed event,
overall and by document size (< 10K and < 100K tokens, the Chunking System specification's SLOs).

Examples:
  chunk-worker bench --median --docs 3000          # sustained throughput
  chunk-worker bench --median --docs 1500 --rate 50  # latency at 50 docs/s
  chunk-worker bench --docs 2204                   # the whole English corpus
  chunk-worker bench --median --docs 3000 --profile recursive-v1
  chunk-worker bench --median --docs 10000 --backlog               # drain a backlog
  chunk-worker bench --median --docs 10000 --backlog --processes 2 # two processes";

const DEMO_HELP: &str = "\
The worker runs in-process with the usual settings (config/default.toml,
CHUNK_WORKER__... variables), under the topology prefix `demo.` unless
CHUNK_WORKER__TOPOLOGY__PREFIX sets one, so a worker already running on the
same broker is not disturbed. Documents are stored under tenant `demo` with
content-hash versions: running the demo twice stores nothing new.

Example:
  chunk-worker demo                       # the sample documents
  chunk-worker demo docs/runbook.md       # your own

Exit status: 0 all documents stored or dead-lettered, 1 otherwise or on an
error, 2 invalid settings.";

const SERVICE_HELP: &str = "\
Settings (later layers win): config/default.toml, config/$CHUNK_WORKER_ENV.toml,
then CHUNK_WORKER__<SECTION>__<KEY> environment variables, e.g.
CHUNK_WORKER__AMQP__URLS (or __URL), CHUNK_WORKER__DATABASE__URL, CHUNK_WORKER__TOPOLOGY__PREFIX.
The config directory is $CHUNK_WORKER_CONFIG_DIR or ./config.

The API (POST /v1/chunk; `run` serves it beside /metrics, `serve` alone):
CHUNK_WORKER__API__ENABLED=true and a key, CHUNK_WORKER__API__JWT__HS256_SECRET_FILE
(at least 32 bytes) or CHUNK_WORKER__API__JWT__PUBLIC_KEYS_FILE (PEM or JWKS).

Exit status:
  0  stopped gracefully (SIGTERM/SIGINT) or migrations applied
  1  stopped on an error (logged)
  2  invalid settings (the message names the key)";

const PROFILES_HELP: &str = "\
A profile names a strategy and its parameters (TOML): the built-in ones are
compiled in; more come from files (`--profile-file FILE`, or the worker's
`profiles.dir` setting). `profiles show NAME` prints a profile in the file
format, every parameter spelled out: the starting point for your own (change
`name`, then the parameters). Profiles of experimental strategies are listed
but usable only with --experimental (worker: experimental.enabled = true).

Examples:
  chunk-worker profiles
  chunk-worker profiles show spec-v1 > mine.toml
  chunk-worker profiles check mine.toml
  chunk-worker chunk --profile-file mine.toml notes.md

Exit status: 0 listed / shown / every file valid; 2 unknown profile, or a
file that is not a valid profile (the message names the file, the key, the
value and what is valid).";

const EVAL_HELP: &str = "\
A dataset is a directory: documents/*.md, and questions.jsonl (retrieval
gold: id, question, document, lang, references [{text, start, end}] in code
points of the file as given) and/or boundaries.jsonl (document, boundaries:
code point offsets where a new topic starts). See eval/README.md.

Every profile chunks every document; all chunks of a dataset go into one
BM25 index (k1 1.2, b 0.75) of their embed_text (and, as a second row, of
their chunk_text); each question retrieves the top K. Metrics are averaged
over questions; boundaries are chunk starts matched to gold within
--tolerance characters. --external NAME=FILE.jsonl adds another system's
chunks ({\"document\", \"text\"} lines, optional \"start\"/\"end\"),
e.g. from scripts/peers/eval_peers.py.

Examples:
  chunk-worker eval                                   # every profile, the shipped datasets
  chunk-worker eval --profiles spec-v1,recursive-v1 --k 5,10 --rank-by recall@5
  chunk-worker eval --external langchain=target/peers/retrieval/langchain-recursive.jsonl

Exit status: 0 done; 2 bad arguments or bad data (the message names the file
and line).";

/// What `eval` indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalText {
    /// `embed_text` (with breadcrumbs), what an embedder sees.
    Embed,
    /// `chunk_text`.
    Chunk,
    /// Both, as two rows per system.
    Both,
}

/// Options of `chunk-worker eval`.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Dataset directories [default: eval/retrieval and eval/boundaries].
    #[arg(long = "dataset", value_name = "DIR")]
    pub datasets: Vec<PathBuf>,
    /// Profiles to measure, comma-separated [default: every usable profile,
    /// each at its primary granularity].
    #[arg(long, value_delimiter = ',', value_name = "P1,P2")]
    pub profiles: Vec<String>,
    /// Every usable profile, and a profile with several granularities once
    /// per granularity (rows named `profile [granularity]`).
    #[arg(long, conflicts_with_all = ["profiles", "granularity"])]
    pub all: bool,
    /// Measure this granularity of the profiles (a profile with several
    /// granularities is measured one at a time) [default: each profile's
    /// primary granularity]; without --profiles, every profile that has it.
    #[arg(long, value_parser = ["document", "section", "paragraph", "window", "table"])]
    pub granularity: Option<String>,
    /// Another system's chunks, as NAME=FILE.jsonl (repeatable).
    #[arg(long = "external", value_name = "NAME=FILE.jsonl")]
    pub externals: Vec<String>,
    /// The retriever: bm25, minilm (all-MiniLM-L6-v2 cosine; needs the model,
    /// scripts/fetch-model.sh; slow on a CPU: every chunk is embedded), or both.
    #[arg(long, default_value = "bm25", value_parser = ["bm25", "minilm", "both"])]
    pub retriever: String,
    /// Cut-offs of the @K metrics.
    #[arg(long, value_delimiter = ',', default_value = "5,10,20")]
    pub k: Vec<usize>,
    /// Context budgets in cl100k tokens: the ranked chunks fill each, the
    /// last one cut to fit, text given twice paid twice.
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000")]
    pub budgets: Vec<u32>,
    /// Small-to-big: each ranked chunk brings N chunks on each side of it
    /// (same document, nearest first) into the context budgets.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub neighbours: usize,
    /// Keep the corpora of one half of each dataset (its `splits.json`):
    /// tune on one, report on the other.
    #[arg(long, value_name = "HALF")]
    pub split: Option<String>,
    /// The metric rows are ranked by (e.g. budget_recall@1000, ndcg@10,
    /// recall@5, boundary_f1) [default: budget_recall at the middle budget,
    /// or boundary_f1 when no dataset has questions].
    #[arg(long)]
    pub rank_by: Option<String>,
    /// Boundary match tolerance, in characters.
    #[arg(long, default_value_t = 50)]
    pub tolerance: u32,
    /// What is indexed.
    #[arg(long, value_enum, default_value = "both")]
    pub text: EvalText,
    /// Where leaderboard.json and leaderboard.html go; with minilm, the
    /// vectors of every text embedded so far are kept there too
    /// (`vectors-<model>.bin`), so the next run embeds only new texts.
    #[arg(long, default_value = "target/eval", value_name = "DIR")]
    pub out: PathBuf,
    /// Embed everything afresh and keep no vector file.
    #[arg(long)]
    pub no_vector_store: bool,
    /// Profile files and experimental strategies.
    #[command(flatten)]
    pub select: ProfileSelectArgs,
}

/// Options of `chunk-worker profiles`.
#[derive(Debug, Clone, Args)]
pub struct ProfilesArgs {
    /// What to do; without one, list every profile.
    #[command(subcommand)]
    pub action: Option<ProfilesAction>,
    /// Profile selection options (`--profile-file`, `--experimental`).
    #[command(flatten)]
    pub select: ProfileSelectArgs,
}

/// `chunk-worker profiles show|check`.
#[derive(Debug, Clone, Subcommand)]
pub enum ProfilesAction {
    /// Print the profile NAME as TOML (loads again with --profile-file).
    Show {
        /// The profile's name.
        name: String,
    },
    /// Validate profile files; exits 2 naming the first problem of each bad one.
    Check {
        /// Profile files (TOML).
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
    },
}

/// Where profiles come from, shared by `chunk`, `links` and `profiles`.
#[derive(Debug, Clone, Default, Args)]
pub struct ProfileSelectArgs {
    /// Add the profile defined in FILE (TOML, one profile, the format
    /// `profiles show` prints) and use it unless --profile names another;
    /// repeatable (the last one is used).
    #[arg(long = "profile-file", value_name = "FILE")]
    pub profile_files: Vec<PathBuf>,

    /// Allow profiles of experimental strategies.
    #[arg(long)]
    pub experimental: bool,

    /// The sentence-embedding model for semantic profiles (semantic-v1),
    /// as scripts/fetch-model.sh unpacks it; loaded only when the profile
    /// needs it.
    #[arg(
        long,
        value_name = "DIR",
        env = "CHUNK_WORKER_MODEL_DIR",
        default_value = embed::DEFAULT_MODEL_DIR
    )]
    pub model_dir: PathBuf,

    /// Where the embedding model runs: cpu, or cuda (a `--features cuda`
    /// build with an NVIDIA GPU).
    #[arg(long, value_name = "DEVICE", default_value = "cpu", value_parser = crate::semantic::parse_device)]
    pub device: embed::DeviceChoice,
}

impl ProfileSelectArgs {
    /// The model settings these options give.
    pub fn semantic_settings(&self) -> crate::semantic::SemanticSettings {
        crate::semantic::SemanticSettings {
            model_dir: self.model_dir.clone(),
            device: self.device,
            ..Default::default()
        }
    }
}

const LINKS_HELP: &str = "\
Each line is one link occurrence, in document order: the fields of the link
(link_ordinal, chunk_ordinal, url, resolved_url, anchor_text, link_type,
target {space_key, page_id, title, anchor, issue_key}, is_image, byte_start,
byte_end, char_start) plus tenant_id, document_id, source_version_id and the
chunk_id of the chunk holding it (the same ids `chunk` prints).

link_type is one of confluence_page, confluence_space, confluence_attachment,
confluence_tiny, jira_issue, anchor, relative, external. Which sites are
Confluence and Jira comes from --confluence-base-url / --jira-base-url, plus
the site of --source-url when it is a Confluence page URL; relative links are
resolved against --source-url.

Examples:
  chunk-worker links page.md --source-url https://acme.atlassian.net/wiki/spaces/ENG/pages/123/Guide
  chunk-worker links docs/ --confluence-base-url https://confluence.acme.com \\
      --jira-base-url https://jira.acme.com | jq -r 'select(.link_type==\"jira_issue\") | .target.issue_key'";

/// Options of `chunk-worker links`.
#[derive(Debug, Clone, Args)]
pub struct LinksArgs {
    /// Chunking options: links carry the id of the chunk that holds them.
    #[command(flatten)]
    pub chunk: ChunkArgs,

    /// The document's own URL: relative links resolve against it, and if it is
    /// a Confluence page URL its site counts as Confluence. Only with a single
    /// input file.
    #[arg(long, value_name = "URL", value_parser = parse_http_url)]
    pub source_url: Option<String>,

    /// Base URL of a Confluence site (repeatable), e.g. https://confluence.acme.com.
    #[arg(long = "confluence-base-url", value_name = "URL", value_parser = parse_http_url)]
    pub confluence_base_urls: Vec<String>,

    /// Base URL of a Jira site (repeatable), e.g. https://jira.acme.com.
    #[arg(long = "jira-base-url", value_name = "URL", value_parser = parse_http_url)]
    pub jira_base_urls: Vec<String>,
}

/// An absolute http(s) URL with a host.
fn parse_http_url(value: &str) -> Result<String, String> {
    match url::Url::parse(value) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            Ok(value.to_owned())
        }
        Ok(_) => Err("must be an http(s) URL with a host".to_owned()),
        Err(e) => Err(format!("not a URL: {e}")),
    }
}

const REPORT_HELP: &str = "\
For each file and each profile the page shows the normalized document (the
text every chunk offset refers to) with each chunk's own span shaded in
alternating colours and text no chunk owns left plain. Overlap (text a chunk
repeats from before its span) is hatched in that chunk's colour; a repeated
table header, a re-opened or a closing code fence (text a chunk adds that is
not in the document there) is a marked block at the chunk's start or end.
The margin gives each chunk's ordinal, chunk_type, token_count and
chunk_path; clicking a chunk shows its chunk_id, content_hash, token counts
and embed_text. With several --profile options the chunkings are columns side
by side; each column has a histogram of chunk sizes against the profile's
hard max.

The page needs no network: CSS, script and charts are inline. Files are
chunked as `chunk` chunks them (same default ids), in input order; a file
that fails is reported on stderr and in the page, and the others are still
shown. The page is written to a temporary file beside --out and renamed into
place.

Examples:
  chunk-worker report notes.md -o report.html
  chunk-worker report --profile spec-v1 --profile recursive-v1 docs/ -o compare.html
  chunk-worker report --profile-file mine.toml --profile spec-v1 --profile mine page.md -o mine.html";

/// Options of `chunk-worker report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Chunking profile to show (see `chunk-worker profiles`); repeat it to
    /// compare profiles side by side, one column each [default: spec-v1, or
    /// the --profile-file profiles]
    #[arg(long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,

    /// Profile files and experimental strategies.
    #[command(flatten)]
    pub select: ProfileSelectArgs,

    /// The HTML file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE.html")]
    pub out: PathBuf,

    /// The page's title [default: `Chunk report: ` and the file names].
    #[arg(long, value_name = "T")]
    pub title: Option<String>,

    /// Markdown files, or directories to search recursively for `*.md` files.
    #[arg(value_name = "FILE", required = true)]
    pub paths: Vec<PathBuf>,
}

/// Options of `chunk-worker normalize`.
#[derive(Debug, Clone, Args)]
pub struct NormalizeArgs {
    /// The Markdown file to normalize.
    #[arg(value_name = "FILE")]
    pub path: PathBuf,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
