#!/usr/bin/env bash
# Where a GemmF16 tile's time goes, on BERT-base GEMM shapes: the probe build of the device-library
# check (device_lib_probe) times each tile config through CUDA graphs and stamps clock64() at the
# tile's phases (prologue, fill, per-k-tile cadence, drain, epilogue); PyTorch's cuBLAS GEMMs of the
# same shapes are timed the same way for comparison. Writes probe.txt and cublas.txt to $OUT.
#   bench/gemm_probe.sh            (CFGS="5 205 ..." and SHAPES="M N K SPLITS,..." override the lists;
#                                   CFG + 200: removed, see tests/gpu/gemm_bench.cu)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/probe-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$out/probe.txt"
echo "commit $(cat .gpu/COMMIT)" >> "$out/probe.txt"
IFS=, read -ra shapes <<< "${SHAPES:-128 768 768 1,128 2304 768 1,128 3072 768 1,128 768 3072 4,128 4224 768 1}"
for shape in "${shapes[@]}"; do
  for cfg in ${CFGS:-5 6 2 9 10 11 12}; do
    ./.gpu/bin/device_lib_probe --bench-one $cfg $shape >> "$out/probe.txt" 2>&1
  done
done
python3 - > "$out/cublas.txt" 2>&1 <<'PY'
import torch
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
for (M, N, K) in [(128, 768, 768), (128, 2304, 768), (128, 3072, 768), (128, 768, 3072), (128, 4224, 768)]:
    a = torch.randn(M, K, device='cuda', dtype=torch.half)
    w = torch.randn(N, K, device='cuda', dtype=torch.half)  # nn.Linear layout
    c = torch.empty(M, N, device='cuda', dtype=torch.half)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(20): torch.nn.functional.linear(a, w, out=c)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(50): torch.nn.functional.linear(a, w, out=c)
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(4): g.replay()
    e1.record(); torch.cuda.synchronize()
    us = e0.elapsed_time(e1) * 1000 / 200
    print(f"cublas linear M={M} N={N} K={K}: {us:.2f} us  {2*M*N*K/us/1e6:.1f} TFLOP/s")
PY
cat "$out/probe.txt" "$out/cublas.txt"
