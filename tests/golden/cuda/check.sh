#!/usr/bin/env bash
# The generated kernels of two tiny models, checked in so that every change to the code
# generator shows its effect on the CUDA in the diff: tests/golden/cuda/MODEL.DTYPE/ holds the
# parts of `mono-compile --emit cuda` (split.py: the prelude, one file per group function, the
# buffers and the kernel; concatenated in name order they are the source). Fails when the
# generator prints anything else; --update rewrites them.
#   tests/golden/cuda/check.sh BUILD_DIR [--update]
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
models=$here/../../data/models
status=0
for spec in tiny-bert-opset20:fp16 tiny-resnet-opset17:fp32; do
  model=${spec%%:*} dtype=${spec##*:}
  golden=$here/$model.$dtype
  work=$(mktemp -d)
  "$build/client/mono-compile" "$models/$model/model.onnx" --dtype "$dtype" --emit cuda > "$work/model.cu" 2>/dev/null
  python3 "$here/split.py" "$work/model.cu" "$work/parts"
  if [ "${2:-}" = --update ]; then
    rm -rf "$golden" && cp -r "$work/parts" "$golden"
  elif ! diff -ru "$golden" "$work/parts" > "$work/diff"; then
    echo "generated CUDA of $model ($dtype) differs from $golden/:"
    head -40 "$work/diff"
    echo "(if the change is intended: tests/golden/cuda/check.sh $build --update, and review the diff)"
    status=1
  fi
  rm -rf "$work"
done
exit $status
