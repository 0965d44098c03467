#!/usr/bin/env bash
# The wgmma GEMM core (GemmWg) against mma.sync (GemmF16) in one GPU call: the device-library
# check (GemmWg cases included), lone tile sets on BERT-base shapes (--bench-one: CFG 814 is
# GemmF16 64x64x128 as generated code runs it, 815-820 the GemmWg variants), every tiny model
# with --set wgmma=on (fp32 and fp16), then the full models with and without it beside PyTorch
# (bench/gpu_bench.sh --ab wg). Writes wg_tiles.txt and gpu_bench's files to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/wg-out}; mkdir -p "$out"
source .gpu/env.sh
{
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
  for shape in "128 3072 768 1" "128 2304 768 1" "128 768 768 1" "128 768 768 2" "128 768 3072 4" "128 768 3072 2" "197 3072 768 1"; do
    for cfg in 814 815 816 817 818 819 820; do timeout 60 .gpu/bin/device_lib_check --bench-one $cfg $shape; done
  done
} > "$out/wg_tiles.txt" 2>&1
grep -E "bench GemmWg<64,64,128|bench GemmF16" "$out/wg_tiles.txt" | head -20
TINY_FLAGS="--set wgmma=on" bench/gpu_bench.sh --ab wg "--set wgmma=on" "$@"
