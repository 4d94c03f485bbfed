#!/usr/bin/env bash
# The cluster test (issue 52): a throwaway 3-node RabbitMQ cluster on this
# machine (scripts/cluster/cluster.sh: its own ports, node names, cookie and
# folders; the default broker on 5672 is never touched), then
# worker/tests/cluster/ against it: two `chunk-worker run` processes while
# documents flow with publisher confirms, the node leading chunking.requests
# stopped and started, the workers' node stopped and started; nothing may be
# lost, duplicated or dead-lettered, every version current as expected, and
# the workers exit 0 on SIGTERM. The cluster is always torn down.
#
#   scripts/cluster/test.sh                       # CI: 300 documents, one fault cycle
#   scripts/cluster/test.sh --soak                # 3000 documents, 6 cycles (SIGKILLs too)
#   scripts/cluster/test.sh --docs 1000 --cycles 2 --rate 30 [--release]
#
# Exit status: 0 passed; 1 the cluster did not start or the test failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

docs=300 cycles=1 rate=15 profile=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --docs) docs=$2; shift 2 ;;
  --cycles) cycles=$2; shift 2 ;;
  --rate) rate=$2; shift 2 ;;
  --release) profile=(--release); shift ;;
  --soak) docs=3000 cycles=6 rate=25; shift ;;
  *) echo "usage: $0 [--docs N] [--cycles N] [--rate MSG_PER_S] [--release] [--soak]" >&2; exit 2 ;;
  esac
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/cw_cluster.XXXXXX")
teardown() {
  local status=$?
  scripts/cluster/cluster.sh stop-all "$dir" || true
  if [[ $status -eq 0 ]]; then
    rm -rf "$dir"
  else
    echo "cluster test failed: node and worker logs kept in $dir" >&2
    # The nodes' data is of no use; their logs and the workers' are.
    rm -rf "$dir"/n*/mnesia
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 1' INT TERM

echo "cluster test: ${docs} documents, ${cycles} cycle(s), ${rate} messages/s, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
# The test binary first, so that the cluster's time is the test's own (and
# a build error needs no cluster). The whole workspace, as CI's build: a
# single package (-p worker) unifies other features and compiled every
# dependency again (3.7 minutes of CI).
cargo test "${profile[@]}" --workspace --test cluster --locked --no-run
start=$(date +%s)
scripts/cluster/cluster.sh start "$dir"
echo "cluster test: cluster up in $(($(date +%s) - start)) s"
CLUSTER_DIR="$dir" CLUSTER_DOCS="$docs" CLUSTER_CYCLES="$cycles" CLUSTER_RATE="$rate" \
  cargo test "${profile[@]}" --workspace --test cluster --locked -- --nocapture --test-threads 1 \
  | tee "$dir/test.out"
# The test passes without a cluster (it has none to run against): here it
# must have run to its end.
grep -q "stored exactly once: lost 0" "$dir/test.out" || { echo "the cluster test did not run to its end" >&2; exit 1; }
echo "cluster test: passed, wall $(($(date +%s) - start)) s (cluster start included), load after $(cut -d' ' -f1-3 /proc/loadavg)"
