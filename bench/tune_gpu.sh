#!/usr/bin/env bash
# The tuning service on the GPU machine, in one command (issue 4, point 9):
#   bench/tune_gpu.sh [--models tiny-bert,tiny-swin,bert-base] [--budget SECONDS] [--gpus N]
#                     [--no-bench] [--no-baselines] [--submit-budget N]
#   bench/tune_gpu.sh --together [--models bert-base,gpt2,vit-base,resnet50] [--gpus N] [--default]
# Starts mono-tuner-server and one measuring mono-worker per GPU (the first N GPUs; all by
# default) on a fresh database and an empty kernel cache, submits each model (fp16) with mono-submit --wait --out, and records the wall
# time from submit to artifact, candidates measured, and the latencies of the tuned artifact
# and the untuned default (mono-run --bench, the same method as baselines.py), and PyTorch's
# bert-base in the same call. bert-base is then submitted again (its resubmission time).
# --submit-budget N passes mono-submit --budget N (at most N candidates measured per submission).
# --together (issue 23): the full models are submitted at once, as several users of one fleet
# would; it records each model's submit -> artifact, all of them together, the jobs, busy and
# idle seconds of each worker, and each tuned artifact's latency (the same whatever N); --default
# also times each model's untuned default kernel after it (issue 21's tuned-vs-default ratio).
# The service's binaries come with SERVICE=1 bash bench/build_gpu_bundle.sh.
# Logs: $OUT/tune.tgz and $OUT/tune_summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/mono-tune}
logs=/tmp/mono-tune-logs
rm -rf "$logs" /tmp/mono-tune-run; mkdir -p "$out" "$logs" /tmp/mono-tune-run
models= budget=540 baselines=1 use_gpus=0 bench=1 submit_budget=() together=0 default_too=0
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift ;;
    --budget) budget=$2; shift ;;
    --no-baselines) baselines=0 ;;
    --gpus) use_gpus=$2; shift ;;
    --no-bench) bench=0 ;;
    --submit-budget) submit_budget=(--budget "$2"); shift ;;
    --together) together=1 ;;
    --default) default_too=1 ;;
    *) echo "tune_gpu.sh: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$models" ] || { [ $together = 1 ] && models=bert-base,gpt2,vit-base,resnet50 || models=tiny-bert,bert-base; }
source .gpu/env.sh
for tool in mono-tuner-server mono-worker mono-submit; do
  command -v $tool > /dev/null || { echo "tune_gpu.sh: $tool is not in the bundle: build it with SERVICE=1 bash bench/build_gpu_bundle.sh" >&2; exit 2; }
done
export PYTHONUNBUFFERED=1
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
say() { echo "[$(elapsed) s] $*" | tee -a "$logs/tune_summary.txt"; }
finish() {
  # The database (for the dashboard: mono-tuner-server --db mono.db) and its JSON API.
  curl -s http://127.0.0.1:8080/api/submissions > "$logs/api_submissions.json" 2>/dev/null
  python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))" \
    /tmp/mono-tune-run/mono.db "$logs/mono.db" 2>/dev/null && gzip -f "$logs/mono.db"
  cp "$logs/tune_summary.txt" "$out/" 2>/dev/null
  tar -C /tmp -czf "$out/tune.tgz" mono-tune-logs
}
# Wait for the server and workers to exit: a second run right after this one needs the ports.
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; finish' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$logs/tune_summary.txt"
# The jobs are mostly NVRTC compiles: the host's CPUs set the pace (and how it scales with workers).
lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU max MHz|CPU min MHz)' \
  | tee -a "$logs/tune_summary.txt"
say "commit $(cat .gpu/COMMIT 2>/dev/null || echo unknown), $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s)"

