#!/usr/bin/env bash
# Where the worker's database time goes (issue 18): starts a throwaway
# PostgreSQL cluster with pg_stat_statements and auto_explain preloaded (the
# session's own server is left as it is), drains a backlog through it with
# `chunk-worker bench --backlog`, then prints
#   1. the statements by total execution time (pg_stat_statements), and
#   2. one EXPLAIN (ANALYZE, BUFFERS) plan per write-path statement, as
#      auto_explain logged it for a sample of executions.
#
#   scripts/db-profile.sh [--docs N] [--profile NAME] [--processes N]
#
# Needs the release binary (cargo build --release -p worker), PostgreSQL's
# server programs (initdb, pg_ctl: `pg_config --bindir` or
# /usr/lib/postgresql/*/bin) and RabbitMQ on the configured URL. As root the
# cluster runs as the `postgres` user. Settings copied from the default
# server: fsync and synchronous_commit on, autovacuum off, shared_buffers
# 128MB. Environment: DB_PROFILE_PORT (default 5499), DB_PROFILE_SAMPLE
# (auto_explain.sample_rate, default 0.02), DB_PROFILE_BIN (the binary,
# default target/release/chunk-worker).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
docs=3000
bench_args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --docs) docs="$2"; shift 2 ;;
        --profile|--processes) bench_args+=("$1" "$2"); shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "db-profile: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
port="${DB_PROFILE_PORT:-5499}"
sample="${DB_PROFILE_SAMPLE:-0.02}"
bin="${DB_PROFILE_BIN:-target/release/chunk-worker}"
[[ -x "$bin" ]] || { echo "db-profile: build first: cargo build --release -p worker" >&2; exit 1; }

bindir="$(pg_config --bindir 2>/dev/null || true)"
if [[ ! -x "$bindir/initdb" ]]; then
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
fi
[[ -x "$bindir/initdb" ]] || { echo "db-profile: no initdb found" >&2; exit 1; }

dir="$(mktemp -d /tmp/db-profile.XXXXXX)"
as_pg=()
if [[ "$(id -u)" == 0 ]]; then
    chown postgres "$dir"
    as_pg=(runuser -u postgres --)
fi
stop() {
    "${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

"${as_pg[@]}" "$bindir/initdb" -A trust -U postgres --no-sync -D "$dir/data" >/dev/null
cat >>"$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_buffers = 128MB
autovacuum = off
fsync = on
synchronous_commit = on
shared_preload_libraries = 'pg_stat_statements,auto_explain'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on
pg_stat_statements.max = 1000
auto_explain.log_min_duration = 0
auto_explain.log_analyze = on
auto_explain.log_buffers = on
auto_explain.log_timing = on
auto_explain.log_triggers = on
auto_explain.log_nested_statements = on
auto_explain.sample_rate = $sample
EOF
"${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
psql=(psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres)
"${psql[@]}" -c "CREATE EXTENSION pg_stat_statements"

echo "== chunk-worker bench --median --docs $docs --backlog ${bench_args[*]} (cluster on port $port)"
CHUNK_WORKER__DATABASE__URL="postgres://postgres@127.0.0.1:$port/chunk_worker" \
CHUNK_WORKER__DATABASE__URL_FILE="" \
    "$bin" bench --median --docs "$docs" --backlog "${bench_args[@]}"

echo
echo "== statements by total execution time (pg_stat_statements; the bench database, dropped by now)"
"${psql[@]}" -P pager=off -c "
SELECT calls,
       round(total_exec_time::numeric, 1) AS total_ms,
       round(mean_exec_time::numeric, 3) AS mean_ms,
       plans,
       round(total_plan_time::numeric, 1) AS plan_ms,
       round((100 * total_exec_time / sum(total_exec_time) OVER ())::numeric, 1) AS pct,
       rows,
       shared_blks_hit + shared_blks_read AS blocks,
       wal_bytes,
       jit_functions AS jit_fn,
       round((jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time)::numeric, 1) AS jit_ms,
       left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
FROM pg_stat_statements s
WHERE s.dbid NOT IN (SELECT oid FROM pg_database)
ORDER BY total_exec_time DESC
LIMIT 25"

echo
echo "== one sampled plan per write statement (auto_explain, sample rate $sample)"
python3 - "$dir/server.log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
# Each entry: "... LOG:  duration: X ms  plan:\n\tQuery Text: ...\n\t<plan lines>"
entries = re.split(r"\n(?=\S.*LOG:  duration: )", text)
seen = {}
for e in entries:
    m = re.search(r"LOG:  duration: ([\d.]+) ms  plan:\n\s*Query Text: (.*?)\n(\s+(?:Insert|Update|Delete|Merge|Result|Index|Seq|Bitmap|Nested|Hash|Sort|Limit|LockRows|ModifyTable|Aggregate|Unique|Append|Subquery|CTE|Function|Values|Materialize|Planning|Trigger|Execution|Buffers|->|\w).*)", e, re.S)
    if not m:
        continue
    query = re.sub(r"\s+", " ", m.group(2)).strip()
    if not re.match(r"(?i)(with\b.*)?(insert|update|delete|merge|copy)", query):
        continue
    key = query[:120]
    if key not in seen:
        seen[key] = (float(m.group(1)), m.group(3).rstrip())
for key, (ms, plan) in seen.items():
    print(f"-- {key}{'...' if len(key) == 120 else ''}  ({ms:.3f} ms)")
    print(plan)
    print()
if not seen:
    print("(no write statement was sampled; raise DB_PROFILE_SAMPLE)")
PY
