#!/usr/bin/env bash
# Load test of the tuning service on loopback, as deployed: gRPC over TLS with a token.
#   tests/load/load_test.sh BUILD_DIR [SUBMISSIONS=50] [WORKERS=16]
# Starts mono-tuner-server and WORKERS compile-only mono-workers, fires SUBMISSIONS dry-run
# submissions at once (mono-submit --dry-run --out, over the tiny models in both precisions, so
# that some tasks are shared and some not), and reports: submissions done and failed, p50 /
# p99 / max of submit -> artifact (each client's wall time), p50 / p99 of the Lease RPC (from
# the server's mono_lease_seconds histogram: bucket bounds), the server's RSS before and after,
# and errors in the logs. Exits 1 on any failed submission or error. Not part of CI (minutes of
# NVRTC on every core); its numbers go in bench/RESULTS.md.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$(dirname "$0")/../.." && pwd)
n=${2:-50} workers=${3:-16}
source "$src/tests/lib/stack.sh"
work=$(mktemp -d /tmp/mono-load.XXXXXX)
trap stack_cleanup EXIT
export XDG_CACHE_HOME=$work/cache
stack_make_certs
head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > "$work/token"
port=$((20000 + RANDOM % 20000)) http=$((40000 + RANDOM % 10000))
addr=127.0.0.1:$port
tls_client=(--token-file "$work/token" --tls-ca "$work/tls/ca.pem" --tls-cert "$work/tls/client.pem" --tls-key "$work/tls/client.key")
stack_run server "$build/tuner_server/mono-tuner-server" --db "$work/mono.db" --listen "$addr" --http 127.0.0.1:$http \
  --token-file "$work/token" --tls-cert "$work/tls/server.pem" --tls-key "$work/tls/server.key" --tls-ca "$work/tls/ca.pem"
stack_wait_for "$work/server.log" "listening on $addr" "mono-tuner-server"
server_pid=$(pgrep -f "mono-tuner-server --db $work/mono.db" | head -1)
rss() { awk '/VmRSS/ {print $2 / 1024 " MiB"}' "/proc/$server_pid/status"; }
rss_before=$(rss)
for i in $(seq "$workers"); do
  stack_run "worker$i" "$build/gpu_worker/mono-worker" --server "$addr" --compile-only --name "cpu-$i" --compile-threads 1 \
    --work-dir "$work/w$i" "${tls_client[@]}"
done
for i in $(seq "$workers"); do stack_wait_for "$work/worker$i.log" "registered" "mono-worker $i"; done

models=(tiny-bert-opset20 tiny-gpt2-opset20 tiny-resnet-opset17 tiny-vit-opset20 tiny-mobilenet-opset20 tiny-llama-opset20)
echo "load: $n dry-run submissions at once, $workers compile-only workers, TLS + token"
t0=$(date +%s%N)
for i in $(seq "$n"); do
  m=${models[$((i % ${#models[@]}))]} d=fp16
  [ $((i / ${#models[@]} % 2)) = 1 ] && d=fp32
  (
    s=$(date +%s%N)
    if "$build/client/mono-submit" "$src/tests/data/models/$m" --server "$addr" "${tls_client[@]}" --dry-run \
        --dtype $d --name "load-$i-$m" --out "$work/out$i" > "$work/submit$i.log" 2>&1; then
      echo "ok $(( ($(date +%s%N) - s) / 1000000 ))" > "$work/result$i"
    else
      echo "failed $(( ($(date +%s%N) - s) / 1000000 ))" > "$work/result$i"
    fi
  ) &
done
wait
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
rss_after=$(rss)
curl -s -H "Authorization: Bearer $(cat "$work/token")" "http://127.0.0.1:$http/metrics" > "$work/metrics.txt"
set +e
python3 - "$work" "$n" "$wall" "$rss_before" "$rss_after" <<'PY'
import glob, re, sys
work, n, wall, before, after = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000, sys.argv[4], sys.argv[5]
res = [open(f).read().split() for f in glob.glob(work + "/result*")]
ok = sorted(float(t) / 1000 for s, t in res if s == "ok")
failed = [t for s, t in res if s != "ok"]
q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")
print(f"submissions: {len(ok)} done, {len(failed)} failed of {n}; wall {wall:.1f} s")
print(f"submit -> artifact: p50 {q(ok, .5):.1f} s, p99 {q(ok, .99):.1f} s, max {ok[-1] if ok else float('nan'):.1f} s")
text = open(work + "/metrics.txt").read()
buckets = [(float(le), float(c)) for le, c in re.findall(r'mono_lease_seconds_bucket\{le="([^"]+)"\} (\S+)', text) if le != "+Inf"]
total = float(re.search(r"mono_lease_seconds_count (\S+)", text).group(1))
def hq(p):
    for le, c in buckets:
        if c >= p * total: return f"<= {le * 1000:g} ms"
    return f"> {buckets[-1][0] * 1000:g} ms"
print(f"Lease RPCs: {total:.0f}; p50 {hq(.5)}, p99 {hq(.99)} (histogram bucket bounds)")
refused = re.search(r'mono_reports_total\{outcome="refused"\} (\S+)', text)
print(f"reports refused: {refused.group(1) if refused else '?'}; server RSS before {before}, after {after}")
sys.exit(1 if failed or len(ok) != n else 0)
PY
status=$?
set -e
errors=$(cat "$work"/server.log "$work"/worker*.log | grep -cE "error:|ERROR|Sanitizer|Segmentation|terminate called" || true)
for f in "$work"/result*; do
  grep -q '^failed' "$f" && { echo "--- failed: ${f/result/submit}.log"; tail -3 "${f/result/submit}.log"; }
done
echo "error lines in the server and worker logs: $errors"
[ "$status" = 0 ] && [ "$errors" = 0 ] || stack_fail "the load test saw failures"
echo "PASS"
