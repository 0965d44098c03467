#!/usr/bin/env bash
# The generated kernels of two tiny models, checked in (tests/golden/cuda/*.cu) so that every
# change to the code generator shows its effect on the CUDA in the diff. Fails when
# `mono-compile --emit cuda` prints anything else; --update rewrites the files.
#   tests/golden/cuda/check.sh BUILD_DIR [--update]
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
models=$here/../../data/models
status=0
for spec in tiny-bert-opset20:fp16 tiny-resnet-opset17:fp32; do
  model=${spec%%:*} dtype=${spec##*:}
  golden=$here/$model.$dtype.cu
  got=$(mktemp)
  "$build/client/mono-compile" "$models/$model/model.onnx" --dtype "$dtype" --emit cuda > "$got" 2>/dev/null
  if [ "${2:-}" = --update ]; then
    cp "$got" "$golden"
  elif ! diff -u "$golden" "$got" > "$got.diff"; then
    echo "generated CUDA of $model ($dtype) differs from $golden:"
    head -40 "$got.diff"
    echo "(if the change is intended: tests/golden/cuda/check.sh $build --update, and review the diff)"
    status=1
  fi
  rm -f "$got" "$got.diff"
done
exit $status
