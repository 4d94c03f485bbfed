//! The long help texts of the subcommands (`--help`), out of the way of the
//! argument types in [`super`].

pub(super) const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every input file was processed
  1  at least one file failed: stderr has one line per failed file,
     `CHUNKING_FAILED <CODE>: <path>: <what and where>` (codes as in docs/contract.md#error-codes,
     e.g. INVALID_UTF8, SOURCE_UNAVAILABLE); the other files are still
     processed. Also used for internal errors.
  2  usage error: bad flags, unknown profile, --document-id/--source-version/
     --title with more than one file, or no input files found";

pub(super) const TOP_EXAMPLES: &str = "\
Examples:
  chunk-worker chunk notes.md                  # JSONL chunks of one file
  chunk-worker chunk --tenant acme-prod docs/  # every *.md, *.html under docs/
  chunk-worker normalize notes.md              # the text chunk offsets refer to
  chunk-worker profiles                        # profiles, strategies, budgets
  chunk-worker profiles show spec-v1           # one profile as TOML
  chunk-worker report notes.md -o report.html  # see where the boundaries fall
  chunk-worker explain notes.md                # why each chunk ends
  chunk-worker chunk --help                    # every option of a subcommand";

pub(super) const NORMALIZE_HELP: &str = "\
The normalized document is the text every chunk offset (char_start/char_end,
byte_start/byte_end) refers to: UTF-8, `\\n` line endings, runs of spaces
collapsed outside code and tables (docs/contract.md#normalization). It is written byte for byte.

Examples:
  chunk-worker normalize notes.md > notes.normalized.md
  chunk-worker normalize page.md | diff page.md -";

pub(super) const BENCH_HELP: &str = "\
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

pub(super) const DEMO_HELP: &str = "\
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

pub(super) const SERVICE_HELP: &str = "\
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

pub(super) const PROFILES_HELP: &str = "\
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

pub(super) const EVAL_HELP: &str = "\
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

pub(super) const LINKS_HELP: &str = "\
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

pub(super) const REPORT_HELP: &str = "\
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
