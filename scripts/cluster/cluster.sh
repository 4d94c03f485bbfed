#!/usr/bin/env bash
# A throwaway 3-node RabbitMQ cluster on this machine, beside (never instead
# of) the default broker on 5672: its own node names, AMQP ports,
# distribution ports and CLI distribution ports, its own data and log folders
# under DIR, no plugins (so no management or Prometheus listener), and an
# Erlang cookie of its own given on the command line (-setcookie), so that
# ~/.erlang.cookie and the default node's cookie are never read or touched.
#
#   cluster.sh start DIR          start 3 nodes, join them; writes DIR/env
#   cluster.sh stop-all DIR       stop every node of DIR (then kill what is left)
#   cluster.sh stop DIR N         stop node N (1-3) gracefully
#   cluster.sh kill DIR N         SIGKILL node N's Erlang VM (a crash)
#   cluster.sh restart DIR N      start node N again (it rejoins) and wait for it
#   cluster.sh leader DIR QUEUE   the node name leading a quorum queue
#   cluster.sh members DIR QUEUE  the online members of a quorum queue
#   cluster.sh ctl DIR N ARGS...  rabbitmqctl against node N
#
# DIR/env (sourceable) names the nodes (CLUSTER_NODE_1..3), their AMQP ports
# (CLUSTER_PORT_1..3) and CLUSTER_AMQP_URLS (comma-separated, guest over
# loopback). Exit status: 0 done, 1 failed (the nodes' logs are in DIR/nN/log).
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }
log() { printf 'cluster: %s\n' "$*" >&2; }