# The full models (the tiny ones are in the repository); kept in /tmp/models across calls.
full=$(echo ",$models," | tr ',' '\n' | grep -v -e '^$' -e '^tiny-' | paste -sd, -)
missing=
for n in ${full//,/ }; do [ -f /tmp/models/$n-opset20/test_data_set_0/output_0.pb ] || missing=$missing,$n; done
export_pid=
if [ -n "$missing" ]; then
  (python3 bench/export_full.py /tmp/models --only "${missing#,}" > "$logs/export.txt" 2>&1; echo "export exit $?" >> "$logs/export.txt") &
  export_pid=$!
fi

run=/tmp/mono-tune-run
# Fresh kernel caches: nothing compiled by an earlier run may make this one look faster.
# Mono's cubin cache, and the driver's compute cache, which NVRTC (CUDA 12.9+) also uses.
export XDG_CACHE_HOME=$run/cache CUDA_CACHE_PATH=$run/cuda-cache
mono-tuner-server --db $run/mono.db --listen 127.0.0.1:50051 --http 127.0.0.1:8080 > "$logs/server.log" 2>&1 &
gpus=$(nvidia-smi -L | wc -l)
[ "$use_gpus" -gt 0 ] && [ "$use_gpus" -lt "$gpus" ] && gpus=$use_gpus
# One worker daemon per GPU, as a fleet would run them.
for g in $(seq 0 $((gpus - 1))); do
  mono-worker --server 127.0.0.1:50051 --gpus $g --name gpu$g --work-dir $run/worker$g \
    --metrics 127.0.0.1:$((9101 + g)) > "$logs/worker$g.log" 2>&1 &
done
sleep 2
say "server and $gpus worker(s) started ($(grep -h registered "$logs"/worker*.log | tr '\n' ' '))"

bench_default() {  # bench_default NAME MODEL_DIR TESTDATA: the untuned kernel, checked and timed (run_default_NAME.log)
  mono-run "$2/model.onnx" --gpu --dtype fp16 --test-data "$3" --bench > "$logs/run_default_$1.log" 2>&1
}

tune() {  # tune NAME MODEL_DIR TESTDATA [SHAPES...]
  local name=$1 dir=$2 td=$3; shift 3
  local left=$(( budget - $(elapsed) ))
  [ $left -gt 30 ] || { say "$name: skipped, no time left"; return; }
  say "$name: mono-submit --wait --out (time limit ${left}s)"
  local s=$(date +%s%N)
  timeout $left mono-submit "$dir/model.onnx" --server 127.0.0.1:50051 --dtype fp16 --out $run/art_$name "${submit_budget[@]}" "$@" \
    > "$logs/submit_$name.out" 2> >(while IFS= read -r l; do echo "[$(elapsed) s] $l"; done > "$logs/submit_$name.log")
  local rc=$? ms=$(( ($(date +%s%N) - s) / 1000000 ))
  tail -n 4 "$logs/submit_$name.log" | tee -a "$logs/tune_summary.txt"
  say "$name: submit to artifact: $ms ms (exit $rc)"
  [ $rc = 0 ] || return
  cp $run/art_$name/manifest.json "$logs/manifest_$name.json"
  python3 - "$logs/manifest_$name.json" <<'EOF' | tee -a "$logs/tune_summary.txt"
import json, sys
t = json.load(open(sys.argv[1]))["tuning"]
recs = t.get("records", [])
print(f"  measured={t.get('measured')} groups tuned={t.get('groups_tuned')} default={t.get('groups_default')} records={len(recs)}")
for c in t.get("whole_kernel", []):
    print(f"  whole kernel config {c['config']}: ok={c['ok']} median_us={c['median_us']} {c.get('failure','')} {c.get('reason','')[:120]}")
if "speedup" in t: print(f"  worker's whole-kernel timing (L2 flushed): tuned {t['tuned_us']:.1f} us vs default {t['default_us']:.1f} us = {t['speedup']:.2f}x")
if "kernel_from_worker" in t: print(f"  artifact built from the worker's compile: {t['kernel_from_worker']}")
EOF
  [ $bench = 1 ] || return 0
  mono-run $run/art_$name --test-data "$td" --bench > "$logs/run_tuned_$name.log" 2>&1
  s=$(date +%s%N)
  bench_default $name "$dir" "$td"
  say "$name default kernel: compile + check + bench $(( ($(date +%s%N) - s) / 1000000 )) ms"
  say "$name tuned:   $(grep -hE 'bench:|worst' "$logs/run_tuned_$name.log" | tr '\n' ' ')"
  say "$name default: $(grep -hE 'bench:|worst' "$logs/run_default_$name.log" | tr '\n' ' ')"
  grep -hE "candidates|jobs" "$logs/server.log" | tail -n 3 >> "$logs/tune_summary.txt"
}

worker_metrics() {  # one line per worker: jobs by kind, candidates, busy and idle seconds over $1 s
  for g in $(seq 0 $((gpus - 1))); do
    curl -s http://127.0.0.1:$((9101 + g))/metrics | python3 -c '
import re, sys
wall, name, jobs, cands, busy = float(sys.argv[1]), sys.argv[2], {}, 0.0, 0.0
for line in sys.stdin:
    m = re.match(r"(\w+)(?:\{(.*)\})? (\S+)$", line.strip())
    if not m or line.startswith("#"): continue
    metric, labels, v = m.group(1), m.group(2) or "", float(m.group(3))
    if metric == "mono_worker_jobs_total": k = re.search(r"kind=\"(\w+)\"", labels).group(1); jobs[k] = jobs.get(k, 0) + v
    if metric == "mono_worker_candidates_total" and "measured" in labels: cands += v
    if metric == "mono_worker_busy_seconds_total": busy += v
print(f"{name}: jobs " + " ".join(f"{k}={int(v)}" for k, v in sorted(jobs.items())) +
      f", candidates measured {int(cands)}, busy {busy:.1f} s, idle {wall - busy:.1f} s of {wall:.1f} s")
' "$1" "gpu$g"
  done
}

if [ $together = 1 ]; then
  [ -n "$full" ] || { say "--together: no full-size model in --models $models"; exit 2; }
  [ -z "$export_pid" ] || { wait $export_pid; tail -n 2 "$logs/export.txt"; }
  [ $(( budget - $(elapsed) )) -gt 30 ] || { say "together: no time left (--budget $budget)"; exit 1; }
  say "together: submitting ${full//,/ } at once to $gpus worker(s)"
  s_all=$(date +%s%N)
  pids=()
  for n in ${full//,/ }; do
    d=/tmp/models/$n-opset20
    ( s=$(date +%s%N)
      timeout $(( budget - $(elapsed) )) mono-submit "$d/model.onnx" --server 127.0.0.1:50051 --dtype fp16 --out $run/art_$n "${submit_budget[@]}" \
        > "$logs/submit_$n.out" 2> >(while IFS= read -r l; do echo "[$(elapsed) s] $l"; done > "$logs/submit_$n.log")
      rc=$?
      say "$n: submit to artifact: $(( ($(date +%s%N) - s) / 1000000 )) ms (exit $rc)" ) &
    pids+=($!)
  done
  wait "${pids[@]}"
  all_ms=$(( ($(date +%s%N) - s_all) / 1000000 ))
  say "all of ${full//,/ }: submit to last artifact: $all_ms ms on $gpus GPU(s)"
  worker_metrics "$(awk "BEGIN { print $all_ms / 1000 }")" | while IFS= read -r l; do say "$l"; done
  python3 bench/tune_timeline.py $run/mono.db "$logs"/worker*.log | while IFS= read -r l; do say "$l"; done
  grep -hE "tasks|candidates" "$logs/server.log" >> "$logs/tune_summary.txt"
  if [ $bench = 1 ]; then
    for n in ${full//,/ }; do
      d=/tmp/models/$n-opset20
      [ -f $run/art_$n/manifest.json ] || continue
      cp $run/art_$n/manifest.json "$logs/manifest_$n.json"
      say "$n artifact: $(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["tuning"]; print("whole kernels", [(c["config"], c["median_us"]) for c in t.get("whole_kernel", [])], "built from the worker compile:", t.get("kernel_from_worker"))' "$logs/manifest_$n.json")"
      mono-run $run/art_$n --test-data $d/test_data_set_0 --bench > "$logs/run_tuned_$n.log" 2>&1
      say "$n tuned: $(grep -hE 'bench:|worst|FAIL' "$logs/run_tuned_$n.log" | tr '\n' ' ')"
      if [ $default_too = 1 ]; then  # the untuned default kernel, timed the same way in the same call
        bench_default $n $d $d/test_data_set_0
        say "$n default: $(grep -hE 'bench:|worst|FAIL' "$logs/run_default_$n.log" | tr '\n' ' ')"
      fi
    done
  fi
  say "done"
  exit 0
fi

for n in ${models//,/ }; do  # the tiny models of the repository (tests/data/models), opset 20 where there is one
  case "$n" in tiny-*) ;; *) continue ;; esac
  d=tests/data/models/$n-opset20; [ -d "$d" ] || d=tests/data/models/$n-opset17
  tune "$n" "$d" "$d/test_data_set_0"
done
case ",$models," in *,bert-base,*)
  [ -z "$export_pid" ] || { wait $export_pid; tail -n 2 "$logs/export.txt"; }
  d=/tmp/models/bert-base-opset20
  tune bert-base $d $d/test_data_set_0
  # The same model again: every task's results are in the database, nothing is measured.
  bench=0 tune bert-base-again $d $d/test_data_set_0
  for g in $(seq 0 $((gpus - 1))); do
    say "worker gpu$g metrics: $(curl -s http://127.0.0.1:$((9101 + g))/metrics | grep -E '^mono_worker_(candidates|jobs)_total' | tr '\n' ' ')"
  done
  if [ $baselines = 1 ] && [ $(( budget - $(elapsed) )) -gt 45 ]; then
    (cd .gpu/shared_bench && timeout $(( budget - $(elapsed) )) python3 baselines.py --only bert-base --json "$logs/baselines.json" > "$logs/baselines.txt" 2>&1)
    say "PyTorch: $(tail -n 1 "$logs/baselines.txt")"
    # Recorded for the dashboard's result view.
    python3 - "$logs/baselines.json" "$(head -n 1 "$logs/submit_bert-base.out")" <<'PY' || true
import json, sys, urllib.request
b = json.load(open(sys.argv[1]))["models"]["bert-base"]
for key, name in [("eager_us", "PyTorch eager"), ("cudagraph_us", "PyTorch CUDA graph"), ("compile_us", "torch.compile")]:
    body = json.dumps({"submission_id": sys.argv[2], "name": name, "latency_us": b[key],
                       "source": "shared/bench/baselines.py, same call"}).encode()
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:8080/api/baselines", body, {"Content-Type": "application/json"}))
PY
  fi ;;
esac
say "done"
