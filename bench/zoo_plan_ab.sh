#!/usr/bin/env bash
# Which full-size zoo models a planner change touches, and what it does to their speed, on the GPU
# machine in one call (see bench/README.md):
#   bench/zoo_plan_ab.sh "NAME=VALUE ..."
# The environment assignments select the other variant (an A/B switch of the planner). Exports the
# full-size zoo (bench/export_zoo.py --full, unless an earlier call on this machine did), writes
# every model's fp16 plan with and without the assignments, and times (mono-run --bench, one
# model at a time, both variants back to back) only the models whose GEMM tiles differ. Writes
# to $OUT: zoo_plan_ab.txt, and zoo_plans.tgz with plans/NAME.txt, plans/NAME.ab.txt and
# fragments/NAME.json (the tuning fragment, for planning on a machine without the models:
# build_time --plan --simplify).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/zoo_plan_ab.sh \"NAME=VALUE ...\"" >&2; exit 2; }
read -r -a assignments <<< "$1"
out=${OUT:-/tmp/zoo-plan-ab}; work=$(mktemp -d); mkdir -p "$out" "$work/plans" "$work/fragments"
source .gpu/env.sh
marker=/tmp/zoo/.exported-full
if [ ! -f "$marker" ]; then
  python3 bench/export_zoo.py /tmp/zoo --full > "$out/zoo_export.txt" 2>&1 && touch "$marker"
fi
tiles() { grep -oE "tile [^,]*, warps [^,]*, stages [0-9]+, split-k [0-9]+(, [a-z0-9 ]+)?" "$1"; }
{
  echo "variant: ${assignments[*]}"
  changed=()
  for d in /tmp/zoo/*/; do
    d=${d%/}; n=$(basename "$d")
    case "$n" in tiny-*) continue ;; esac
    [ -f "$d/model.onnx" ] || continue
    mono-compile "$d/model.onnx" --dtype fp16 --emit plan > "$work/plans/$n.txt" 2>&1
    env "${assignments[@]}" mono-compile "$d/model.onnx" --dtype fp16 --emit plan > "$work/plans/$n.ab.txt" 2>&1
    mono-compile "$d/model.onnx" --dtype fp16 --emit fragment > "$work/fragments/$n.json" 2>/dev/null
    if diff -q <(tiles "$work/plans/$n.txt") <(tiles "$work/plans/$n.ab.txt") > /dev/null; then
      echo "$n: same GEMM tiles"
    else
      echo "$n: GEMM tiles differ"; changed+=("$n")
    fi
  done
  for n in ${changed[@]+"${changed[@]}"}; do
    d=/tmp/zoo/$n
    for v in default ab; do
      if [ $v = default ]; then run=(mono-run); else run=(env "${assignments[@]}" mono-run); fi
      timeout 300 "${run[@]}" "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench 2>&1 |
        grep -E "bench:|worst relative|error" | sed "s/^/$n $v: /"
    done
  done
} 2>&1 | tee "$out/zoo_plan_ab.txt"
(cd "$work" && tar -czf "$out/zoo_plans.tgz" plans fragments)
