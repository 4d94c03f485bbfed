//! Command-line interface: the clap types of every `chunk-worker` subcommand.
//!
//! Arguments are parsed raw here and checked once: values with a fixed shape
//! (tenant ids, document ids) are validated by clap's value parsers, so a bad
//! value is a usage error (exit status 2) before any file is read. Checks that
//! need the chunking engine (the profile name) or the file list (`--document-id`
//! with several files) happen in [`crate::commands::offline`], also before any file is
//! read.

mod args;
mod chunk;
pub mod dlq;
mod explain;
mod help;
pub mod tenant;
pub mod topology;

pub use args::{ProfileSelectArgs, DEFAULT_TENANT};
use chunk::CHUNK_HELP;
pub use chunk::{BreadcrumbArg, ChunkArgs, ChunkFormat, DocNameArg};
pub use explain::ExplainArgs;
use explain::EXPLAIN_HELP;
use help::{
    BENCH_HELP, DEMO_HELP, EVAL_HELP, EXIT_STATUS_HELP, LINKS_HELP, NORMALIZE_HELP, PROFILES_HELP,
    REPORT_HELP, SERVICE_HELP, TOP_EXAMPLES,
};

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use crate::exit;

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
    /// Say why each chunk of a file ends where it does: heading, size
    /// budget, table or code boundary, semantic dip, topic boundary, role
    /// change, ... (a table, or JSON lines with --json). Changes no chunk.
    #[command(
        after_help = EXIT_STATUS_HELP,
        after_long_help = format!("{EXPLAIN_HELP}\n\n{EXIT_STATUS_HELP}")
    )]
    Explain(ExplainArgs),
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
    /// scripts/fetch-model.sh; slow on a CPU: every chunk is embedded), both
    /// (a row for each), or hybrid (one ranking: BM25's and MiniLM's fused
    /// by reciprocal rank, k = 60).
    #[arg(long, default_value = "bm25", value_parser = ["bm25", "minilm", "both", "hybrid"])]
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
    /// Systems measured side by side, one per thread [default: the
    /// machine's cores]; 1 measures each alone, so the latency columns
    /// are those of an otherwise idle machine. The metrics do not depend
    /// on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
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
