# Sourced by tests that need a running service on loopback: mono-tuner-server (embedded
# SQLite) and one compile-only mono-worker with its metrics address.
#   source tests/lib/stack.sh; stack_start BUILD_DIR
# Sets: work (a temporary folder, removed at exit unless a check failed), addr (gRPC),
# http (the server's --http port), wmetrics (the worker's metrics port), db.
# stack_fail MESSAGE prints the logs and exits 1; stack_run NAME CMD... runs a background
# process that is killed at exit.
set -euo pipefail
stack_pids=()
stack_cleanup() {
  for p in "${stack_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${stack_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ "${keep:-0}" = 1 ] || rm -rf "$work"
}
stack_fail() {
  echo "FAIL: $*"
  for f in "$work"/*.log; do echo "--- $f"; tail -n 25 "$f"; done
  keep=1
  exit 1
}
stack_run() {  # stack_run NAME CMD...: CMD in the background, output in $work/NAME.log
  local name=$1; shift
  "$@" > "$work/$name.log" 2>&1 &
  stack_pids+=($!)
  disown $!  # no "Killed" notices from the cleanup
}
stack_wait_for() {  # stack_wait_for FILE PATTERN WHAT
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  stack_fail "$3 did not start"
}
stack_start() {
  local build=$1
  work=$(mktemp -d /tmp/mono-stack.XXXXXX)
  trap stack_cleanup EXIT
  export XDG_CACHE_HOME=$work/cache
  local port=$((20000 + RANDOM % 20000))
  http=$((40000 + RANDOM % 10000)) wmetrics=$((50000 + RANDOM % 10000))
  addr=127.0.0.1:$port db=$work/mono.db
  stack_run server "$build/tuner_server/mono-tuner-server" --db "$db" --listen "$addr" --http 127.0.0.1:$http
  stack_wait_for "$work/server.log" "listening on $addr" "mono-tuner-server"
  stack_run worker "$build/gpu_worker/mono-worker" --server "$addr" --compile-only --name cpu-1 \
    --metrics 127.0.0.1:$wmetrics
  stack_wait_for "$work/worker.log" "registered" "mono-worker"
}
