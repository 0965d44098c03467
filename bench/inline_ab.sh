#!/usr/bin/env bash
# A/B on the GPU machine: resnet50 (56 groups) with group functions inlined vs kept out of line.
source .gpu/env.sh
python3 bench/export_full.py /tmp/models --only resnet50 > $OUT/export.txt 2>&1
d=/tmp/models/resnet50-opset20
for v in on off; do
  ( s=$(date +%s); mono-run $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0 --set inline=$v > $OUT/check_$v.log 2>&1; echo "wall $(( $(date +%s) - s )) s" >> $OUT/check_$v.log ) &
done
wait
for r in 1 2; do for v in on off; do
  mono-run $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0 --set inline=$v --bench > $OUT/bench_${v}_$r.log 2>&1
done; done
grep -h -E "compiled|worst|wall|bench:" $OUT/*.log
