#!/usr/bin/env python3
"""Does the tuning space's pruning keep what the measurements found best? (issue 21 point 5)

    prune_check.py MONO_DB [--space-h compiler/tuning/space.h] [--cost-model compiler/codegen/planner/cost_model.cc]

For every task of a tuning database with two or more measured candidates, the estimate of its
measured best against the lowest estimate among its candidates. Candidates estimated above
prune_factor (read from space.h) times the lowest are never measured, so a ratio above it would
mean the pruning throws the best away. Convolutions are estimated with the kConv* constants of
cost_model.cc (fit_conv_model.py's model); other kinds with the estimates stored in the jobs
(their model is unchanged since). Prints, per kind and context, the largest ratio and how many
candidates the factor keeps, and exits 1 if any task's best would be pruned.
"""
import argparse, collections, json, re, sqlite3

from tuning_db import conv_problem, measure_jobs, parse


def cdiv(a, b):
    return -(-a // b)


def conv_estimate(k, s, problem, grid):  # cost_model.cc estimate_gemm_us, fp16 convolutions
    M, K, N, batch, window = (problem[x] for x in ("M", "K", "N", "batch", "window"))
    bm, bn, bk, sk = s["bm"], s["bn"], s["bk"], s["split_k"]
    waves = cdiv(batch * cdiv(M, bm) * cdiv(N, bn) * sk, grid)
    kt = cdiv(cdiv(K, sk), bk)
    gather = (k["kConvGatherWindowUs"] if window > 1 else k["kConvGatherPointUs"]) * bn * bk / 1024
    tile = bm * bn / 4096
    split = k["kConvSplitUs"] + k["kConvSplitSlotUs"] * (sk - 1) * tile * waves if sk > 1 else 0
    return waves * (k["kConvItemUs"] + kt * (k["kConvKTileUs"] + gather + k["kConvWeightUs"] * bm * bk / 1024)
                    + k["kConvEpilogueUs"] * tile) + split


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--space-h", default="compiler/tuning/space.h")
    ap.add_argument("--cost-model", default="compiler/codegen/planner/cost_model.cc")
    a = ap.parse_args()
    factor = float(re.search(r"double prune_factor = ([0-9.]+);", open(a.space_h).read()).group(1))
    consts = {m.group(1): float(m.group(2))
              for m in re.finditer(r"constexpr double (kConv\w+) = ([0-9.eE+-]+);", open(a.cost_model).read())}
    db = sqlite3.connect(a.db)
    tasks = {}
    for _, p, res in measure_jobs(db):
        ctx, cands, frag = p["context"], p["candidates"], parse(p["fragment"])
        kind = cands[0]["schedule"]["kind"]
        grid = 132 * ctx["blocks_per_sm"]
        shape = conv_problem(frag["ir"]) if kind == "conv-gemm" else None
        if kind == "conv-gemm" and not shape:
            raise SystemExit(f"task {p['signature']}: its Conv could not be read")
        t = tasks.setdefault((p["signature"], ctx["blocks_per_sm"]), {"kind": kind, "est": {}, "meas": {}})
        for c in cands:
            key = json.dumps(c["schedule"], sort_keys=True)
            t["est"][key] = conv_estimate(consts, c["schedule"], shape, grid) if shape else c["est_us"]
            ok, us = res.get(c["index"], (0, None))
            if ok and us:
                t["meas"][key] = us
    rows = collections.defaultdict(lambda: {"tasks": 0, "worst": 0.0, "cands": 0, "kept": 0, "lost": 0})
    for (sig, bpsm), t in tasks.items():
        if len(t["meas"]) < 2:
            continue
        if t["kind"] not in ("gemm", "conv-gemm"):  # only GEMM-like candidates are pruned
            continue
        lo = min(t["est"].values())
        ratio = t["est"][min(t["meas"], key=t["meas"].get)] / lo
        r = rows[(t["kind"], bpsm)]
        r["tasks"] += 1
        r["worst"] = max(r["worst"], ratio)
        r["cands"] += len(t["est"])
        r["kept"] += sum(1 for e in t["est"].values() if e <= factor * lo)
        r["lost"] += ratio > factor
    print(f"prune_factor {factor} ({a.space_h}); {a.db}")
    for (kind, bpsm), r in sorted(rows.items()):
        print(f"  {kind:10} {bpsm} block(s)/SM: {r['tasks']:3} tasks, best's estimate at most {r['worst']:.2f}x the lowest; "
              f"{r['kept']} of {r['cands']} candidates kept; {r['lost']} best(s) pruned")
    if any(r["lost"] for r in rows.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
