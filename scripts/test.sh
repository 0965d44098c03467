#!/usr/bin/env bash
# Builds and runs every test: unit, golden pass tests, ONNX conformance, tiny models, error
# handling through the tools, and the damaged-model fuzz test — the latter again under
# AddressSanitizer and UBSan — then the libFuzzer harnesses for a bounded time (tests/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
./scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 900)

echo
echo "== fuzz test under AddressSanitizer + UBSan"
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DMONO_SANITIZE=ON
fi
cmake --build build-asan -j "$(nproc)" --target fuzz_models_test bad_input_test mono-compile mono-run
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:protect_shadow_gap=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ./build-asan/tests/fuzz_models_test
ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ./build-asan/tests/bad_input_test

echo
echo "== coverage-guided fuzzing (libFuzzer, clang, ASan + UBSan): 30 s per harness"
tests/fuzz/run.sh 30
