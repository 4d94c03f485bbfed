#!/usr/bin/env bash
# The fault soak (issue 15 item 7) for as long as you like, in release mode:
# two `chunk-worker run` processes against the local RabbitMQ and Postgres
# while SIGKILLs, broker cuts, database outages, duplicate and out-of-order
# deliveries and a crash-looping message hit them; it then checks that every
# version was stored exactly once, the newest is current, every version has
# its event and only the crash-looping message was dead-lettered, and prints
# the figures. CI runs the same test for 40 seconds.
#
#   scripts/soak.sh              # one hour, seed 20261124
#   scripts/soak.sh 600 42       # ten minutes, seed 42
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-3600}"
seed="${2:-20261124}"
echo "soak: ${seconds} s, seed ${seed}, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Build first, so that the wall time below is the soak's own.
cargo test --release -p worker --test soak --no-run
start=$(date +%s)
status=0
SOAK_SECONDS="$seconds" SOAK_SEED="$seed" cargo test --release -p worker --test soak -- --nocapture --test-threads 1 || status=$?
echo "soak: wall $(( $(date +%s) - start )) s, load after $(cut -d' ' -f1-3 /proc/loadavg), exit ${status}"
exit "$status"
