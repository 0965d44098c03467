#!/usr/bin/env bash
# The whole GPU run in one command, on the GPU machine (see bench/README.md):
#   bench/gpu_bench.sh [--tiny-only] [--no-baselines] [--only bert-base,...] [--skip-tiny]
#                      [--skip-devlib] [--profile] [--zoo tiny|all|full] [--zoo-time] [--correctness N]
#                      [--ab NAME "FLAGS"]...    (--only none: the zoo alone)
# 1. the device-library check, 2. every tiny model through the compiled kernel in fp32 and
# fp16 against its test data, 3. the full models exported (torch.export) and run in fp16
# against PyTorch's float32 outputs, with timings, 4. PyTorch eager / CUDA graph /
# torch.compile timings of the same models in the same call, 5. one table.
# --profile adds a per-stage profile of each full model. --ab NAME "FLAGS" (e.g.
# --ab bpsm2 "--set blocks-per-sm=2") also checks and times every full model
# built with the extra mono-run FLAGS (NAME=VALUE among them: an environment variable) (logs check_NAME_MODEL, NAME_MODEL, profile_NAME_MODEL),
# and with --zoo-time every zoo model too (zootime_NAME_MODEL, checked and timed).
# The kernel plan of every full model goes to plan_MODEL.txt. --zoo tiny|all also exports the tiny
# (or all) models of bench/export_zoo.py, checks each on the GPU in fp32 and fp16 against PyTorch's outputs, and
# brings the tiny ones back in $OUT/zoo.tgz (they become test data) with the ops of all
# (zoo_census.json in the logs); --zoo full exports and checks only the full-size ones. A model already
# exported by an earlier call on the same warm machine is not exported again. --zoo-time times every
# full-size zoo model in fp16 (mono-run --bench, one at a time) and in PyTorch (bench/zoo_baselines.py:
# torch.compile, unless --no-baselines; ZOO_MODES=eager,compile adds eager), and prints the zoo table (bench/zoo_table.py).
# ZOO_DTYPES (default "fp32 fp16") picks the dtypes the zoo is checked in; ZOO_ONLY=NAME,... limits
# the zoo (export, checks and timings) to those models of export_zoo.py; ZOO_TIME_ONLY=NAME,... times only
# those (--zoo-time), ZOO_AB=NAME,... only those --ab variants on the zoo, ZOO_REPEAT=N times each
# N times (the default and its variants in turn, a process each). TINY_FLAGS adds mono-run
# flags to every tiny-model run (e.g. "--set blocks-per-sm=2"). --correctness N adds,
# after the tiny models (each also run with --verify against the CPU reference): the GPU
# conformance (every selected ONNX node test in fp32 and fp16), N random graphs of the
# differential tester in both dtypes (failures shrunk into difftest_failures/), its saved
# regressions, and mono-compile --out's verification record.
#
# RUN_TIMEOUT (default 400) caps each mono-run in seconds. BASELINE_MODES (default
# eager,cudagraph,compile) picks the PyTorch modes timed for the full models (compile alone when device time is short).
# NVRTC compiles are single-threaded, so every compile runs first, in parallel on all cores
# (correctness checks included: the GPU time-slices between processes, which is fine for
# correctness); the timed runs come afterwards, one at a time, from the cubin cache.
# Logs go to $OUT (the device tool brings it back) or /tmp/mono-bench; $OUT gets only
# table.txt, summary.txt and logs.tgz (the tool brings back at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/mono-bench}
logs=/tmp/mono-bench-logs
rm -rf "$logs"; mkdir -p "$out" "$logs"
tiny_only=0 baselines=1 only="" skip_tiny=0 skip_devlib=0 profile=0 zoo="" zoo_time=0 correctness=0 ab=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tiny-only) tiny_only=1 ;;
    --no-baselines) baselines=0 ;;
    --only) only=$2; shift ;;
    --skip-tiny) skip_tiny=1 ;;
    --skip-devlib) skip_devlib=1 ;;
    --profile) profile=1 ;;
    --zoo) zoo=$2; shift ;;
    --zoo-time) zoo_time=1 ;;
    --correctness) correctness=$2; shift ;;
    --ab) ab+=("$2|$3"); shift 2 ;;
    *) echo "gpu_bench.sh: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