[[ $# -ge 2 ]] || die "usage: cluster.sh start|stop-all|stop|kill|restart|leader|members|ctl DIR [ARGS...]"
cmd=$1
dir=$2
shift 2

# The server and CLI scripts switch to the rabbitmq user when run as root
# (keeping the environment); the node folders must then be theirs.
owner() {
  if [[ $(id -u) -eq 0 ]] && id rabbitmq >/dev/null 2>&1; then
    chown -R rabbitmq:rabbitmq "$@"
  fi
}

# A free TCP port on 127.0.0.1 (Python's stdlib, as the rest of scripts/).
free_port_range() {
  # $1 ports in a row, all free; prints the first.
  python3 - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
for _ in range(200):
    base = random.randrange(20000, 30000 - n)
    socks = []
    try:
        for p in range(base, base + n):
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(base)
    sys.exit(0)
sys.exit("no free port range")
EOF
}

load_env() {
  [[ -f $dir/env ]] || die "$dir/env missing: was the cluster started?"
  # shellcheck source=/dev/null
  . "$dir/env"
}

# Environment of node $1 (1-3) for rabbitmq-server and rabbitmqctl.
node_env() {
  local i=$1 d="$dir/n$1"
  local port_var="CLUSTER_PORT_$i" dist_var="CLUSTER_DIST_PORT_$i" node_var="CLUSTER_NODE_$i"
  echo "RABBITMQ_NODENAME=${!node_var}"
  echo "RABBITMQ_NODE_PORT=${!port_var}"
  echo "RABBITMQ_DIST_PORT=${!dist_var}"
  echo "RABBITMQ_CONFIG_FILE=$d/rabbitmq"
  echo "RABBITMQ_MNESIA_BASE=$d/mnesia"
  echo "RABBITMQ_LOG_BASE=$d/log"
  echo "RABBITMQ_ENABLED_PLUGINS_FILE=$d/enabled_plugins"
  echo "RABBITMQ_FEATURE_FLAGS_FILE=$d/feature_flags"
  echo "RABBITMQ_PID_FILE=$d/pid"
  echo "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-setcookie $CLUSTER_COOKIE"
  echo "RABBITMQ_CTL_ERL_ARGS=-setcookie $CLUSTER_COOKIE"
  echo "RABBITMQ_CTL_DIST_PORT_MIN=$CLUSTER_CTL_DIST_MIN"
  echo "RABBITMQ_CTL_DIST_PORT_MAX=$CLUSTER_CTL_DIST_MAX"
}

with_node_env() {
  local i=$1
  shift
  local vars=()
  mapfile -t vars < <(node_env "$i")
  env "${vars[@]}" "$@"
}

ctl() {
  local i=$1
  shift
  local node_var="CLUSTER_NODE_$i"
  with_node_env "$i" rabbitmqctl -n "${!node_var}" "$@"
}

start_node() {
  local i=$1
  local node_var="CLUSTER_NODE_$i" port_var="CLUSTER_PORT_$i"
  log "starting node $i (${!node_var}, AMQP port ${!port_var})"
  # setsid: the node outlives nothing it should not; its own process group.
  with_node_env "$i" setsid rabbitmq-server >>"$dir/n$i/out.txt" 2>&1 </dev/null &
}

wait_node() {
  local i=$1
  # `wait` waits for the pid file, then for the rabbit application.
  if ! ctl "$i" -q wait "$dir/n$i/pid" --timeout 90 >>"$dir/n$i/ctl.txt" 2>&1; then
    tail -n 30 "$dir/n$i/out.txt" >&2 || true
    die "node $i did not start (logs in $dir/n$i)"
  fi
}

stop_node() {
  local i=$1
  ctl "$i" -q stop --timeout 60 >>"$dir/n$i/ctl.txt" 2>&1 || true
}

kill_node() {
  local i=$1 pid
  pid=$(cat "$dir/n$i/pid" 2>/dev/null || true)
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
}

case $cmd in
start)
  [[ ! -e $dir/env ]] || die "$dir already holds a cluster"
  command -v rabbitmq-server >/dev/null || die "rabbitmq-server is not installed"
  mkdir -p "$dir"
  base=$(free_port_range 40) || die "no free ports"
  suffix=$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cookie=$(head -c 24 /dev/urandom | od -An -tu1 | tr -s ' ' '\n' | grep -v '^$' | awk '{printf "%c", 65 + $1 % 26}')
  {
    echo "CLUSTER_COOKIE=$cookie"
    echo "CLUSTER_CTL_DIST_MIN=$((base + 20))"
    echo "CLUSTER_CTL_DIST_MAX=$((base + 39))"
    urls=()
    for i in 1 2 3; do
      echo "CLUSTER_NODE_$i=cw52n$i$suffix@localhost"
      echo "CLUSTER_PORT_$i=$((base + i - 1))"
      echo "CLUSTER_DIST_PORT_$i=$((base + 10 + i - 1))"
      urls+=("amqp://guest:guest@127.0.0.1:$((base + i - 1))/%2f")
    done
    echo "CLUSTER_AMQP_URLS=$(IFS=,; echo "${urls[*]}")"
  } >"$dir/env"
  load_env
  for i in 1 2 3; do
    mkdir -p "$dir/n$i/log" "$dir/n$i/mnesia"
    port_var="CLUSTER_PORT_$i"
    cat >"$dir/n$i/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:${!port_var}
loopback_users = none
log.console = false
log.file.level = info
EOF
    echo '[].' >"$dir/n$i/enabled_plugins"
  done
  owner "$dir"
  for i in 1 2 3; do start_node "$i"; done
  for i in 1 2 3; do wait_node "$i"; done
  for i in 2 3; do
    log "joining node $i to node 1"
    ctl "$i" -q stop_app >>"$dir/n$i/ctl.txt" 2>&1 || die "stop_app on node $i failed"
    ctl "$i" -q join_cluster "$CLUSTER_NODE_1" >>"$dir/n$i/ctl.txt" 2>&1 || {
      cat "$dir/n$i/ctl.txt" >&2
      die "node $i could not join node 1"
    }
    ctl "$i" -q start_app >>"$dir/n$i/ctl.txt" 2>&1 || die "start_app on node $i failed"
  done
  running=$(ctl 1 -q cluster_status --formatter json | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin).get("running_nodes", [])))')
  [[ $running -eq 3 ]] || die "the cluster runs $running nodes, not 3"
  log "3 nodes running: $CLUSTER_AMQP_URLS"
  ;;
stop-all)
  [[ -f $dir/env ]] || exit 0
  load_env
  for i in 1 2 3; do stop_node "$i" & done
  wait
  for i in 1 2 3; do kill_node "$i"; done
  ;;
stop)
  load_env
  stop_node "$1"
  ;;
kill)
  load_env
  kill_node "$1"
  ;;
restart)
  load_env
  start_node "$1"
  wait_node "$1"
  ;;
leader | members)
  load_env
  queue=$1
  # Ask any node that answers.
  for i in 1 2 3; do
    if out=$(ctl "$i" -q list_queues name leader online --formatter json 2>/dev/null); then
      QUEUE="$queue" WHAT="$cmd" python3 -c '
import json, os, sys
for q in json.load(sys.stdin):
    if q.get("name") == os.environ["QUEUE"]:
        v = q.get("leader" if os.environ["WHAT"] == "leader" else "online")
        print(" ".join(v) if isinstance(v, list) else v)
        sys.exit(0)
sys.exit("no queue " + os.environ["QUEUE"])' <<<"$out"
      exit $?
    fi
  done
  die "no node answered"
  ;;
ctl)
  load_env
  i=$1
  shift
  ctl "$i" "$@"
  ;;
*)
  die "unknown command $cmd"
  ;;
esac
