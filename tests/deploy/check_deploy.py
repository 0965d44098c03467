#!/usr/bin/env python3
"""Static checks of deploy/ (called by check_deploy.sh; no network, no GPU).

Prints one line per check: "ok   ...", "FAIL ...", "skip ...", "note ...". Exit status 1
when anything failed. With --no-yaml it behaves as if PyYAML were missing (the fallback).
"""
import fnmatch
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")

failures = 0
unknown_metrics = set()


def ok(msg):
    print("ok   " + msg)


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def skip(msg):
    print("skip " + msg)


def note(msg):
    print("note " + msg)


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------------------------------
# The contract: metrics, their types and label values; the command lines.

JOB_KINDS = {"compile", "measure", "whole_kernel"}
JOB_STATES = {"queued", "leased", "done", "failed"}
FAILURE_CLASSES = {"compile_error", "resource_error", "launch_error", "timeout", "wrong_answer", "worker_lost"}

# name -> (type, {label: allowed values or None for any})
METRICS = {
    # mono-tuner-server (tuner_server/metrics.cc)
    "mono_leases_total": ("counter", {"event": {"granted", "expired"}}),
    "mono_reports_total": ("counter", {"outcome": {"accepted", "ignored"}}),
    "mono_lease_seconds": ("histogram", {}),
    "mono_jobs": ("gauge", {"kind": JOB_KINDS, "state": JOB_STATES}),
    "mono_failures": ("gauge", {"class": FAILURE_CLASSES}),
    "mono_db_bytes": ("gauge", {}),
    "mono_workers": ("gauge", {}),
    # mono-worker (gpu_worker/)
    "mono_worker_jobs_total": ("counter", {"kind": JOB_KINDS, "outcome": None}),
    "mono_worker_candidates_total": ("counter", {"stage": {"compiled", "measured"}}),
    "mono_worker_failures_total": ("counter", {"class": FAILURE_CLASSES}),
    "mono_worker_measurement_spread": ("histogram", {}),
    "mono_worker_gpu_sm_clock_mhz": ("gauge", {"gpu": None}),
    "mono_worker_gpu_temperature_celsius": ("gauge", {"gpu": None}),
    "mono_worker_busy": ("gauge", {"gpu": None}),
}
SERVER_METRICS = {m for m in METRICS if not m.startswith("mono_worker_")}
# Series Prometheus itself makes for every target.
BUILTIN = {"up": ("gauge", {})}
TARGET_LABELS = {"job", "instance"}  # plus the labels of prometheus.yml's static_configs

FLAGS = {
    "mono-tuner-server": {"--db", "--listen", "--http", "--token-file", "--lease-seconds", "--data-dir"},
    "mono-worker": {"--server", "--gpus", "--compile-only", "--token-file", "--name", "--metrics", "--work-dir"},
}
VALUELESS_FLAGS = {"--compile-only"}
FLAG_SOURCES = {"mono-tuner-server": "tuner_server/server_main.cc", "mono-worker": "gpu_worker/worker_main.cc"}
_source_flags = {}


def source_flags(binary):
    """The flags the binary's main() parses (f == "--x"), or None before it exists."""
    if binary not in _source_flags:
        path = os.path.join(ROOT, FLAG_SOURCES[binary])
        _source_flags[binary] = set(re.findall(r'==\s*"(--[a-z0-9-]+)"', read(path))) if os.path.exists(path) else None
    return _source_flags[binary]
SEVERITIES = {"critical", "warning", "info"}

RANGE_FUNCS = {"rate", "irate", "increase"}  # counters (and histogram series)
GAUGE_RANGE_FUNCS = {"delta", "deriv", "predict_linear", "idelta"}


