#!/usr/bin/env bash
# What the tuning database of bench/runs/run58 (2 x H200, four models) says about the code:
# - the fp16 convolution cost model's constants (cost_model.cc kConv*) are the fit of
#   bench/fit_conv_model.py to resnet50's tasks (--model resnet50-opset20): fails if one
#   differs from the fit by more than 1 %;
# - the tuning space's prune_factor (space.h) keeps every task's measured best
#   (bench/prune_check.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$root/bench/runs/run58_h200x2_tune_2gpu.tar.xz" run58_h200x2_tune_2gpu/tune.tgz
tar -C "$tmp" -xzf "$tmp/run58_h200x2_tune_2gpu/tune.tgz" mono-tune-logs/mono.db.gz
gunzip "$tmp/mono-tune-logs/mono.db.gz"
python3 "$root/bench/fit_conv_model.py" "$tmp/mono-tune-logs/mono.db" --model resnet50-opset20 --check "$root/compiler/codegen/planner/cost_model.cc"
python3 "$root/bench/prune_check.py" "$tmp/mono-tune-logs/mono.db" --space-h "$root/compiler/tuning/space.h" \
  --cost-model "$root/compiler/codegen/planner/cost_model.cc"
