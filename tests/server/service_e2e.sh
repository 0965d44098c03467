#!/usr/bin/env bash
# The tuning service end to end on loopback, no GPU (DESIGN §8, issue 4 point 8):
#   server + two compile-only workers; a --dry-run submission of a tiny model;
#   kill -9 one worker while it holds a lease -> the lease expires, the other worker finishes
#   the job; restart the server mid-run -> the submission completes; the artifact's manifest
#   says nothing was measured; no result lost or doubled; resubmitting creates no new jobs.
#   tests/server/service_e2e.sh BUILD_DIR MODEL_DIR
set -euo pipefail
build=$1 model=$2
work=$(mktemp -d /tmp/mono-e2e.XXXXXX)
export XDG_CACHE_HOME=$work/cache  # a cold NVRTC cache: the workers really compile
server_bin=$build/tuner_server/mono-tuner-server worker_bin=$build/gpu_worker/mono-worker submit_bin=$build/client/mono-submit
port=$((20000 + RANDOM % 20000)) http=$((40000 + RANDOM % 20000))
addr=127.0.0.1:$port db=$work/mono.db
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ "${keep:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- server log"; tail -n 30 "$work"/server*.log; echo "--- worker logs"; tail -n 15 "$work"/w*.log; keep=1; exit 1; }
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], timeout=10); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$db" "$1"; }

start_server() {
  "$server_bin" --db "$db" --listen "$addr" --http 127.0.0.1:$http --lease-seconds 4 >> "$work/server.log" 2>&1 &
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 50); do grep -q "listening on $addr" "$work/server.log" 2>/dev/null && return; sleep 0.2; done
  fail "server did not start"
}
start_server
"$worker_bin" --server "$addr" --compile-only --name w1 --compile-threads 1 > "$work/w1.log" 2>&1 & w1=$!; pids+=($w1)
"$worker_bin" --server "$addr" --compile-only --name w2 --compile-threads 1 > "$work/w2.log" 2>&1 & w2=$!; pids+=($w2)

"$submit_bin" "$model" --server "$addr" --dry-run --out "$work/artifact" > "$work/submit.out" 2> "$work/submit.log" &
submit=$!; pids+=($submit)

# Kill -9 worker w1 while it holds a lease. A job can finish between the look and the kill;
# the lease that counts is one w1 still holds after it died (then it can never report).
victim_job=""
for attempt in $(seq 10); do
  for _ in $(seq 300); do
    held=$(sql "SELECT j.id FROM jobs j JOIN workers w ON w.id = j.lease_worker WHERE j.state='leased' AND w.name='w1' LIMIT 1" 2>/dev/null || true)
    [ -n "$held" ] && break
    sleep 0.05
  done
  kill -9 $w1; wait $w1 2>/dev/null || true
  victim_job=$(sql "SELECT j.id FROM jobs j JOIN workers w ON w.id = j.lease_worker WHERE j.state='leased' AND w.name='w1' LIMIT 1" 2>/dev/null || true)
  [ -n "$victim_job" ] && break
  # w1 finished that job just before it died: start it again (same name, same id) and retry.
  "$worker_bin" --server "$addr" --compile-only --name w1 --compile-threads 1 >> "$work/w1.log" 2>&1 & w1=$!; pids+=($w1)
done
[ -n "$victim_job" ] || fail "could not kill worker w1 while it held a lease"
echo "killed worker w1 (-9) holding job $victim_job"

# Restart the server mid-run (kill -9: no chance to tidy up).
sleep 1
kill -9 $server_pid; wait $server_pid 2>/dev/null || true
echo "killed the server (-9) mid-run; restarting it"
sleep 0.5
start_server

wait $submit || fail "mono-submit failed: $(tail -n 3 "$work/submit.log")"
id=$(cat "$work/submit.out")
echo "submission $id completed"
grep -q "expired lease" "$work/server.log" || fail "w1's lease never expired"

# The artifact says plainly that nothing was measured.
python3 - "$work/artifact/manifest.json" <<'EOF' || fail "artifact manifest"
import json, sys
m = json.load(open(sys.argv[1]))
t = m["tuning"]
assert t["measured"] is False, t
assert "nothing was measured" in t["note"], t["note"]
assert t["groups_tuned"] > 0 and len(t["records"]) > 0, t
assert all(r["measured"] is False and "est_us" in r and "median_us" not in r for r in t["records"])
print(f"artifact: {t['groups_tuned']} groups tuned from {len(t['records'])} records, measured: {t['measured']}")
EOF
[ -s "$work/artifact/kernel.cubin" ] || fail "artifact has no cubin"

# Every job done exactly once; the victim's job finished on w2 after a second lease; one
# result row per candidate sent (the primary key forbids doubles; count them against the
# payloads so none is lost).
[ "$(sql "SELECT COUNT(*) FROM jobs WHERE state != 'done'")" = 0 ] || fail "jobs not done: $(sql "SELECT id, state FROM jobs WHERE state != 'done'")"
row=$(sql "SELECT j.attempts, w.name FROM jobs j JOIN workers w ON w.id = j.lease_worker WHERE j.id = '$victim_job'")
[ "${row%%|*}" -ge 2 ] && [ "${row##*|}" = w2 ] || fail "victim job: attempts|finished by = $row (want >= 2 | w2)"
python3 - "$db" <<'EOF' || fail "results lost or doubled"
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
want = sum(len(json.loads(p)["candidates"]) for (p,) in c.execute("SELECT payload FROM jobs WHERE kind='compile'"))
got = c.execute("SELECT COUNT(*) FROM results").fetchone()[0]
distinct = c.execute("SELECT COUNT(DISTINCT job_id || '/' || candidate) FROM results").fetchone()[0]
assert got == want == distinct, (got, want, distinct)
print(f"results: {got} rows for {want} candidates sent, none doubled")
EOF

