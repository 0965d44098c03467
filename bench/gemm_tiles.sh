#!/usr/bin/env bash
# Lone GEMM tile sets on BERT-base shapes, as generated code runs them (A through a tensor map,
# weights packed tile by tile, 16-byte epilogue stores): GemmF16 64x64x128 (CFG 814) against the
# GemmWg (wgmma) variants 815-823 (tests/gpu/gemm_bench.cu; 821-823: 64x64x128 with 6 and 5 stages,
# 64x32x128 with 6, against the default 4), each timed through CUDA graphs of
# 50 launches (weights L2-resident). Writes gemm_tiles.txt to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/tiles-out}; mkdir -p "$out"
source .gpu/env.sh
{
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
  echo "commit $(cat .gpu/COMMIT 2>/dev/null || echo unknown)"
  for shape in "128 3072 768 1" "128 2304 768 1" "128 768 768 1" "128 768 768 2" "128 768 3072 4" "128 768 3072 2" "197 3072 768 1"; do
    for cfg in ${CFGS:-814 815 816 817 818 819 820 821 822 823}; do timeout 60 .gpu/bin/device_lib_check --bench-one $cfg $shape; done
  done
} > "$out/gemm_tiles.txt" 2>&1
grep bench "$out/gemm_tiles.txt"
