#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is needed, build, then compile a
# shipped tiny model to IR and run every shipped model on the CPU reference against its test
# data.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh

model=tests/data/models/tiny-bert-opset20
echo
echo "== mono-compile $model/model.onnx --emit ir --stats"
./build/client/mono-compile "$model/model.onnx" --emit ir --stats | grep -v '^  const' | head -40
echo "   (constants omitted above; the full IR has them)"
echo
status=0
for m in tests/data/models/*/; do
  m=${m%/}
  echo "== mono-run $m/model.onnx --cpu --test-data $m/test_data_set_0"
  ./build/client/mono-run "$m/model.onnx" --cpu --test-data "$m/test_data_set_0" || status=1
done
exit $status
