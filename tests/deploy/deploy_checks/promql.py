"""PromQL checks: metric names, labels and values, and functions against metric types."""
import re

from .contract import BUILTIN, GAUGE_RANGE_FUNCS, METRICS, RANGE_FUNCS
from .report import fail

# Metric names found in expressions that are not in the agreed list.
unknown_metrics = set()

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
            errors.append(f"unknown metric {name} (not in the agreed list in tests/deploy/deploy_checks/contract.py)")
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
