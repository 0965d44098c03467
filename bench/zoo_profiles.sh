#!/usr/bin/env bash
# Per-stage profiles of exported zoo models, for each variant, in one archive (the device tool
# brings back at most 8 files). On the GPU machine, after bench/gpu_bench.sh --zoo full:
#   bench/zoo_profiles.sh MODEL[,MODEL...] [NAME "ENV=1 or --flags"]...
# writes $OUT/profiles.tgz: profiles/MODEL.txt and profiles/MODEL.NAME.txt (mono-run --profile, fp16).
set -uo pipefail
cd "$(dirname "$0")/.."
source .gpu/env.sh
out=${OUT:-/tmp/mono-bench}
dir=/tmp/profiles; rm -rf "$dir"; mkdir -p "$dir" "$out"
models=$1; shift
variants=("base|")
while [ $# -ge 2 ]; do variants+=("$1|$2"); shift 2; done
for n in ${models//,/ }; do
  d=/tmp/zoo/$n-opset20
  for v in "${variants[@]}"; do
    name=${v%%|*} flags=${v#*|} env=() args=()
    for a in $flags; do if [[ $a =~ ^[A-Z_][A-Z0-9_]*= ]]; then env+=("$a"); else args+=("$a"); fi; done
    file=$dir/$n.txt; [ "$name" = base ] || file=$dir/$n.$name.txt
    timeout 300 env "${env[@]}" mono-run "$d/model.onnx" --gpu --dtype fp16 --profile "${args[@]}" > "$file" 2>&1
    grep -h '^total' "$file" | sed "s/^/$n $name: /"
  done
done
tar -C /tmp -czf "$out/profiles.tgz" profiles
