#!/usr/bin/env bash
# Builds what the GPU run needs and bundles it into .gpu/ (carried by the device tool):
# mono-run, mono-compile, the device-library check, and a copy of shared/bench. PROBE=1 also
# builds the probe build of the check (device_lib_probe, for bench/gemm_probe.sh); it is left out
# by default because the device tool carries at most 64 MiB in all.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j "$(nproc)" --target mono-run mono-compile mono-tuner-server mono-worker mono-submit
mkdir -p .gpu/bin
/usr/local/cuda/bin/nvcc -arch=sm_90 -O2 -I. -std=c++17 tests/gpu/device_lib_check.cu -o build/device_lib_check &
check_pid=$!
probe=()
if [ "${PROBE:-0}" = 1 ]; then
  /usr/local/cuda/bin/nvcc -arch=sm_90 -O2 -I. -std=c++17 -DMONO_PROBE_BUILD tests/gpu/device_lib_check.cu -o build/device_lib_probe
  probe=(build/device_lib_probe)
fi
wait $check_pid  # fails the script if the check did not build
rm -rf .gpu/bin
../shared/tools/device-bundle .gpu build/client/mono-run build/client/mono-compile build/client/mono-submit \
  build/tuner_server/mono-tuner-server build/gpu_worker/mono-worker build/device_lib_check "${probe[@]}"
strip --strip-debug .gpu/bin/* 2>/dev/null || true  # the device tool carries at most 64 MiB
rm -rf .gpu/shared_bench && cp -r ../shared/bench .gpu/shared_bench
git rev-parse --short HEAD > .gpu/COMMIT
grep -q '^/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
du -sh .gpu
