#!/usr/bin/env bash
# What the tuning database of bench/runs/run58 (2 x H200, four models) says about the code:
# - the fp16 convolution cost model's constants (cost_model.cc kConv*) are the fit of
#   bench/fit_conv_model.py to resnet50's tasks (--model resnet50-opset20): fails if one
#   differs from the fit by more than 1 %;
# - the tuning space's prune_factor (space.h) keeps every task's measured best
#   (bench/prune_check.py).
# And what three databases measured in full on the H100 say (bert-base, run54; resnet50, run119
# and run154): the space's max_candidates (space.h) keeps at least 95 % of the gain full tuning
# found (bench/topk_check.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$root/bench/runs/run58_h200x2_tune_2gpu.tar.xz" run58_h200x2_tune_2gpu/tune.tgz
tar -C "$tmp" -xzf "$tmp/run58_h200x2_tune_2gpu/tune.tgz" mono-tune-logs/mono.db.gz
gunzip "$tmp/mono-tune-logs/mono.db.gz"
python3 "$root/bench/fit_conv_model.py" "$tmp/mono-tune-logs/mono.db" --model resnet50-opset20 --check "$root/compiler/codegen/planner/cost_model.cc"
python3 "$root/bench/prune_check.py" "$tmp/mono-tune-logs/mono.db" --space-h "$root/compiler/tuning/space.h" \
  --cost-model "$root/compiler/codegen/planner/cost_model.cc"
tar -C "$tmp" -xJf "$root/bench/runs/run54_h100_tune_bert.tar.xz" run54_h100_tune_bert/mono-tune-logs/mono.db.gz
gunzip "$tmp/run54_h100_tune_bert/mono-tune-logs/mono.db.gz"
tar -C "$tmp" -xJf "$root/bench/runs/run119_h100_tune_resnet50.tar.xz" run119_h100_tune_resnet50/mono.db.xz
xz -d "$tmp/run119_h100_tune_resnet50/mono.db.xz"
tar -C "$tmp" -xJf "$root/bench/runs/run154_h100_tune_resnet50.tar.xz" run154_h100_tune_resnet50/tune.tgz
mkdir "$tmp/run154" && tar -C "$tmp/run154" -xzf "$tmp/run154_h100_tune_resnet50/tune.tgz" mono-tune-logs/mono.db.gz
gunzip "$tmp/run154/mono-tune-logs/mono.db.gz"
python3 "$root/bench/topk_check.py" --space-h "$root/compiler/tuning/space.h" "$tmp/run54_h100_tune_bert/mono-tune-logs/mono.db" \
  "$tmp/run119_h100_tune_resnet50/mono.db" "$tmp/run154/mono-tune-logs/mono.db"