# mono-compile --db emits the same final kernel from the database.
"$build/client/mono-compile" "$model/model.onnx" --dtype fp16 --db "$db" --out "$work/from_db" 2> "$work/compile_db.log" \
  || fail "mono-compile --db: $(tail -n 2 "$work/compile_db.log")"
cmp -s "$work/artifact/model.cu" "$work/from_db/model.cu" || fail "mono-compile --db differs from the service's artifact"
grep -q "nothing measured" "$work/compile_db.log" || fail "mono-compile --db did not say the results are a dry run"
echo "mono-compile --db: the same kernel as the service's artifact"

# mono-compile --server builds the same kernel from the running server's results (the model
# stays here); the manifests name the same records.
"$build/client/mono-compile" "$model/model.onnx" --dtype fp16 --server "$addr" --out "$work/from_server" \
  2> "$work/compile_server.log" || fail "mono-compile --server: $(tail -n 2 "$work/compile_server.log")"
cmp -s "$work/artifact/model.cu" "$work/from_server/model.cu" || fail "mono-compile --server differs from the service's artifact"
grep -q "tuning results from the tuner server at $addr" "$work/compile_server.log" || fail "mono-compile --server: $(head -n 2 "$work/compile_server.log")"
python3 - "$work/from_db/manifest.json" "$work/from_server/manifest.json" <<'EOF2' || fail "the --db and --server manifests name different records"
import json, sys
a, b = (json.load(open(p))["tuning"] for p in sys.argv[1:])
assert a["records"] == b["records"] and a["records"], (len(a["records"]), len(b["records"]))
assert b.get("server") and a.get("database"), (list(a), list(b))
EOF2
set +e; out=$("$build/client/mono-compile" "$model/model.onnx" --dtype fp16 --server "$addr" --gpu-kind "NVIDIA Nothing" --emit plan 2>&1); rc=$?; set -e
[ $rc = 2 ] && echo "$out" | grep -q "has no results for GPU kind 'NVIDIA Nothing'" || fail "--server with an unknown GPU kind: rc=$rc: $out"
set +e; out=$("$build/client/mono-compile" "$model/model.onnx" --server 127.0.0.1:1 --emit plan 2>&1); rc=$?; set -e
[ $rc = 2 ] && echo "$out" | grep -q "cannot reach the tuner server" || fail "--server unreachable: rc=$rc: $out"
echo "mono-compile --server: the same kernel and records as --db; clear errors for an unknown GPU kind and no server"

# Resubmitting the same model: every task is answered from the database.
jobs_before=$(sql "SELECT COUNT(*) FROM jobs")
"$submit_bin" "$model" --server "$addr" --dry-run --out "$work/artifact2" > /dev/null 2> "$work/submit2.log" || fail "resubmission failed"
grep -q ", 0 new jobs" "$work/submit2.log" || fail "resubmission created jobs: $(head -n 1 "$work/submit2.log")"
[ "$(sql "SELECT COUNT(*) FROM jobs")" = "$jobs_before" ] || fail "job count changed"
cmp -s "$work/artifact/model.cu" "$work/artifact2/model.cu" || fail "the resubmission's kernel differs"
echo "resubmission: 0 new jobs, the same kernel"

# Bad input: one clear line and exit 2 each; nothing recorded on the server, and no upload
# left in its storage (the server's default --data-dir is the database's name + .data).
subs_before=$(sql "SELECT COUNT(*) FROM submissions")
models_before=$(ls "$db.data/models" | wc -l)
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  set +e; out=$("$submit_bin" "$@" 2>&1); rc=$?; set -e
  [ $rc = 2 ] && echo "$out" | grep -q "$pattern" || fail "mono-submit $*: rc=$rc, output: $out"
  echo "rejected as expected: $(echo "$out" | tail -n 1)"
}
expect_error "is not an input of the model" "$model" --server "$addr" --dry-run --shape nosuch=1x2
# The same refusal for a model the server had not stored before: its upload must not stay.
expect_error "is not an input of the model" "$model/../tiny-resnet-opset17" --server "$addr" --dry-run --shape nosuch=1x2
expect_error "no GPU worker has registered" "$model" --server "$addr"
head -c 1000 "$model/model.onnx" > "$work/truncated.onnx"
expect_error "not an ONNX model" "$work/truncated.onnx" --server "$addr" --dry-run
expect_error "cannot reach the tuner server" "$model" --server 127.0.0.1:1 --dry-run
[ "$(sql "SELECT COUNT(*) FROM submissions")" = "$subs_before" ] || fail "a rejected submission was recorded"
[ "$(ls "$db.data/models" | wc -l)" = "$models_before" ] || fail "a rejected upload stayed in $db.data/models"
[ -z "$(ls "$db.data/staging" 2>/dev/null)" ] || fail "an upload was left in $db.data/staging"
echo "rejected uploads left nothing in the server's storage"

# SIGTERM with a worker still connected: the server drains and exits within seconds.
t0=$(date +%s%N)
kill -TERM "$server_pid"
for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$server_pid" 2>/dev/null && fail "the server was still running 10 s after SIGTERM"
echo "SIGTERM: the server stopped in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo "PASS"
