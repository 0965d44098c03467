#!/usr/bin/env bash
# Nsight Compute's warp-stall picture of whole models, on the GPU machine: for each model, the
# fp16 artifact (mono-compile --out), its SASS by function (cuobjdump), one launch of its kernel
# under ncu (warp-state, scheduler, memory and source-counter sections), the details page and
# the per-SASS-instruction stall samples as CSV. bench/ncu_sum.py reads them back here.
#   bench/ncu_stalls.sh [--only gpt2,bert-base] [--set NAME=VALUE]...
# Writes /tmp/ncu-logs and $OUT/ncu.tgz (default /tmp/ncu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/ncu-out}; logs=/tmp/ncu-logs
rm -rf "$logs"; mkdir -p "$out" "$logs"
trap 'tar -C /tmp -czf "$out/ncu.tgz" ncu-logs' EXIT
models=gpt2 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only) models=$2; shift ;;
    --set) extra+=(--set "$2"); shift ;;
    *) echo "ncu_stalls.sh: unknown flag $1" >&2; exit 2 ;;
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
for n in ${models//,/ }; do
  d=/tmp/models/$n-opset20 art=/tmp/ncu-art-$n
  stamp "$n: compile"
  rm -rf "$art"
  mono-compile "$d/model.onnx" --dtype fp16 "${extra[@]}" --out "$art" > "$logs/compile_$n.txt" 2>&1
  cuobjdump -sass "$art/kernel.cubin" | gzip > "$logs/sass_$n.txt.gz"
  mono-run "$art" --gpu --test-data "$d/test_data_set_0" --bench > "$logs/bench_$n.txt" 2>&1
  stamp "$n: ncu"
  ncu --clock-control none --warp-sampling-interval 1 --import-source no -k regex:mono --launch-skip 20 --launch-count 1 \
      --section WarpStateStats --section SourceCounters --section SchedulerStats \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
      -o /tmp/ncu-rep-$n -f mono-run "$art" --gpu --bench > "$logs/ncu_run_$n.txt" 2>&1
  ncu -i /tmp/ncu-rep-$n.ncu-rep --page details > "$logs/ncu_details_$n.txt" 2>&1
  ncu -i /tmp/ncu-rep-$n.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > "$logs/ncu_sass_$n.csv.gz"
done
stamp done
