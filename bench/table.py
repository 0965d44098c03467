#!/usr/bin/env python3
"""Print the side-by-side table of a GPU bench run from its logs.

    table.py OUTDIR    (reads OUTDIR/mono_*.log and OUTDIR/baselines.json)
"""
import json, os, re, sys

out = sys.argv[1]
base = {}
try:
    base = json.load(open(os.path.join(out, "baselines.json")))
except Exception:
    pass
gpu = base.get("gpu", "?")
rows = []
for f in sorted(os.listdir(out)):
    m = re.match(r"mono_(.+)\.log$", f)
    if not m:
        continue
    name = m.group(1)
    text = open(os.path.join(out, f)).read()
    us = re.search(r"median ([\d.]+) us per inference", text)
    err = re.search(r"worst relative error: ([\d.e+-]+|inf|nan)\s+(PASS|FAIL)", text)
    b = base.get("models", {}).get(name, {})
    rows.append((name, float(us.group(1)) if us else None, b.get("eager_us"), b.get("cudagraph_us"), b.get("compile_us"),
                 err.group(1) if err else "error", err.group(2) if err else "FAIL"))
print(f"GPU: {gpu}   (fp16, batch 1; PyTorch {base.get('torch', '?')})")
print(f"{'model':<12} {'Mono us':>9} {'eager':>9} {'CUDA graph':>11} {'compile':>9} {'vs graph':>9} {'vs compile':>10} {'rel err':>9}")
def fmt(x): return f"{x:.1f}" if isinstance(x, (int, float)) else "-"
for name, mono, eager, graph, comp, err, ok in rows:
    vs_g = f"{graph / mono:.2f}x" if mono and graph else "-"
    vs_c = f"{comp / mono:.2f}x" if mono and comp else "-"
    print(f"{name:<12} {fmt(mono):>9} {fmt(eager):>9} {fmt(graph):>11} {fmt(comp):>9} {vs_g:>9} {vs_c:>10} {err:>9} {ok}")
