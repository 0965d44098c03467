#!/usr/bin/env bash
# The tuning code version (kSignatureVersion, compiler/tuning/signature.h) must change whenever
# the code Mono generates changes: stored measurements describe the code they timed. This
# hashes what decides that code — the device library (compiler/codegen/device/*.cuh) and the
# checked-in generated kernels (tests/golden/cuda/: the generated_cuda test fails unless they are
# exactly what the emitter prints, so an emitter change changes them) — and compares it with
# tests/tuning/code_version.txt ("VERSION HASH"). A changed hash under the same version fails:
# bump kSignatureVersion (and say why beside it), then record the new pair with
#   tests/tuning/code_version.sh --update
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
record=$src/tests/tuning/code_version.txt
version=$(sed -n 's/^constexpr int kSignatureVersion = \([0-9]*\);.*/\1/p' "$src/compiler/tuning/signature.h")
[ -n "$version" ] || { echo "FAIL: kSignatureVersion not found in compiler/tuning/signature.h"; exit 1; }
hash=$(cd "$src" && { find compiler/codegen/device -name "*.cuh"; find tests/golden/cuda -mindepth 2 -type f; } |
       LC_ALL=C sort | while read -r f; do echo "== $f"; cat "$f"; done | sha256sum | cut -c1-64)
if [ "${1:-}" = --update ]; then
  echo "$version $hash" > "$record"
  echo "recorded: version $version, code $hash"
  exit 0
fi
read -r recorded_version recorded_hash < "$record"
if [ "$hash" = "$recorded_hash" ] && [ "$version" = "$recorded_version" ]; then
  echo "ok: code version $version, generated code unchanged ($hash)"
  exit 0
fi
if [ "$hash" != "$recorded_hash" ] && [ "$version" = "$recorded_version" ]; then
  echo "FAIL: the generated code changed (device library or emitted CUDA) but kSignatureVersion is still $version:"
  echo "      bump it in compiler/tuning/signature.h (say why there), then run tests/tuning/code_version.sh --update"
  exit 1
fi
echo "FAIL: kSignatureVersion is $version but tests/tuning/code_version.txt records version $recorded_version:"
echo "      run tests/tuning/code_version.sh --update to record the new version with its code"
exit 1
