# Sourced by tests that need a running service on loopback: mono-tuner-server (embedded
# SQLite) and one compile-only mono-worker with its metrics address.
#   source tests/lib/stack.sh; stack_start BUILD_DIR
# Sets: work (a temporary folder, removed at exit unless a check failed), addr (gRPC),
# http (the server's --http port), wmetrics (the worker's metrics port), db, client_flags (what
# mono-submit needs to reach the server: token and TLS flags).
# STACK_TOKEN=1 gives the server a token ($work/token; the worker and client_flags send it).
# STACK_TLS=1 serves gRPC over TLS (a CA made for the run, $work/tls/ca.pem, signs the server's
# certificate for 127.0.0.1); STACK_TLS=mutual also requires client certificates signed by it.
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
stack_make_certs() {  # a CA, and certificates it signs: server (for 127.0.0.1) and client
  local t=$work/tls
  mkdir -p "$t"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$t/ca.key" -out "$t/ca.pem" -days 2 -subj /CN=mono-test-ca 2> /dev/null
  for who in server client; do
    openssl req -newkey rsa:2048 -nodes -keyout "$t/$who.key" -out "$t/$who.csr" -subj "/CN=mono-test-$who" 2> /dev/null
    printf "subjectAltName=IP:127.0.0.1,DNS:localhost\n" > "$t/$who.ext"
    openssl x509 -req -in "$t/$who.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial -days 2 \
      -extfile "$t/$who.ext" -out "$t/$who.pem" 2> /dev/null
  done
}
stack_start() {
  local build=$1
  work=$(mktemp -d /tmp/mono-stack.XXXXXX)
  trap stack_cleanup EXIT
  export XDG_CACHE_HOME=$work/cache
  local port=$((20000 + RANDOM % 20000))
  http=$((40000 + RANDOM % 10000)) wmetrics=$((50000 + RANDOM % 10000))
  addr=127.0.0.1:$port db=$work/mono.db
  local server_flags=()
  client_flags=()
  if [ "${STACK_TOKEN:-0}" = 1 ]; then
    head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > "$work/token"
    server_flags+=(--token-file "$work/token") client_flags+=(--token-file "$work/token")
  fi
  if [ -n "${STACK_TLS:-}" ]; then
    stack_make_certs
    server_flags+=(--tls-cert "$work/tls/server.pem" --tls-key "$work/tls/server.key")
    client_flags+=(--tls-ca "$work/tls/ca.pem")
    if [ "$STACK_TLS" = mutual ]; then
      server_flags+=(--tls-ca "$work/tls/ca.pem")
      client_flags+=(--tls-cert "$work/tls/client.pem" --tls-key "$work/tls/client.key")
    fi
  fi
  stack_run server "$build/tuner_server/mono-tuner-server" --db "$db" --listen "$addr" --http 127.0.0.1:$http "${server_flags[@]}"
  stack_wait_for "$work/server.log" "listening on $addr" "mono-tuner-server"
  stack_run worker "$build/gpu_worker/mono-worker" --server "$addr" --compile-only --name cpu-1 \
    --metrics 127.0.0.1:$wmetrics "${client_flags[@]}"
  stack_wait_for "$work/worker.log" "registered" "mono-worker"
}
