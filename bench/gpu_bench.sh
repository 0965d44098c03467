#!/usr/bin/env bash
# The whole GPU run in one command, on the GPU machine (see bench/README.md):
#   bench/gpu_bench.sh [--tiny-only] [--no-baselines] [--only bert-base,...]
# 1. the device-library check, 2. every tiny model through the compiled kernel in fp32 and
# fp16 against its test data, 3. the full models exported (torch.export) and run in fp16
# against PyTorch's float32 outputs, with timings, 4. PyTorch eager / CUDA graph /
# torch.compile timings of the same models in the same call, 5. one table.
# Logs go to $OUT (the device tool brings it back) or /tmp/mono-bench.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/mono-bench}
mkdir -p "$out"
tiny_only=0 baselines=1 only="" skip_tiny=0 skip_devlib=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tiny-only) tiny_only=1 ;;
    --no-baselines) baselines=0 ;;
    --only) only=$2; shift ;;
    --skip-tiny) skip_tiny=1 ;;
    --skip-devlib) skip_devlib=1 ;;
  esac
  shift
done
source .gpu/env.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
echo "commit $(cat .gpu/COMMIT 2>/dev/null || echo unknown)" | tee -a "$out/gpu.txt"

if [ $skip_devlib = 0 ]; then
  echo "== device library check"
  .gpu/bin/device_lib_check 2>&1 | tee "$out/device_lib.txt"
fi

echo "== tiny models through the compiled kernel"
: > "$out/tiny.txt"
[ $skip_tiny = 1 ] || for m in tests/data/models/*/; do
  m=${m%/}
  for d in fp32 fp16; do
    r=$(mono-run "$m/model.onnx" --gpu --dtype "$d" --test-data "$m/test_data_set_0" 2>&1)
    line=$(echo "$r" | grep -E "worst relative error|error:" | tail -1)
    printf "%-24s %s  %s\n" "$(basename "$m")" "$d" "$line" | tee -a "$out/tiny.txt"
    echo "$r" >> "$out/tiny_full.txt"
  done
done
[ $tiny_only = 1 ] && exit 0

echo "== full models"
models=${only:-bert-base,gpt2,vit-base,resnet50}
python3 bench/export_full.py /tmp/models --only "$models" 2>&1 | tail -5
for n in ${models//,/ }; do
  d=/tmp/models/$n-opset20
  mono-run "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench > "$out/mono_$n.log" 2>&1
  tail -4 "$out/mono_$n.log"
done
if [ $baselines = 1 ]; then
  echo "== PyTorch baselines"
  (cd .gpu/shared_bench && python3 baselines.py --only "$models" --json "$out/baselines.json" 2>&1 | tail -6)
fi
echo "== table"
python3 bench/table.py "$out" | tee "$out/table.txt"
