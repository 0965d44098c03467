#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan, in build-fuzz/) and runs each for a
# bounded time on its corpus (tests/fuzz/corpus/NAME, kept in the repository; new inputs that
# reach new code are added there with --grow).
#   tests/fuzz/run.sh [SECONDS_EACH] [--grow]      (CI: 30 s each; on demand: hours)
# Exits 1 on a finding, with the crashing input in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30} grow=0
[ "${2:-}" = --grow ] && grow=1
if [ ! -f build-fuzz/build.ninja ]; then
  CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DMONO_FUZZ=ON -DMONO_BUILD_TESTS=OFF > /dev/null
fi
targets=(fuzz_onnx_loader fuzz_ir_parser fuzz_manifest fuzz_requests)
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"
mkdir -p build-fuzz/findings
status=0
for t in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/${t#fuzz_}
  work=build-fuzz/corpus/${t#fuzz_}
  mkdir -p "$corpus" "$work"
  dirs=("$work" "$corpus")
  [ $grow = 1 ] && dirs=("$corpus")
  echo "== $t: ${seconds} s"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:protect_shadow_gap=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "build-fuzz/tests/fuzz/$t" "${dirs[@]}" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 -max_len=65536 \
      -artifact_prefix="build-fuzz/findings/$t-" -print_final_stats=1 > "build-fuzz/$t.log" 2>&1; then
    echo "FINDING in $t:"; tail -40 "build-fuzz/$t.log"; status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov: " "build-fuzz/$t.log" | tail -3
done
exit $status