def check_contract_against_sources():
    """The label values above must match db/records.cc, and the server metrics
    tuner_server/*.cc; worker metrics are compared with gpu_worker/ once it has any."""
    records = os.path.join(ROOT, "db", "records.cc")
    if os.path.exists(records):
        text = read(records)
        for array, expected in (("kJobKinds", JOB_KINDS), ("kJobStates", JOB_STATES), ("kFailureClasses", FAILURE_CLASSES)):
            m = re.search(array + r"\[\]\s*=\s*\{([^}]*)\}", text)
            if not m:
                note(f"db/records.cc: {array} not found; label values not cross-checked")
                continue
            values = {v for v in re.findall(r'"([^"]*)"', m.group(1)) if v}
            if values == expected:
                ok(f"label values of {array} match db/records.cc")
            else:
                fail(f"db/records.cc {array} is {sorted(values)} but tests/deploy/check_deploy.py expects {sorted(expected)}: "
                     "update the dashboard/alerts and the list here")
    else:
        skip("db/records.cc absent: label values not cross-checked")

    def defined_names(folder):
        names = set()
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path):
            return None
        for dirpath, _, files in os.walk(path):
            for f in files:
                if f.endswith((".cc", ".h")):
                    names |= set(re.findall(r'Name\(\s*"(mono_[a-z0-9_]+)"', read(os.path.join(dirpath, f))))
        return names

    server = defined_names("tuner_server")
    if server is None:
        skip("tuner_server/ absent: server metric names not cross-checked")
    else:
        missing = sorted(SERVER_METRICS - server)
        if missing:
            fail(f"tuner_server/ does not define {missing} (deploy/ relies on them)")
        else:
            ok(f"the {len(SERVER_METRICS)} server metrics are defined in tuner_server/")
    worker = defined_names("gpu_worker")
    worker_metrics = {m for m in METRICS if m.startswith("mono_worker_")}
    if not worker:
        note("gpu_worker/ defines no metrics yet: worker metric names checked against the agreed list only")
    else:
        missing = sorted(worker_metrics - worker)
        if missing:
            note(f"gpu_worker/ does not (yet) define {missing}: the dashboard and alerts use them")
        else:
            ok(f"the {len(worker_metrics)} worker metrics are defined in gpu_worker/")


# ---------------------------------------------------------------------------------------
# YAML


def load_yaml_docs(path, yaml):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def minimal_yaml_check(path):
    """Without PyYAML: no tabs in indentation, balanced quotes and brackets per line."""
    problems = []
    for n, line in enumerate(read(path).splitlines(), 1):
        if re.match(r"^\s*\t", line):
            problems.append(f"line {n}: tab in indentation")
        body = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        if body.count('"') % 2:
            problems.append(f"line {n}: unbalanced double quote")
        for a, b in ("[]", "{}"):
            if body.count(a) != body.count(b) and not body.rstrip().endswith(("|", ">")):
                problems.append(f"line {n}: unbalanced {a}{b}")
    return problems


# ---------------------------------------------------------------------------------------
# PromQL (the subset the dashboard and alerts use)


