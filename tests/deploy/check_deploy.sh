#!/usr/bin/env bash
# tests/deploy/check_deploy.sh: CI check of the deployment files in deploy/ (no network, no
# GPU, no root). Registered with CTest as deploy_files; run it by hand from anywhere.
#
#   1. check_deploy.py: every YAML file parses (PyYAML; a minimal check without it), the
#      Grafana dashboard parses and every panel has a target, every metric in the dashboard
#      and alerts is in the agreed list with its labels and values (and rate() only on
#      counters), flags in systemd units / env files / Kubernetes args / Dockerfiles are
#      the daemons' real flags, Kubernetes invariants (one Recreate server on a PVC, probes
#      on /metrics, GPU and compile-only workers), docs/deploy.md names every file.
#   2. systemd-analyze verify on the units (copies whose Exec lines run /bin/true, since
#      the binaries are not installed here), when systemd-analyze exists.
#   3. promtool check config / check rules, and promtool test rules alerts_test.yml (alerts
#      against synthetic series), when promtool exists.
#   4. kubectl kustomize deploy/k8s renders, when kubectl exists.
#   5. deploy/bin/mono-db-backup on a live WAL database (sqlite3): the backup holds what
#      is still in the WAL, which a plain copy of the file would miss.
#   6. bash -n (and shellcheck, when it exists) on the shell scripts.
# A missing tool is a "skip" line, not a failure. Exit status 1 when anything failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deploy=$root/deploy
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }
skip() { echo "skip $*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_deploy.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

echo "== static checks (check_deploy.py)"
if command -v python3 >/dev/null; then
  python3 "$root/tests/deploy/check_deploy.py" "$@" || failed=1
else
  skip "python3 not found: YAML, dashboard, metric and flag checks not run"
  if command -v jq >/dev/null; then
    jq -e '[.panels[] | select(.type != "row") | (.targets | length)] | all(. > 0)' \
      "$deploy/grafana/mono-dashboard.json" >/dev/null \
      && ok "grafana dashboard parses (jq), every panel has a target" \
      || fail "grafana dashboard does not parse or a panel has no target (jq)"
  fi
fi

echo "== systemd units"
if command -v systemd-analyze >/dev/null; then
  units=$tmp/units
  mkdir -p "$units"
  for f in "$deploy"/systemd/*.service "$deploy"/systemd/*.timer; do
    # Keep the Exec prefixes (-, +, @, !, :) and the arguments; run /bin/true instead of
    # binaries that are not installed on a CI machine.
    sed -E 's#^(Exec[A-Za-z]*=[-+@!:]*)/[^ ]+#\1/bin/true#' "$f" > "$units/$(basename "$f")"
  done
  # Instances of the template, as systemctl would load them.
  cp "$units/mono-worker@.service" "$units/mono-worker@gpus.service"
  cp "$units/mono-worker@.service" "$units/mono-worker@cpu.service"
  for u in mono-tuner-server.service mono-worker@gpus.service mono-worker@cpu.service \
           mono-db-backup.service mono-db-backup.timer; do
    out=$(cd "$units" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no --recursive-errors=no "$units/$u" 2>&1)
    rc=$?
    # Lines about other units (the host's own, loaded through dependencies) are not ours.
    ours=$(printf '%s\n' "$out" | grep -E "(mono-[a-z@-]+\.(service|timer))" | grep -v '^$' || true)
    if [ $rc -ne 0 ] || [ -n "$ours" ]; then
      fail "systemd-analyze verify $u (rc $rc)"
      printf '%s\n' "$out" | sed 's/^/     /'
    else
      ok "systemd-analyze verify $u"
    fi
  done
else
  skip "systemd-analyze not found: units not verified"
fi

echo "== Prometheus"
if command -v promtool >/dev/null; then
  if promtool check rules "$deploy/alerts.yml" > "$tmp/promtool" 2>&1; then
    ok "promtool check rules deploy/alerts.yml"
  else
    fail "promtool check rules deploy/alerts.yml"; sed 's/^/     /' "$tmp/promtool"
  fi
  # check config also checks the rule files it names, relative to the config, and that the
  # token file exists: a copy beside alerts.yml, with the token file pointed at a stand-in.
  mkdir -p "$tmp/prom" && cp "$deploy/alerts.yml" "$tmp/prom/" && echo stand-in > "$tmp/prom/token"
  sed "s|/etc/mono/token|$tmp/prom/token|" "$deploy/prometheus.yml" > "$tmp/prom/prometheus.yml"
  if promtool check config "$tmp/prom/prometheus.yml" > "$tmp/promtool" 2>&1; then
    ok "promtool check config deploy/prometheus.yml"
  else
    fail "promtool check config deploy/prometheus.yml"; sed 's/^/     /' "$tmp/promtool"
  fi
  # Alerts against synthetic series (paths in the test file are relative to it).
  if (cd "$root/tests/deploy" && promtool test rules alerts_test.yml) > "$tmp/promtool" 2>&1; then
    ok "promtool test rules tests/deploy/alerts_test.yml"
  else
    fail "promtool test rules tests/deploy/alerts_test.yml"; sed 's/^/     /' "$tmp/promtool"
  fi
else
  skip "promtool not found (Debian: apt-get install prometheus): config and rules not checked by Prometheus itself"
fi

echo "== Kubernetes"
if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then
  if kubectl kustomize "$deploy/k8s" > "$tmp/k8s.yaml" 2> "$tmp/k8s.err"; then
    n=$(grep -c '^kind:' "$tmp/k8s.yaml")
    ok "kubectl kustomize deploy/k8s renders $n objects"
  else
    fail "kubectl kustomize deploy/k8s"; sed 's/^/     /' "$tmp/k8s.err"
  fi
else
  skip "kubectl not found: kustomization not rendered"
fi

echo "== database backup"
if command -v sqlite3 >/dev/null; then
  db=$tmp/db/mono.db
  mkdir -p "$tmp/db"
  sqlite3 "$db" "PRAGMA journal_mode=WAL; CREATE TABLE jobs(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO jobs(v) VALUES('first');" >/dev/null
  # A second connection writes 1000 rows and stays open without checkpointing, like a
  # running server: the rows are in mono.db-wal, not yet in mono.db. It ends when its
  # input closes (below, or when this script exits).
  coproc holder { exec sqlite3 "$db" > "$tmp/holder.out" 2>&1; }
  # shellcheck disable=SC2154  # holder_PID is set by coproc
  holder_pid=$holder_PID holder_in=${holder[1]}
  printf "PRAGMA wal_autocheckpoint=0;\nINSERT INTO jobs(v) SELECT 'row' FROM generate_series(1, 1000);\n" >&"$holder_in"
  for _ in $(seq 100); do
    [ "$(sqlite3 "$db" "SELECT count(*) FROM jobs" 2>/dev/null)" = 1001 ] && break
    sleep 0.1
  done
  cp "$db" "$tmp/naive.db"
  naive=$(sqlite3 "$tmp/naive.db" "SELECT count(*) FROM jobs" 2>/dev/null || echo "unreadable")
  out=$("$deploy/bin/mono-db-backup" "$db" "$tmp/backups" 2 2>&1)
  rc=$?
  got=$( [ $rc -eq 0 ] && sqlite3 "$out" "SELECT count(*) FROM jobs" 2>&1)
  if [ $rc -eq 0 ] && [ "$got" = 1001 ]; then
    ok "mono-db-backup of a live WAL database has all 1001 rows (a plain copy of mono.db has $naive)"
  else
    fail "mono-db-backup: rc $rc, rows '$got' (want 1001): $out"
  fi
  # Rotation keeps the newest KEEP (2) backups.
  for _ in 1 2; do sleep 1.1; "$deploy/bin/mono-db-backup" "$db" "$tmp/backups" 2 >/dev/null || fail "mono-db-backup (rotation run)"; done
  n=$(find "$tmp/backups" -name 'mono-*.db' | wc -l)
  [ "$n" -eq 2 ] && ok "mono-db-backup keeps the newest 2 of 3 backups" || fail "mono-db-backup rotation left $n backups (want 2)"
  if "$deploy/bin/mono-db-backup" "$tmp/none.db" "$tmp/backups" 2 >/dev/null 2>&1; then
    fail "mono-db-backup succeeded on a missing database"
  else
    ok "mono-db-backup fails on a missing database"
  fi
  eval "exec $holder_in>&-"
  wait "$holder_pid" 2>/dev/null
else
  skip "sqlite3 not found: mono-db-backup not exercised"
fi

echo "== shell scripts"
scripts=("$deploy/bin/mono-db-backup" "$deploy/docker/runtime-packages.sh" "$root/tests/deploy/check_deploy.sh")
for s in "${scripts[@]}"; do
  bash -n "$s" && ok "bash -n ${s#"$root"/}" || fail "bash -n ${s#"$root"/}"
done
if command -v shellcheck >/dev/null; then
  shellcheck -S warning "${scripts[@]}" && ok "shellcheck" || fail "shellcheck"
else
  skip "shellcheck not found"
fi

echo
if [ $failed -ne 0 ]; then
  echo "check_deploy: FAILED"
  exit 1
fi
echo "check_deploy: all checks passed"
