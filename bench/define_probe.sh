#!/usr/bin/env bash
# Timing probes on the GPU machine: whole models built plain and with NVRTC defines of the device
# library (MONO_AB_NVRTC_DEFINE; e.g. MONO_PROBE_NO_B, the GEMMs skip their weight copies, or
# MONO_PROBE_NO_A, their activation copies: the results are wrong, only the timings and the
# per-stage profiles mean anything), all compiled first in parallel, then each timed
# (mono-run --bench) and profiled (--profile) one at a time.
#   bench/define_probe.sh [--only gpt2,vit-base] DEFINE...
# Logs in /tmp/probe-logs and $OUT/probe.tgz (default /tmp/probe-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/probe-out}; logs=/tmp/probe-logs
rm -rf "$logs"; mkdir -p "$out" "$logs"
trap 'tar -C /tmp -czf "$out/probe.tgz" probe-logs' EXIT
models=gpt2 defines=(plain)
while [ $# -gt 0 ]; do
  case "$1" in
    --only) models=$2; shift ;;
    *) defines+=("$1") ;;
  esac
  shift
done
source .gpu/env.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$logs/summary.txt"; }
echo "commit $(cat .gpu/COMMIT 2>/dev/null || echo unknown)" > "$logs/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$logs/gpu.txt"
missing=0
for n in ${models//,/ }; do [ -f /tmp/models/$n-opset20/model.onnx ] || missing=1; done
if [ $missing = 1 ]; then
  stamp "export $models"
  python3 bench/export_full.py /tmp/models --only "$models" > "$logs/export.txt" 2>&1
fi
run() {  # LOG DEFINE ARGS...
  local log=$1 def=$2; shift 2
  [ "$def" = plain ] && def=""
  timeout 300 env MONO_AB_NVRTC_DEFINE="$def" mono-run "$@" > "$logs/$log.txt" 2>&1
  echo "exit $?" >> "$logs/$log.txt"
}
export -f run; export logs
stamp "compile (profiling and plain builds, every define, in parallel)"
for n in ${models//,/ }; do
  for d in "${defines[@]}"; do
    echo "compile_${d}_$n $d /tmp/models/$n-opset20/model.onnx --gpu --dtype fp16"
    echo "compileprof_${d}_$n $d /tmp/models/$n-opset20/model.onnx --gpu --dtype fp16 --profile"
  done
done | xargs -P "$(nproc)" -L 1 bash -c 'run "$@"' _
stamp "timed and profiled, one at a time"
for n in ${models//,/ }; do
  for d in "${defines[@]}"; do
    run "bench_${d}_$n" "$d" /tmp/models/$n-opset20/model.onnx --gpu --dtype fp16 --bench
    run "profile_${d}_$n" "$d" /tmp/models/$n-opset20/model.onnx --gpu --dtype fp16 --profile
    echo "$n $d: $(grep -h 'bench:' "$logs/bench_${d}_$n.txt")" | tee -a "$logs/summary.txt"
  done
done
stamp done
