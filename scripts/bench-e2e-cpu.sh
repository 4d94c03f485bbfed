#!/usr/bin/env bash
# Runs `chunk-worker bench --median --docs N` and prints where the machine's
# CPU went meanwhile: the bench process (worker + load generator), the
# postgres processes and RabbitMQ (beam.smp), from /proc tick counters.
# Usage: scripts/bench-e2e-cpu.sh [N]   (after cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-3000}
ticks_of() { # pids... -> utime+stime(+children) ticks summed
  local sum=0 p t
  for p in "$@"; do
    t=$(awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null || echo 0)
    sum=$((sum + t))
  done
  echo "$sum"
}
read -r _ u0 _ s0 idle0 _ < /proc/stat
pg0=$(ticks_of $(pgrep -f postgres || true))
beam0=$(ticks_of $(pgrep -f beam.smp || true))
/usr/bin/time -f "bench process: %U s user, %S s sys, %e s wall" \
  target/release/chunk-worker bench --median --docs "$docs" 2>&1 | grep -E "throughput|bench process"
read -r _ u1 _ s1 idle1 _ < /proc/stat
pg1=$(ticks_of $(pgrep -f postgres || true))
beam1=$(ticks_of $(pgrep -f beam.smp || true))
echo "machine ticks: user $((u1 - u0)), sys $((s1 - s0)), idle $((idle1 - idle0))"
echo "postgres ticks (live processes): $((pg1 - pg0)); rabbitmq ticks: $((beam1 - beam0))"
