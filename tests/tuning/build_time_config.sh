#!/usr/bin/env bash
# bench/build_time --config FILE (a whole-kernel job's configuration: a context and schedules by
# group signature) on tiny-resnet's fragment: a schedule keyed by the signature mono-compile's
# tuning space names for the stem convolution is taken (that group tuned, with the configuration's
# tile); a configuration without schedules tunes nothing; a configuration missing "schedules" is
# refused in one line with a non-zero exit.
# Usage: build_time_config.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: build_time_config.sh BUILD_DIR}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "build_time_config: $*" >&2; exit 1; }
model="$root/tests/data/models/tiny-resnet-opset20/model.onnx"
"$build/client/mono-compile" "$model" --dtype fp16 --emit fragment > "$tmp/fragment.json"
"$build/client/mono-compile" "$model" --dtype fp16 --emit plan > "$tmp/plan.txt"
sig=$(grep -m1 -o 'signature [0-9a-f]* \[conv-gemm\] x1 groups: Conv + Relu -> f16\[1,16,16,16\]' "$tmp/plan.txt" | cut -d' ' -f2)
[ -n "$sig" ] || fail "no stem convolution signature in mono-compile's tuning space"
# Its default is 32x32x64 (8 items); the configuration asks for 64x32x64 (4 items).
grep -A1 "node_Conv_96.nhwc (Conv)" "$tmp/plan.txt" | grep -q "8 work items, tile 32x32x64" || fail "the stem's default tile moved: update this test"
context='{"threads": 256, "blocks_per_sm": 1, "smem_bytes": 232448, "register_cap": 255}'
cat > "$tmp/tuned.json" <<EOF
{"context": $context, "schedules": {"$sig": {"kind": "conv-gemm", "bm": 64, "bn": 32, "bk": 64, "stages": 4,
 "warps_m": 2, "warps_n": 4, "split_k": 1}}}
EOF
bt="$build/bench/build_time"
"$bt" "$tmp/fragment.json" --plan --config "$tmp/tuned.json" > "$tmp/tuned.txt"
grep -q "^schedules: 1 tuned" "$tmp/tuned.txt" || fail "the configuration's schedule was not taken: $(grep '^schedules' "$tmp/tuned.txt")"
grep -A1 "node_Conv_96.nhwc (Conv)" "$tmp/tuned.txt" | grep -q "4 work items, tile 64x32x64.*, tuned" ||
  fail "the stem did not get the configuration's 64x32x64 tile: $(grep -A1 'node_Conv_96.nhwc (Conv)' "$tmp/tuned.txt")"
echo "{\"context\": $context, \"schedules\": {}}" > "$tmp/default.json"
"$bt" "$tmp/fragment.json" --plan --config "$tmp/default.json" > "$tmp/default.txt"
grep -q "^schedules: 0 tuned" "$tmp/default.txt" || fail "an empty configuration tuned something: $(grep '^schedules' "$tmp/default.txt")"
echo "{\"context\": $context}" > "$tmp/bad.json"
if "$bt" "$tmp/fragment.json" --plan --config "$tmp/bad.json" > "$tmp/bad.txt" 2>&1; then fail "a configuration without schedules was taken"; fi
grep -q 'needs "context" and "schedules"' "$tmp/bad.txt" || fail "unclear error for a bad configuration: $(cat "$tmp/bad.txt")"
echo "build_time_config: ok"
