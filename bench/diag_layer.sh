#!/usr/bin/env bash
# Diagnostic GPU run on a 2-layer BERT-base (same shapes per layer as bert-base, a fraction of
# the compile time): per-stage profile, timing, Nsight Compute stall breakdown and per-SASS
# stall samples, and isolated GEMM timings from the device library. Writes to $OUT.
#   bench/diag_layer.sh [--no-ncu] [--variant NAME "MONO-RUN FLAGS"]...
set -uo pipefail
cd "$(dirname "$0")/.."
# The device tool brings back at most 8 files: everything goes to /tmp/diag, then one tarball.
final=${OUT:-/tmp/diag-out}; out=/tmp/diag; rm -rf "$out"; mkdir -p "$out" "$final"
trap 'tar -C /tmp -czf "$final/diag.tgz" diag; cp "$out"/bench*.txt "$out"/profile.txt "$final"/ 2>/dev/null' EXIT
source .gpu/env.sh
ncu_on=1; variants=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-ncu) ncu_on=0 ;;
    --variant) variants+=("$2|$3"); shift 2 ;;
    *) echo "diag_layer.sh: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/gpu.txt"
echo "commit $(cat .gpu/COMMIT)" >> "$out/gpu.txt"
t0=$(date +%s)
python3 - > "$out/export.txt" 2>&1 <<'PY'
import sys; sys.path.insert(0, '.gpu/shared_bench')
import export_models as e
e.export('bert2l', lambda: e.IdsOnly(e.BertModel(e.BertConfig(num_hidden_layers=2))), e.ids(128, 30000), '/tmp/models', 'opset20')
PY
echo "export $(( $(date +%s) - t0 )) s" >> "$out/gpu.txt"
m=/tmp/models/bert2l-opset20
run() {  # NAME FLAGS...
  local name=$1; shift
  mono-run $m/model.onnx --gpu --dtype fp16 --test-data $m/test_data_set_0 "$@" > "$out/$name.txt" 2>&1
  echo "exit $?" >> "$out/$name.txt"
}
# compiles in parallel first (NVRTC is single-threaded), timed runs afterwards from the cache
(run warm_profile --profile) & (run warm_plain) &
for v in "${variants[@]}"; do (run "warm_${v%%|*}" ${v#*|}) & done
wait
echo "compiles $(( $(date +%s) - t0 )) s" >> "$out/gpu.txt"
run profile --profile
run bench --bench
for v in "${variants[@]}"; do run "bench_${v%%|*}" ${v#*|} --bench; run "profile_${v%%|*}" ${v#*|} --profile; done
./.gpu/bin/device_lib_check --bench-one 5 128 768 768 1 > "$out/gemm.txt" 2>&1
for a in "5 128 768 768 2" "6 128 768 768 1" "6 128 768 768 2" "5 128 3072 768 1" "6 128 3072 768 1" \
         "5 128 768 3072 4" "6 128 768 3072 4" "3 128 768 768 1" "7 128 3072 768 1"; do
  ./.gpu/bin/device_lib_check --bench-one $a >> "$out/gemm.txt" 2>&1
done
echo "bench done $(( $(date +%s) - t0 )) s" >> "$out/gpu.txt"
if [ $ncu_on = 1 ]; then
  ncu --clock-control none --set full --import-source no -k regex:mono --launch-count 1 \
      -o /tmp/rep mono-run $m/model.onnx --gpu --dtype fp16 > "$out/ncu_run.txt" 2>&1
  ncu -i /tmp/rep.ncu-rep --page details > "$out/ncu_details.txt" 2>&1
  ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > "$out/ncu_sass.csv.gz"
  ncu -i /tmp/rep.ncu-rep --page raw --csv 2>&1 | gzip > "$out/ncu_raw.csv.gz"
  echo "ncu done $(( $(date +%s) - t0 )) s" >> "$out/gpu.txt"
fi
