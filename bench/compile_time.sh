#!/usr/bin/env bash
# Issue 21 point 4: how long ONNX -> artifact takes, cold (empty Mono cubin cache; NVRTC's own
# cache is off in Mono) and with the kernel already cached, on the machine it runs on.
#   bench/compile_time.sh [MODEL,...]        (default bert-base; full models in /tmp/models)
# Each model: mono-compile MODEL --dtype fp16 --out DIR --no-verify twice with one fresh cache
# (cold, then cached), and the kernel alone (--emit cuda is not timed: the artifact is what a
# user waits for). Prints one line a run: model, cold or cached, wall seconds.
# Run with the bundle's environment (source .gpu/env.sh) or a local build on PATH.
set -uo pipefail
models=${1:-bert-base}
for n in ${models//,/ }; do
  onnx=/tmp/models/$n-opset20/model.onnx
  if [ ! -f "$onnx" ]; then echo "$n: no $onnx (export it first: bench/export_full.py)"; continue; fi
  cache=$(mktemp -d) out=$(mktemp -d)
  for pass in cold cached; do
    s=$(date +%s%N)
    XDG_CACHE_HOME=$cache mono-compile "$onnx" --dtype fp16 --out "$out" --no-verify > "$out/log_$pass.txt" 2>&1
    rc=$?
    e=$(date +%s%N)
    echo "$n $pass: $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s (exit $rc, $(nproc) cores)"
  done
  rm -rf "$cache" "$out"
done
