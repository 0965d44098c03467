#!/usr/bin/env bash
# Builds what the GPU run needs and bundles it into .gpu/ (carried by the device tool):
# mono-run, mono-compile, bench/build_time, the device-library check, the GPU conformance runner with the node
# tests it selects (node_tests.tar.xz), the random differential tester, and a copy of shared/bench. PROBE=1 also
# builds the probe build of the check (device_lib_probe, for bench/gemm_probe.sh); it is left out
# by default because the device tool carries at most 64 MiB in all. SERVICE=1 also bundles the
# service (mono-tuner-server, mono-worker, mono-submit and their gRPC libraries, and
# bench/tuning_jobs_check) for a run of the tuning service on the GPU; the GPU check does not need it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j "$(nproc)" --target mono-run mono-compile mono-tuner-server mono-worker mono-submit \
  gpu_conformance difftest tuning_jobs_check build_time
mkdir -p .gpu/bin
check_src=(tests/gpu/device_lib_check.cu tests/gpu/gemm_checks.cu tests/gpu/row_barrier_checks.cu tests/gpu/gemm_bench.cu
           tests/gpu/attention_checks.cu tests/gpu/fusion_probe.cu)
# nvcc takes minutes here: skip it when the check is newer than every project file it is built
# from (its sources and what they include, as nvcc -MM lists them: about 2 s).
deps=$(for f in "${check_src[@]}"; do /usr/local/cuda/bin/nvcc -MM -gencode=arch=compute_90a,code=sm_90a -I. -std=c++17 "$f"; done |
       tr ' \\' '\n\n' | grep -E '^(\./)?(compiler|tests)/' | sort -u)
stale=$(find $deps -newer build/device_lib_check 2>/dev/null | head -1 || true)
if [ -f build/device_lib_check ] && [ -z "$stale" ]; then
  true &
else
  /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -I. -std=c++17 "${check_src[@]}" -o build/device_lib_check &
fi
check_pid=$!
probe=()
if [ "${PROBE:-0}" = 1 ]; then
  /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -I. -std=c++17 -DMONO_PROBE_BUILD "${check_src[@]}" -o build/device_lib_probe
  probe=(build/device_lib_probe)
fi
wait $check_pid  # fails the script if the check did not build
rm -rf .gpu/bin
service=()
[ "${SERVICE:-0}" = 1 ] && service=(build/client/mono-submit build/tuner_server/mono-tuner-server build/gpu_worker/mono-worker
                                     build/bench/tuning_jobs_check)
rm -rf .gpu/lib
../shared/tools/device-bundle .gpu build/client/mono-run build/client/mono-compile build/device_lib_check \
  build/tests/gpu_conformance build/tests/difftest build/bench/build_time "${service[@]}" "${probe[@]}"
strip --strip-debug .gpu/bin/* 2>/dev/null || true  # the device tool carries at most 64 MiB
rm -rf .gpu/shared_bench && cp -r ../shared/bench .gpu/shared_bench
build/tests/gpu_conformance --list | tar -C /usr/share/libonnx-testdata/data/node -cJf .gpu/node_tests.tar.xz -T -
git rev-parse --short HEAD > .gpu/COMMIT
grep -q '^/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
du -sh .gpu
