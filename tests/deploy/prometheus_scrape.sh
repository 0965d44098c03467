#!/usr/bin/env bash
# Debian's prometheus, configured by deploy/prometheus.yml (and its alerts.yml), scrapes a
# live server and worker on loopback; Mono metrics are read back through Prometheus' HTTP
# API (issue 5, point 3).
#   tests/deploy/prometheus_scrape.sh BUILD_DIR SOURCE_DIR
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
source "$src/tests/lib/stack.sh"
command -v prometheus > /dev/null || { echo "FAIL: no prometheus (apt-get install prometheus; scripts/install-deps.sh --test)"; exit 1; }

# The fleet as deployed: a token (which also guards /metrics: Prometheus sends it) and gRPC over
# mutual TLS.
STACK_TOKEN=1 STACK_TLS=mutual stack_start "$build"
grep -q "over mutual TLS" "$work/server.log" || stack_fail "the server does not say it serves mutual TLS"
model=$src/tests/data/models/tiny-bert-opset20/model.onnx
# Refused: a plaintext client, a TLS client without a certificate, a client without the token.
for refused in "--token-file $work/token" "--token-file $work/token --tls-ca $work/tls/ca.pem" \
               "--tls-ca $work/tls/ca.pem --tls-cert $work/tls/client.pem --tls-key $work/tls/client.key"; do
  # shellcheck disable=SC2086
  if "$build/client/mono-submit" "$model" --server "$addr" $refused --dry-run > "$work/refused.out" 2>&1; then
    stack_fail "mono-submit with only '$refused' was accepted"
  fi
done
"$build/client/mono-submit" "$model" --server "$addr" "${client_flags[@]}" --dry-run --wait \
  > "$work/submit.out" 2> "$work/submit.log" || stack_fail "the dry-run submission failed"

# deploy/prometheus.yml as shipped, pointed at this test's ports and scraping every second.
mkdir -p "$work/prom"
cp "$src/deploy/alerts.yml" "$work/prom/"
sed -e "s/localhost:8080/127.0.0.1:$http/" -e "s/localhost:9101/127.0.0.1:$wmetrics/" -e "s|/etc/mono/token|$work/token|" \
    -e "s/scrape_interval: [0-9]*s/scrape_interval: 1s/" -e "s/evaluation_interval: [0-9]*s/evaluation_interval: 1s/" \
    "$src/deploy/prometheus.yml" > "$work/prom/prometheus.yml"
promtool check config "$work/prom/prometheus.yml" > "$work/promtool.log" 2>&1 || stack_fail "promtool rejects the configuration"
pport=$((30000 + RANDOM % 10000))
stack_run prometheus prometheus --config.file="$work/prom/prometheus.yml" --storage.tsdb.path="$work/prom/data" \
  --web.listen-address=127.0.0.1:$pport
query() {  # query PROMQL -> the first sample's value, or nothing
  curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
    python3 -c "import json,sys; r=json.load(sys.stdin)['data']['result']; print(r[0]['value'][1] if r else '')" 2>/dev/null || true
}
wait_value() {  # wait_value PROMQL WHAT: waits up to 60 s for a sample, prints it
  local v=""
  for _ in $(seq 120); do v=$(query "$1"); [ -n "$v" ] && break; sleep 0.5; done
  [ -n "$v" ] || stack_fail "Prometheus has no sample of $2 ($1)"
  echo "$v"
}
done_jobs=$(wait_value 'sum(mono_jobs{state="done"})' "the server's jobs gauge")
candidates=$(wait_value 'sum(mono_worker_candidates_total)' "the worker's candidate counter")
up=$(wait_value 'min(up{job=~"mono-server|mono-worker"})' "the targets' up")
targets=$(wait_value 'count(up{job=~"mono-server|mono-worker"})' "the targets")
echo "through Prometheus: done jobs $done_jobs, worker candidates $candidates, targets $targets (min up $up)"
[ "$targets" = 2 ] && [ "$up" = 1 ] || stack_fail "expected both targets up"
[ "$done_jobs" -ge 16 ] 2>/dev/null || stack_fail "expected >= 16 done jobs (tiny-bert's tuning tasks), Prometheus says $done_jobs"
[ "${candidates%.*}" -ge 44 ] 2>/dev/null || stack_fail "expected >= 44 candidates, Prometheus says $candidates"
# The alert rules of deploy/alerts.yml were loaded and evaluated.
rules=$(curl -s "http://127.0.0.1:$pport/api/v1/rules" | python3 -c "import json,sys; print(sum(len(g['rules']) for g in json.load(sys.stdin)['data']['groups']))")
[ "$rules" -ge 1 ] || stack_fail "Prometheus loaded no alert rules"
echo "ok: Prometheus scraped server and worker and loaded $rules alert rules"
