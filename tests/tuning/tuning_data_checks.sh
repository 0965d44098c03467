#!/usr/bin/env bash
# The fp16 convolution cost model's constants (compiler/codegen/planner/cost_model.cc kConv*)
# are the fit of bench/fit_conv_model.py to resnet50's tasks in the tuning database of
# bench/runs/run58 (--model resnet50-opset20): refits it
# and fails if a constant differs from the fit by more than 1 %.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$root/bench/runs/run58_h200x2_tune_2gpu.tar.xz" run58_h200x2_tune_2gpu/tune.tgz
tar -C "$tmp" -xzf "$tmp/run58_h200x2_tune_2gpu/tune.tgz" mono-tune-logs/mono.db.gz
gunzip "$tmp/mono-tune-logs/mono.db.gz"
python3 "$root/bench/fit_conv_model.py" "$tmp/mono-tune-logs/mono.db" --model resnet50-opset20 --check "$root/compiler/codegen/planner/cost_model.cc"
