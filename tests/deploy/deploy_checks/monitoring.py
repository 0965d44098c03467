"""YAML files, Prometheus's configuration, the alert rules and the Grafana dashboard."""
import json
import os
import re

from .contract import SEVERITIES, TARGET_LABELS
from .promql import check_promql
from .report import DEPLOY, fail, ok, read, rel

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


def prometheus_target_labels_fallback():
    text = read(os.path.join(DEPLOY, "prometheus.yml"))
    labels = set(TARGET_LABELS)
    for block in re.findall(r"^\s+labels:\n((?:\s+[a-z_]+:.*\n)+)", text, re.M):
        labels |= set(re.findall(r"^\s+([a-z_]+):", block, re.M))
    return labels