case "${ZOO_REPEAT:-1}" in ''|*[!0-9]*|0|0*) echo "gpu_bench.sh: ZOO_REPEAT must be a positive number, not '${ZOO_REPEAT}'" >&2; exit 2 ;; esac
source .gpu/env.sh
export PYTHONUNBUFFERED=1
jobs=$(nproc)
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$logs/summary.txt"; }
finish() {
  python3 bench/table.py "$logs" > "$logs/table.txt" 2>&1
  cp "$logs/table.txt" "$logs/summary.txt" "$out/" 2>/dev/null
  tar -C /tmp -czf "$out/logs.tgz" mono-bench-logs
}
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv | tee "$logs/gpu.txt"
echo "commit $(cat .gpu/COMMIT 2>/dev/null || echo unknown)" | tee -a "$logs/gpu.txt"

# one_run LOGNAME ARGS...: mono-run with a time limit; logs its wall time and exit status. An
# argument NAME=VALUE (upper case, e.g. from --ab) goes to mono-run's environment instead.
one_run() {
  local name=$1; shift
  local env=() args=() a
  for a in "$@"; do if [[ $a =~ ^[A-Z_][A-Z0-9_]*= ]]; then env+=("$a"); else args+=("$a"); fi; done
  local s=$(date +%s%N)
  timeout "${RUN_TIMEOUT:-400}" env "${env[@]}" mono-run "${args[@]}" > "$logs/$name.log" 2>&1
  local rc=$?
  echo "wall $(( ($(date +%s%N) - s) / 1000000 )) ms, exit $rc" >> "$logs/$name.log"
}
export -f one_run; export logs

if [ $skip_devlib = 0 ]; then
  stamp "device library check"
  .gpu/bin/device_lib_check > "$logs/device_lib.txt" 2>&1; tail -2 "$logs/device_lib.txt"
fi

