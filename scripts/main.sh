#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is needed, build, check every
# shipped model on the CPU reference, then run the real service on this machine: the tuner
# server (embedded SQLite) and a worker — a measuring one where a GPU is present, a
# compile-only one otherwise (the submission is then a --dry-run) — submit a shipped tiny
# model, show the progress bar and write the artifact.
#   scripts/main.sh [MODEL_DIR]     (default tests/data/models/tiny-bert-opset20)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh

model=${1:-tests/data/models/tiny-bert-opset20}
status=0
echo
for m in tests/data/models/*/; do
  m=${m%/}
  echo "== mono-run $m/model.onnx --cpu --test-data $m/test_data_set_0"
  ./build/client/mono-run "$m/model.onnx" --cpu --test-data "$m/test_data_set_0" | tail -n 1 || status=1
done

run=${MONO_RUN_DIR:-/tmp/mono-main}
rm -rf "$run"; mkdir -p "$run"
addr=127.0.0.1:50051 http=127.0.0.1:8080 metrics=127.0.0.1:9101
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
echo
echo "== mono-tuner-server --db $run/mono.db --listen $addr --http $http   (log: $run/server.log)"
./build/tuner_server/mono-tuner-server --db "$run/mono.db" --listen "$addr" --http "$http" > "$run/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q "listening on" "$run/server.log" && break; sleep 0.2; done
grep -q "listening on" "$run/server.log" || { cat "$run/server.log"; exit 1; }

if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  worker_flags=() submit_flags=()
  echo "== mono-worker --server $addr --metrics $metrics   (a GPU is present: measuring worker; log: $run/worker.log)"
else
  worker_flags=(--compile-only) submit_flags=(--dry-run)
  echo "== mono-worker --server $addr --compile-only --metrics $metrics   (no GPU here; log: $run/worker.log)"
fi
./build/gpu_worker/mono-worker --server "$addr" "${worker_flags[@]}" --metrics "$metrics" > "$run/worker.log" 2>&1 &
pids+=($!)
sleep 1  # let the worker register (a measuring submission is routed to its GPU kind)

echo "== mono-submit $model --server $addr ${submit_flags[*]} --wait --out $run/artifact"
./build/client/mono-submit "$model" --server "$addr" "${submit_flags[@]}" --wait --out "$run/artifact" || status=1
echo
echo "artifact: $(ls "$run/artifact" | tr '\n' ' ')"
echo "server metrics: $(curl -s "http://$http/metrics" 2>/dev/null | grep -E '^mono_jobs\{' | tr '\n' ' ' || true)"
echo "dashboard API: $(curl -s "http://$http/api/submissions" 2>/dev/null | head -c 300 || true)..."
echo "The dashboard is at http://$http/ while the server runs (MONO_KEEP_SERVER=1 keeps it running)."
if [ "${MONO_KEEP_SERVER:-0}" = 1 ]; then
  echo "Serving; Ctrl-C stops the server and the worker."
  wait
fi
exit $status