def matching_paren(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "(":
            depth += 1
        elif s[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def metric_base(name):
    if name in METRICS or name in BUILTIN:
        return name, ""
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if base in METRICS and METRICS[base][0] == "histogram":
                return base, suffix
    return None, None


def check_promql(where, expr, target_labels, legend_labels=()):
    """Returns the set of metric names the expression uses."""
    errors = []
    # Strings out first (they may hold anything); keep them for the matchers.
    for a, b in ("()", "[]", "{}"):
        if re.sub(r'"[^"]*"', '""', expr).count(a) != re.sub(r'"[^"]*"', '""', expr).count(b):
            errors.append(f"unbalanced {a}{b}")
    used = set()
    labels_in_scope = set(target_labels)
    for m in re.finditer(r"(?<![A-Za-z0-9_:$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?", expr):
        name, selector = m.group(1), m.group(2)
        if not (name.startswith("mono_") or name in BUILTIN):
            continue
        base, suffix = metric_base(name)
        if base is None:
            errors.append(f"unknown metric {name} (not in the agreed list in tests/deploy/check_deploy.py)")
            unknown_metrics.add(name)
            continue
        used.add(base)
        mtype, labels = (METRICS.get(base) or BUILTIN[base])
        if mtype == "histogram" and not suffix:
            errors.append(f"{name} is a histogram: use {name}_bucket, _sum or _count")
        allowed = dict(labels)
        if suffix == "_bucket":
            allowed["le"] = None
        labels_in_scope |= set(allowed)
        if selector:
            for lm in re.finditer(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"', selector):
                label, op, value = lm.groups()
                if label not in allowed and label not in target_labels:
                    errors.append(f'{name} has no label "{label}"')
                    continue
                values = allowed.get(label)
                if values is None or "$" in value or op.startswith("!"):
                    continue
                wanted = value.split("|") if op == "=~" and re.fullmatch(r"[a-z0-9_|]+", value) else ([value] if op == "=" else [])
                for v in wanted:
                    if v not in values:
                        errors.append(f'{name}{{{label}="{v}"}}: {label} is one of {sorted(values)}')
    # rate() and friends on counters only; delta() and friends on gauges only.
    for fm in re.finditer(r"\b([a-z_]+)\s*\(", expr):
        func = fm.group(1)
        if func not in RANGE_FUNCS | GAUGE_RANGE_FUNCS and func != "histogram_quantile":
            continue
        end = matching_paren(expr, fm.end() - 1)
        arg = expr[fm.end(): end]
        names = re.findall(r"\b(mono_[a-z0-9_]+|up)\b", arg)
        if func in RANGE_FUNCS | GAUGE_RANGE_FUNCS and not re.search(r"\[[^\]]+\]", arg):
            errors.append(f"{func}() needs a range vector")
        for n in names:
            base, suffix = metric_base(n)
            if base is None:
                continue
            mtype = (METRICS.get(base) or BUILTIN[base])[0]
            if func in RANGE_FUNCS and not (mtype == "counter" or (mtype == "histogram" and suffix)):
                hint = "use its _bucket, _sum or _count series" if mtype == "histogram" else "use delta()"
                errors.append(f"{func}({n}): {n} is a {mtype}, not a counter ({hint})")
            if func in GAUGE_RANGE_FUNCS and mtype != "gauge":
                errors.append(f"{func}({n}): {n} is a {mtype} (use rate() or increase())")
        if func == "histogram_quantile" and ("_bucket" not in arg or not re.search(r"\ble\b", arg)):
            errors.append("histogram_quantile() needs a *_bucket series aggregated by le")
    # Grouping labels must exist on the series.
    for gm in re.finditer(r"\b(by|without|on|ignoring)\s*\(([^)]*)\)", expr):
        for label in [x.strip() for x in gm.group(2).split(",") if x.strip()]:
            if label not in labels_in_scope and label != "le":
                errors.append(f'{gm.group(1)} ({label}): no series here has the label "{label}"')
    for label in legend_labels:
        if label not in labels_in_scope:
            errors.append(f'legend/annotation uses {{{{{label}}}}}, which no series here has')
    for e in errors:
        fail(f"{where}: {e}")
    return used, not errors


# ---------------------------------------------------------------------------------------


def check_yaml_files(yaml):
    files = []
    for dirpath, _, names in os.walk(DEPLOY):
        files += [os.path.join(dirpath, n) for n in names if n.endswith((".yml", ".yaml"))]
    files.sort()
    parsed = {}
    for path in files:
        if yaml:
            try:
                parsed[path] = load_yaml_docs(path, yaml)
            except Exception as e:  # yaml.YAMLError and friends
                fail(f"{rel(path)} does not parse: {e}".replace("\n", " "))
        else:
            problems = minimal_yaml_check(path)
            for p in problems:
                fail(f"{rel(path)}: {p}")
    how = "parse (PyYAML)" if yaml else "pass the minimal check (no PyYAML: install python3-yaml for the full one)"
    ok(f"{len(files)} YAML files {how}")
    return parsed


def prometheus_target_labels(prom):
    labels = set(TARGET_LABELS)
    for sc in prom.get("scrape_configs", []):
        for st in sc.get("static_configs", []) or []:
            labels |= set((st.get("labels") or {}).keys())
    return labels


def check_prometheus(parsed):
    path = os.path.join(DEPLOY, "prometheus.yml")
    docs = parsed.get(path)
    if not docs:
        return set(TARGET_LABELS)
    prom = docs[0]
    jobs = {sc.get("job_name") for sc in prom.get("scrape_configs", [])}
    for job in ("mono-server", "mono-worker"):
        if job not in jobs:
            fail(f"deploy/prometheus.yml has no scrape job {job}")
    for rf in prom.get("rule_files", []):
        if not os.path.exists(os.path.join(DEPLOY, rf)):
            fail(f"deploy/prometheus.yml: rule file {rf} not found next to it")
    if "file_sd_configs" not in read(path):
        fail("deploy/prometheus.yml: no file_sd_configs example for a fleet")
    ok(f"deploy/prometheus.yml: jobs {sorted(j for j in jobs if j)}, rule files {prom.get('rule_files', [])}")
    return prometheus_target_labels(prom)


def check_alerts(parsed, target_labels, yaml_available):
    path = os.path.join(DEPLOY, "alerts.yml")
    used = set()
    if yaml_available:
        docs = parsed.get(path)
        if not docs:
            fail("deploy/alerts.yml: empty or unparsable")
            return used
        names = []
        for group in docs[0].get("groups", []):
            if not group.get("name") or not group.get("rules"):
                fail(f"deploy/alerts.yml: a group without name or rules: {group.get('name')}")
            for rule in group.get("rules", []):
                name = rule.get("alert") or rule.get("record")
                names.append(name)
                where = f"deploy/alerts.yml {name}"
                if "expr" not in rule:
                    fail(f"{where}: no expr")
                    continue
                if "for" in rule and not re.fullmatch(r"(\d+(ms|s|m|h|d|w|y))+", str(rule["for"])):
                    fail(f"{where}: bad duration for: {rule['for']}")
                if "alert" in rule:
                    sev = (rule.get("labels") or {}).get("severity")
                    if sev not in SEVERITIES:
                        fail(f"{where}: severity {sev!r} is not one of {sorted(SEVERITIES)}")
                    if not (rule.get("annotations") or {}).get("summary"):
                        fail(f"{where}: no summary annotation")
                text = " ".join(str(v) for v in (rule.get("annotations") or {}).values())
                legend = set(re.findall(r"\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)", text))
                u, _ = check_promql(where, str(rule["expr"]), target_labels, legend)
                used |= u
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            fail(f"deploy/alerts.yml: duplicate rule names {sorted(dupes)}")
        ok(f"deploy/alerts.yml: {len(names)} rules checked (structure, PromQL, metric names, labels)")
    else:
        # Fallback: one-line exprs and block scalars, found by indentation.
        lines = read(path).splitlines()
        count = 0
        for i, line in enumerate(lines):
            m = re.match(r"^(\s*)expr:\s*(.*)$", line)
            if not m:
                continue
            indent, value = len(m.group(1)), m.group(2)
            if value in ("|", ">", "|-", ">-"):
                body = []
                for nxt in lines[i + 1:]:
                    if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                        break
                    body.append(nxt.strip())
                value = " ".join(body)
            u, _ = check_promql(f"deploy/alerts.yml line {i + 1}", value, target_labels)
            used |= u
            count += 1
        ok(f"deploy/alerts.yml: {count} exprs checked (PromQL, metric names, labels; structure not checked without PyYAML)")
    return used


def check_grafana(target_labels):
    path = os.path.join(DEPLOY, "grafana", "mono-dashboard.json")
    try:
        dash = json.loads(read(path))
    except (OSError, ValueError) as e:
        fail(f"{rel(path)} does not parse: {e}")
        return set()
    where = rel(path)
    if not isinstance(dash.get("schemaVersion"), int) or not 36 <= dash["schemaVersion"] <= 41:
        fail(f"{where}: schemaVersion {dash.get('schemaVersion')} (expected 36..41)")
    for key in ("uid", "title"):
        if not dash.get(key):
            fail(f"{where}: no {key}")
    variables = (dash.get("templating") or {}).get("list", [])
    ds_vars = [v["name"] for v in variables if v.get("type") == "datasource" and v.get("query") == "prometheus"]
    if not ds_vars:
        fail(f"{where}: no Prometheus datasource variable")
    panels = []
    for p in dash.get("panels", []):
        panels.append(p)
        panels += p.get("panels", [])  # collapsed rows hold their panels
    ids = [p.get("id") for p in panels]
    if len(set(ids)) != len(ids):
        fail(f"{where}: duplicate panel ids")
    used = set()
    boxes = []
    n_targets = 0
    for p in panels:
        title = p.get("title", "?")
        gp = p.get("gridPos") or {}
        if not all(isinstance(gp.get(k), int) for k in "hwxy") or gp["x"] + gp["w"] > 24:
            fail(f"{where} panel '{title}': bad gridPos {gp}")
        else:
            for other_title, o in boxes:
                if gp["x"] < o["x"] + o["w"] and o["x"] < gp["x"] + gp["w"] and gp["y"] < o["y"] + o["h"] and o["y"] < gp["y"] + gp["h"]:
                    fail(f"{where}: panels '{title}' and '{other_title}' overlap")
            boxes.append((title, gp))
        if p.get("type") == "row":
            continue
        targets = p.get("targets") or []
        if not targets:
            fail(f"{where} panel '{title}': no targets")
        ds = (p.get("datasource") or {}).get("uid", "")
        if ds_vars and ds != "${%s}" % ds_vars[0]:
            fail(f"{where} panel '{title}': datasource {ds!r} is not the ${{{ds_vars[0]}}} variable")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            fail(f"{where} panel '{title}': duplicate refIds")
        for t in targets:
            n_targets += 1
            expr = t.get("expr", "")
            if not expr.strip():
                fail(f"{where} panel '{title}' target {t.get('refId')}: empty expr")
                continue
            legend = set(re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", t.get("legendFormat", "")))
            u, _ = check_promql(f"{where} panel '{title}'", expr, target_labels, legend)
            used |= u
    for v in variables:
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            m = re.fullmatch(r"label_values\((.*),\s*([a-zA-Z_]+)\)", q.strip())
            if not m:
                fail(f"{where} variable {v.get('name')}: unexpected query {q}")
            else:
                u, _ = check_promql(f"{where} variable {v.get('name')}", m.group(1), target_labels, [m.group(2)])
                used |= u
    wanted = {
        "queue depth by state": "mono_jobs", "reports": "mono_reports_total", "candidates": "mono_worker_candidates_total",
        "failures by class": "mono_failures", "lease expiries": "mono_leases_total", "workers": "mono_workers",
        "DB size": "mono_db_bytes", "GPU clocks": "mono_worker_gpu_sm_clock_mhz", "GPU temperature": "mono_worker_gpu_temperature_celsius",
    }
    for what, metric in wanted.items():
        if metric not in used:
            fail(f"{where}: no panel shows {what} ({metric})")
    ok(f"{where}: {len([p for p in panels if p.get('type') != 'row'])} panels, {n_targets} targets checked "
       f"(every panel has a target; PromQL, metric names, labels, layout)")
    return used


# ---------------------------------------------------------------------------------------
# Command lines: systemd units, env files, Kubernetes args, Dockerfiles


def check_flags(where, binary, args):
    allowed = FLAGS[binary]
    parsed = source_flags(binary)
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if a not in allowed:
                fail(f"{where}: {binary} has no flag {a} (it takes {sorted(allowed)})")
            elif parsed is not None and a not in parsed - {"--help"}:
                fail(f"{where}: {FLAG_SOURCES[binary]} does not parse {a}")
            elif a not in VALUELESS_FLAGS:
                if i + 1 >= len(args) or args[i + 1].startswith("--"):
                    fail(f"{where}: {a} needs a value")
                i += 1
        i += 1


def parse_unit(path):
    sections, current = {}, None
    text = read(path).replace("\\\n", " ")
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", ";")):
            continue
        if s.startswith("["):
            current = s.strip("[]")
            sections.setdefault(current, [])
            continue
        k, _, v = s.partition("=")
        sections.setdefault(current, []).append((k.strip(), v.strip()))
    return sections


def parse_env_file(path):
    env = {}
    for line in read(path).splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if "=" not in s:
            fail(f"{rel(path)}: not KEY=value: {s}")
            continue
        k, _, v = s.partition("=")
        env[k.strip()] = v.strip().strip('"')
    return env


def check_systemd():
    folder = os.path.join(DEPLOY, "systemd")
    units = sorted(f for f in os.listdir(folder) if f.endswith((".service", ".timer")))
    env_files = sorted(f for f in os.listdir(folder) if f.endswith(".env"))
    referenced_vars = set()
    env_by_unit = {}
    for u in units:
        path = os.path.join(folder, u)
        sec = parse_unit(path)
        svc = dict((k, v) for k, v in sec.get("Service", []))
        if u.endswith(".timer"):
            if not os.path.exists(os.path.join(folder, u[: -len(".timer")] + ".service")):
                fail(f"{rel(path)}: no matching .service")
            continue
        defaults = {}
        for k, v in sec.get("Service", []):
            if k == "Environment":
                name, _, value = v.partition("=")
                defaults[name] = value
        env_by_unit[u] = defaults
        exec_start = svc.get("ExecStart", "")
        words = exec_start.split()
        if not words:
            fail(f"{rel(path)}: no ExecStart")
            continue
        binary = os.path.basename(words[0].lstrip("-+@!:"))
        for var in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", exec_start):
            referenced_vars.add(var)
            if var not in defaults:
                fail(f"{rel(path)}: ExecStart uses ${var}, which has no Environment= default (the env file is optional)")
        if binary in FLAGS:
            check_flags(rel(path), binary, words[1:])
            if svc.get("Restart") != "on-failure":
                fail(f"{rel(path)}: Restart is {svc.get('Restart')!r}, not on-failure")
            if not svc.get("User") or svc.get("User") == "root":
                fail(f"{rel(path)}: no dedicated User=")
            if "mono" not in svc.get("StateDirectory", "").split():
                fail(f"{rel(path)}: StateDirectory does not include mono")
            if not any(k == "EnvironmentFile" and "/etc/mono/" in v for k, v in sec.get("Service", [])):
                fail(f"{rel(path)}: no EnvironmentFile under /etc/mono/")
            if binary == "mono-worker":
                if svc.get("PrivateDevices", "no") not in ("no", "false"):
                    fail(f"{rel(path)}: PrivateDevices hides /dev/nvidia* from the worker")
                allows = [v for k, v in sec["Service"] if k == "DeviceAllow"]
                if svc.get("DevicePolicy") in ("closed", "strict") and not any("nvidia" in a for a in allows):
                    fail(f"{rel(path)}: closed device policy without DeviceAllow for the NVIDIA devices")
        for k, v in sec.get("Service", []):
            if k == "EnvironmentFile":
                continue
            for var in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", v):
                referenced_vars.add(var)
    ok(f"deploy/systemd: {len(units)} units (flags, environment defaults, user, restart, state, GPU devices)")
    # Env files: every key is used by a unit (catches typos); flags inside *_ARGS are real.
    for e in env_files:
        path = os.path.join(folder, e)
        env = parse_env_file(path)
        binary = "mono-tuner-server" if "server" in e else "mono-worker"
        for k, v in env.items():
            if k not in referenced_vars:
                fail(f"{rel(path)}: {k} is not used by any unit in deploy/systemd")
            if k.endswith("_ARGS"):
                check_flags(f"{rel(path)} {k}", binary, v.split())
    ok(f"deploy/systemd: {len(env_files)} env files (every variable used by a unit, flags valid)")


K8S_KINDS_NAMESPACED = {"ConfigMap", "Secret", "Deployment", "DaemonSet", "Service", "PersistentVolumeClaim", "StatefulSet", "Job", "CronJob"}


def check_k8s(parsed):
    folder = os.path.join(DEPLOY, "k8s")
    kust_path = os.path.join(folder, "kustomization.yaml")
    kust = (parsed.get(kust_path) or [{}])[0]
    resources = kust.get("resources", [])
    for r in resources:
        if not os.path.exists(os.path.join(folder, r)):
            fail(f"deploy/k8s/kustomization.yaml: resource {r} not found")
    listed = set(resources)
    for f in sorted(os.listdir(folder)):
        if f.endswith(".yaml") and f != "kustomization.yaml" and f not in listed and ".example." not in f:
            fail(f"deploy/k8s/{f} is not listed in kustomization.yaml (name it *.example.yaml if that is on purpose)")
    objects = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".yaml") and f != "kustomization.yaml":
            for d in parsed.get(os.path.join(folder, f), []):
                objects.append((f, d))
    by_kind = {}
    for f, d in objects:
        for key in ("apiVersion", "kind"):
            if not d.get(key):
                fail(f"deploy/k8s/{f}: no {key}")
        md = d.get("metadata") or {}
        if not md.get("name"):
            fail(f"deploy/k8s/{f}: no metadata.name")
        if d.get("kind") in K8S_KINDS_NAMESPACED and md.get("namespace") != "mono":
            fail(f"deploy/k8s/{f}: {d.get('kind')} {md.get('name')} is not in namespace mono")
        by_kind.setdefault(d.get("kind"), []).append((f, d))
    configmap_keys = set()
    for _, d in by_kind.get("ConfigMap", []):
        configmap_keys |= set((d.get("data") or {}).keys())
    secrets = {(d["metadata"]["name"], k) for _, d in by_kind.get("Secret", []) for k in (d.get("stringData") or d.get("data") or {})}
    pvcs = {d["metadata"]["name"] for _, d in by_kind.get("PersistentVolumeClaim", [])}

    workloads = by_kind.get("Deployment", []) + by_kind.get("DaemonSet", [])
    server_seen = gpu_seen = compile_seen = False
    for f, d in workloads:
        name = d["metadata"]["name"]
        where = f"deploy/k8s/{f} {d['kind']} {name}"
        spec = d.get("spec", {})
        pod = spec.get("template", {}).get("spec", {})
        pod_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
        sel = (spec.get("selector") or {}).get("matchLabels", {})
        if any(pod_labels.get(k) != v for k, v in sel.items()):
            fail(f"{where}: selector {sel} does not match the pod labels")
        if not (pod.get("securityContext") or {}).get("runAsNonRoot"):
            fail(f"{where}: pods do not set runAsNonRoot")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for v in volumes.values():
            if "persistentVolumeClaim" in v and v["persistentVolumeClaim"]["claimName"] not in pvcs:
                fail(f"{where}: claim {v['persistentVolumeClaim']['claimName']} is not defined")
            if "secret" in v and (v["secret"]["secretName"], "token") not in secrets:
                fail(f"{where}: secret {v['secret']['secretName']} with key token is not in secret.example.yaml")
        for c in pod.get("containers", []):
            cw = f"{where} container {c.get('name')}"
            image = c.get("image", "")
            binary = "mono-tuner-server" if "server" in image else "mono-worker" if "worker" in image else None
            args = [str(a) for a in c.get("args", [])]
            if binary:
                check_flags(cw, binary, args)
            else:
                fail(f"{cw}: image {image!r} is neither mono-tuner-server nor mono-worker")
            env_names = {e["name"] for e in c.get("env", [])}
            for a in args:
                for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", a):
                    if var not in env_names and var not in configmap_keys:
                        fail(f"{cw}: $({var}) is neither in env nor in the ConfigMap")
            ports = {p.get("name") for p in c.get("ports", [])} | {p.get("containerPort") for p in c.get("ports", [])}
            for probe in ("livenessProbe", "readinessProbe"):
                pr = c.get(probe) or {}
                hg = pr.get("httpGet") or {}
                if hg.get("path") != "/metrics":
                    fail(f"{cw}: {probe} is not an HTTP GET of /metrics")
                elif hg.get("port") not in ports:
                    fail(f"{cw}: {probe} port {hg.get('port')} is not a container port")
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    fail(f"{cw}: mounts unknown volume {m['name']}")
            gpus = ((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
            if binary == "mono-tuner-server":
                server_seen = True
                if spec.get("replicas") != 1 or (spec.get("strategy") or {}).get("type") != "Recreate":
                    fail(f"{where}: the server needs replicas 1 and strategy Recreate (SQLite is single-writer)")
                if not any("persistentVolumeClaim" in v for v in volumes.values()):
                    fail(f"{where}: the database is not on a PersistentVolumeClaim")
                if gpus:
                    fail(f"{where}: the server asks for a GPU")
            elif "--compile-only" in args:
                compile_seen = True
                if gpus:
                    fail(f"{where}: a compile-only worker asks for a GPU")
            elif binary == "mono-worker":
                gpu_seen = True
                if not gpus:
                    fail(f"{where}: a GPU worker without an nvidia.com/gpu limit")
                if not pod.get("nodeSelector") and not pod.get("affinity"):
                    fail(f"{where}: a GPU worker without a nodeSelector for GPU nodes")
    for svc_f, svc in by_kind.get("Service", []):
        selector = svc["spec"].get("selector", {})
        targets = [w for w in workloads if all(w[1]["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]
        if not targets:
            fail(f"deploy/k8s/{svc_f}: the selector {selector} matches no workload")
        for p in svc["spec"].get("ports", []):
            names = {pp.get("name") for _, w in targets for c in w["spec"]["template"]["spec"]["containers"] for pp in c.get("ports", [])}
            if isinstance(p.get("targetPort"), str) and p["targetPort"] not in names:
                fail(f"deploy/k8s/{svc_f}: targetPort {p['targetPort']} is not a port of the selected pods")
    for what, seen in (("server Deployment", server_seen), ("GPU worker", gpu_seen), ("compile-only worker", compile_seen)):
        if not seen:
            fail(f"deploy/k8s: no {what}")
    ok(f"deploy/k8s: {len(objects)} objects (kustomization, namespaces, flags, $(VARS), probes, volumes, "
       f"server replicas/strategy/PVC, GPU and compile-only workers, service ports)")


def dockerignore_patterns(path):
    if not os.path.exists(path):
        return []
    return [l.strip() for l in read(path).splitlines() if l.strip() and not l.startswith("#")]


def ignored(relpath, patterns):
    parts = relpath.split("/")
    for pat in patterns:
        p = pat.lstrip("/")
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if fnmatch.fnmatch(prefix, p) or (p.startswith("**/") and fnmatch.fnmatch(parts[i - 1], p[3:])):
                return True
    return False


def check_dockerfiles():
    folder = os.path.join(DEPLOY, "docker")
    files = sorted(f for f in os.listdir(folder) if f.startswith("Dockerfile.") and not f.endswith(".dockerignore"))
    for f in files:
        path = os.path.join(folder, f)
        where = rel(path)
        text = read(path).replace("\\\n", " ")
        patterns = dockerignore_patterns(path + ".dockerignore")
        stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M | re.I)
        if len(stages) < 2:
            fail(f"{where}: not multi-stage")
        if not any(s[0].startswith("debian:") for s in stages):
            fail(f"{where}: does not build from Debian")
        if "scripts/install-deps.sh" not in text:
            fail(f"{where}: does not install the packages of scripts/install-deps.sh")
        for m in re.finditer(r"^(COPY|ADD)\s+(.*)$", text, re.M):
            words = [w for w in m.group(2).split() if not w.startswith("--")]
            if "--from=" in m.group(2) or len(words) < 2:
                continue
            for src in words[:-1]:
                if src.startswith(("http://", "https://")):
                    continue
                if src == ".":
                    continue
                if not os.path.exists(os.path.join(ROOT, src)):
                    fail(f"{where}: {m.group(1)} {src}: not in the repository")
                elif ignored(src, patterns):
                    fail(f"{where}: {m.group(1)} {src}: excluded by {f}.dockerignore")
        final = text[[m.start() for m in re.finditer(r"^FROM\s", text, re.M)][-1]:]
        users = re.findall(r"^USER\s+(\S+)", final, re.M)
        if not users or users[-1].split(":")[0] in ("root", "0"):
            fail(f"{where}: the final stage does not run as a non-root USER")
        ep = re.search(r"^ENTRYPOINT\s+(\[.*\])", final, re.M)
        if not ep:
            fail(f"{where}: no ENTRYPOINT")
            continue
        entry = json.loads(ep.group(1))
        binary = os.path.basename(entry[0])
        if binary not in FLAGS:
            fail(f"{where}: ENTRYPOINT {entry[0]} is not a Mono daemon")
            continue
        cmd = re.search(r"^CMD\s+(\[.*\])", final, re.M)
        check_flags(where, binary, entry[1:] + (json.loads(cmd.group(1)) if cmd else []))
        if binary == "mono-worker" and "NVIDIA_VISIBLE_DEVICES" not in final:
            fail(f"{where}: the worker image does not ask the NVIDIA runtime for GPUs")
        for d in ("build", "tests", ".git"):
            if not ignored(d, patterns):
                fail(f"{where}: {d}/ is sent with the build context ({f}.dockerignore)")
    ok(f"deploy/docker: {len(files)} Dockerfiles (stages, COPY sources present and not ignored, non-root, flags)")


def check_docs():
    doc = os.path.join(ROOT, "docs", "deploy.md")
    if not os.path.exists(doc):
        fail("docs/deploy.md is missing")
        return
    text = read(doc)
    missing = []
    for dirpath, _, names in os.walk(DEPLOY):
        for n in names:
            r = rel(os.path.join(dirpath, n))
            if r not in text and n not in text:
                missing.append(r)
    if missing:
        fail(f"docs/deploy.md does not mention {sorted(missing)}")
    # Every deploy/... path named in the docs or the files' comments exists.
    sources = [doc] + [os.path.join(dp, n) for dp, _, ns in os.walk(DEPLOY) for n in ns]
    broken = set()
    for s in sources:
        text = read(s)
        for m in re.finditer(r"(?<![\w/.-])(deploy/[A-Za-z0-9_./@{},-]*[A-Za-z0-9_@}])", text):
            p = m.group(1)
            line = text[text.rfind("\n", 0, m.start()) + 1: text.find("\n", m.end())]
            if "kubectl" in line and re.fullmatch(r"deploy/[a-z0-9-]+", p) and not os.path.exists(os.path.join(ROOT, p)):
                continue  # kubectl's deploy/NAME (a Deployment), not a path
            b = re.search(r"\{([^}]*)\}", p)
            paths = [p[: b.start()] + alt + p[b.end():] for alt in b.group(1).split(",")] if b else [p]
            for q in paths:
                if not os.path.exists(os.path.join(ROOT, q)):
                    broken.add(f"{rel(s)}: {q}")
    for b in sorted(broken):
        fail(f"names a path that does not exist: {b}")
    ok("docs/deploy.md mentions every file of deploy/, and every deploy/ path named anywhere exists")


def main():
    use_yaml = "--no-yaml" not in sys.argv
    yaml = None
    if use_yaml:
        try:
            import yaml as yaml_module  # noqa: PLC0415
            yaml = yaml_module
        except ImportError:
            note("PyYAML not available (apt-get install python3-yaml): YAML gets the minimal check only")
    else:
        note("--no-yaml: checking as if PyYAML were missing")
    check_contract_against_sources()
    for binary, src in FLAG_SOURCES.items():
        flags = source_flags(binary)
        if flags is None:
            note(f"{src} absent: {binary} flags checked against the agreed list only")
        else:
            missing = sorted(FLAGS[binary] - flags)
            (fail if missing else ok)(f"{src} parses the agreed flags of {binary}" + (f" except {missing}" if missing else ""))
    parsed = check_yaml_files(yaml)
    target_labels = check_prometheus(parsed) if yaml else prometheus_target_labels_fallback()
    alert_metrics = check_alerts(parsed, target_labels, yaml is not None)
    dash_metrics = check_grafana(target_labels)
    used = alert_metrics | dash_metrics
    if not unknown_metrics:
        ours = sorted(used - set(BUILTIN))
        ok(f"metric names used by alerts and dashboard: {len(ours)} of {len(METRICS)}, all in the agreed list: {ours}")
    check_systemd()
    if yaml:
        check_k8s(parsed)
    else:
        skip("deploy/k8s semantic checks need PyYAML")
    check_dockerfiles()
    check_docs()
    return 1 if failures else 0


def prometheus_target_labels_fallback():
    text = read(os.path.join(DEPLOY, "prometheus.yml"))
    labels = set(TARGET_LABELS)
    for block in re.findall(r"^\s+labels:\n((?:\s+[a-z_]+:.*\n)+)", text, re.M):
        labels |= set(re.findall(r"^\s+([a-z_]+):", block, re.M))
    return labels


if __name__ == "__main__":
    sys.exit(main())