models=${only:-bert-base,gpt2,vit-base,resnet50}
[ "$only" = none ] && models=""  # --only none: no full model (a zoo-only call)
if [ $tiny_only = 0 ]; then
  missing=0
  for n in ${models//,/ }; do [ -f /tmp/models/$n-opset20/test_data_set_0/output_0.pb ] || missing=1; done
  if [ $missing = 1 ]; then
    stamp "exporting the full models (background)"
    (python3 bench/export_full.py /tmp/models --only "$models" > "$logs/export.txt" 2>&1; echo "export exit $?" >> "$logs/export.txt") &
  else  # a warm machine that exported them in an earlier call
    (echo "full models already in /tmp/models (exported by an earlier call on this machine)"; echo "export exit 0") > "$logs/export.txt" &
  fi
  export_pid=$!
fi

if [ -n "$zoo" ]; then
  stamp "zoo ($zoo): export, then every model in fp32 and fp16 against PyTorch"
  zoo_flags=(); [ "$zoo" = tiny ] && zoo_flags=(--tiny); [ "$zoo" = full ] && zoo_flags=(--full)
  marker="/tmp/zoo/.exported-$zoo${ZOO_ONLY:+-${ZOO_ONLY//,/-}}"
  if [ -f "$marker" ]; then
    echo "zoo ($zoo) already in /tmp/zoo (exported by an earlier call on this machine)" > "$logs/zoo_export.txt"
  else
    python3 bench/export_zoo.py /tmp/zoo "${zoo_flags[@]}" ${ZOO_ONLY:+--only "$ZOO_ONLY"} --census "$logs/zoo_census.json" > "$logs/zoo_export.txt" 2>&1
    touch "$marker"
  fi
  cat "$logs/zoo_export.txt"
  for m in /tmp/zoo/*/; do
    m=${m%/}
    case "$zoo:$(basename "$m")" in tiny:tiny-*|all:*) ;; full:tiny-*) continue ;; full:*) ;; *) continue ;; esac
    if [ -n "${ZOO_ONLY:-}" ]; then  # the listed models only
      n=$(basename "$m"); n=${n%-opset*}
      case ",$ZOO_ONLY," in *",$n,"*) ;; *) continue ;; esac
    fi
    for d in ${ZOO_DTYPES:-fp32 fp16}; do
      echo "zoo_$(basename "$m")_$d $m/model.onnx --gpu --dtype $d --test-data $m/test_data_set_0"
    done
  done | xargs -P "$jobs" -L 1 bash -c 'one_run "$@"' _
  for f in "$logs"/zoo_*_fp*.log; do
    printf "%-40s %s\n" "$(basename "$f" .log)" "$(grep -E "worst relative error|error:" "$f" | tail -1)"
  done | tee "$logs/zoo.txt"
  [ "$zoo" != full ] && (cd /tmp && tar -czf "$out/zoo.tgz" zoo/tiny-*)
fi
if [ $zoo_time = 1 ]; then
  full_zoo=${ZOO_TIME_ONLY:-${ZOO_ONLY:-$(python3 -c "import sys; sys.path.insert(0, 'bench'); import export_zoo as z; print(','.join(n for n, m in z.MODELS.items() if m[2]))")}}
  # The full models' export runs PyTorch on this GPU: timings wait for it (run159's zoo timings
  # overlapped it, resnet18 158.8 against 141.3 us a call earlier).
  [ -n "${export_pid:-}" ] && wait "$export_pid"
  stamp "zoo: Mono fp16 timed, one model at a time"
  for n in ${full_zoo//,/ }; do
    d=/tmp/zoo/$n-opset20; [ -f "$d/model.onnx" ] || d=/tmp/zoo/$n-opset17  # the older exporter's, where the default failed
    [ -f "$d/model.onnx" ] || continue
    # ZOO_REPEAT=N: N rounds of the default and its variants, each a process of its own, in turn
    # (logs _rK from the second round; zoo_table.py takes the median): one process can time the
    # same kernel 4 % away from the next (vit-b-16, run240), so an A/B of a few per cent needs several.
    for r in $(seq 1 "${ZOO_REPEAT:-1}"); do
      sfx="" tag=""
      [ "$r" -gt 1 ] && sfx="_r$r" tag="r$r "
      one_run "zootime_$n$sfx" "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench
      grep -h "bench:" "$logs/zootime_$n$sfx.log" 2>/dev/null | sed "s/^/$tag/"
      for v in "${ab[@]}"; do  # --ab variants too, right after (logs zootime_NAME_MODEL)
        [ -n "${ZOO_AB:-}" ] && case ",$ZOO_AB," in *",${v%%|*},"*) ;; *) continue ;; esac
        one_run "zootime_${v%%|*}_$n$sfx" "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench ${v#*|}
        grep -h "bench:\|error" "$logs/zootime_${v%%|*}_$n$sfx.log" 2>/dev/null | sed "s/^/$tag${v%%|*}: /"
      done
    done
  done
  if [ $baselines = 1 ]; then  # --no-baselines: no PyTorch here either (an A/B of Mono variants)
    stamp "zoo: PyTorch eager and torch.compile"
    timeout 300 python3 bench/zoo_baselines.py --only "$full_zoo" --modes "${ZOO_MODES:-compile}" --json "$logs/zoo_baselines.json" > "$logs/zoo_baselines.txt" 2>&1
    echo "exit $?" >> "$logs/zoo_baselines.txt"; tail -20 "$logs/zoo_baselines.txt"
  fi
  python3 bench/zoo_table.py "$logs" | tee "$logs/zoo_table.txt"; cp "$logs/zoo_table.txt" "$out/"
fi

if [ $skip_tiny = 0 ]; then
  stamp "tiny models, fp32 and fp16, $jobs in parallel"
  for m in tests/data/models/*/; do
    m=${m%/}; for d in fp32 fp16; do
      # no trailing blank: xargs -L joins a line that ends in one with the next
      echo "tiny_$(basename "$m")_$d $m/model.onnx --gpu --dtype $d --test-data $m/test_data_set_0 --verify${TINY_FLAGS:+ $TINY_FLAGS}"
    done
  done | xargs -P "$jobs" -L 1 bash -c 'one_run "$@"' _
  # A run passes when every comparison in it does (its test data, then --verify) and it exits 0:
  # the first failing line is shown, else the last result.
  for f in "$logs"/tiny_*.log; do
    line=$(grep -E "worst relative error.*FAIL|error:" "$f" | head -1)
    [ -n "$line" ] || line=$(grep -E "worst relative error" "$f" | tail -1)
    grep -q "exit 0$" "$f" || line="$line (exit: $(tail -1 "$f"))"
    printf "%-36s %s\n" "$(basename "$f" .log)" "$line"
  done | tee "$logs/tiny.txt"
fi

if [ "$correctness" -gt 0 ]; then
  stamp "GPU conformance: the selected ONNX node tests in fp32 and fp16"
  mkdir -p /tmp/node_tests && tar -C /tmp/node_tests -xJf .gpu/node_tests.tar.xz
  MONO_ONNX_NODE_TESTS=/tmp/node_tests timeout 900 .gpu/bin/gpu_conformance --dtype both > "$logs/gpu_conformance.txt" 2>&1
  echo "exit $?" >> "$logs/gpu_conformance.txt"
  grep -vE "^PASS" "$logs/gpu_conformance.txt" | tail -30
  stamp "differential tester: $correctness random graphs in fp32 and fp16, then the regressions"
  mkdir -p "$logs/difftest_failures"
  timeout "${DIFFTEST_TIMEOUT:-900}" .gpu/bin/difftest --count "$correctness" --seed "${DIFFTEST_SEED:-100000}" --dtype both --save "$logs/difftest_failures" \
    > "$logs/difftest.txt" 2>&1; echo "exit $?" >> "$logs/difftest.txt"
  grep -E "^(MISMATCH|REFUSED|COMPILE|INVALID)|^difftest|^exit" "$logs/difftest.txt" | tail -40
  .gpu/bin/difftest --dtype both --regressions tests/data/difftest > "$logs/difftest_regressions.txt" 2>&1
  echo "exit $?" >> "$logs/difftest_regressions.txt"; tail -2 "$logs/difftest_regressions.txt"
  stamp "mono-compile --out verifies on the GPU and records it"
  m=tests/data/models/tiny-bert-opset17/model.onnx
  mono-compile $m --dtype fp16 --out /tmp/verified > "$logs/compile_verify.txt" 2>&1; echo "exit $?" >> "$logs/compile_verify.txt"
  python3 -c "import json; print(json.load(open('/tmp/verified/manifest.json'))['verification'])" >> "$logs/compile_verify.txt" 2>&1
  mono-run /tmp/verified >> "$logs/compile_verify.txt" 2>&1
  cat "$logs/compile_verify.txt" | tail -8
fi
[ $tiny_only = 1 ] && exit 0

wait "$export_pid" 2>/dev/null; tail -3 "$logs/export.txt"
stamp "full models: compile and check, in parallel"
for n in ${models//,/ }; do
  d=/tmp/models/$n-opset20
  echo "check_$n $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0"
  [ $profile = 1 ] && echo "profile_$n $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0 --profile"
  for v in "${ab[@]}"; do
    echo "check_${v%%|*}_$n $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0 ${v#*|}"
    [ $profile = 1 ] && echo "profile_${v%%|*}_$n $d/model.onnx --gpu --dtype fp16 --test-data $d/test_data_set_0 --profile ${v#*|}"
  done
  mono-compile "$d/model.onnx" --dtype fp16 --emit plan > "$logs/plan_$n.txt" 2>&1 &
done | xargs -P "$jobs" -L 1 bash -c 'one_run "$@"' _
for n in ${models//,/ }; do grep -hE "compiled|worst relative|error:|^wall" "$logs/check_$n.log"; done

stamp "full models: timed, one at a time"
for n in ${models//,/ }; do
  d=/tmp/models/$n-opset20
  one_run "mono_$n" "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench
  grep -hE "bench:|worst relative" "$logs/mono_$n.log"
  for v in "${ab[@]}"; do
    one_run "${v%%|*}_$n" "$d/model.onnx" --gpu --dtype fp16 --test-data "$d/test_data_set_0" --bench ${v#*|}
    grep -h "bench:" "$logs/${v%%|*}_$n.log"
  done
done
if [ $baselines = 1 ] && [ -n "$models" ]; then
  stamp "PyTorch baselines"
  (cd .gpu/shared_bench && timeout 420 python3 baselines.py --only "$models" --modes "${BASELINE_MODES:-eager,cudagraph,compile}" --json "$logs/baselines.json" > "$logs/baselines.txt" 2>&1)
  tail -6 "$logs/baselines.txt"
fi
stamp "table"
python3 bench/table.py "$logs" | tee "$logs/table.txt"
