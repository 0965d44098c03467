#!/usr/bin/env python3
"""Fit the fp16 convolution cost model (compiler/codegen/planner/cost_model.cc, kConv*) to the
measurements of a tuning database, and show how the planner's choice under the fit compares.

    fit_conv_model.py MONO_DB [--blocks-per-sm 1] [--model NAME] [--check COST_MODEL_CC]
                      [--rank-on OTHER_DB]

Reads every measured conv-gemm candidate of the given context from the database (the job
payloads carry each task's fragment and candidates, the results their medians), of the
submissions of model NAME only with --model (the shipped constants: resnet50-opset20), fits

    us = floor + waves * (item + k_tiles * (k_tile + gather * BN*BK/1024 + weights * BM*BK/1024)
                          + epilogue * BM*BN/4096)
         + [split-K > 1] * (split + slot * (splits - 1) * BM*BN/4096 * waves)

(gather: one coefficient for kernels over 1x1, one for 1x1; waves = ceil(items / 132 x blocks
per SM)) by non-negative least squares on relative error, and prints the coefficients, the
fit's error, and per task the default's, the best measured and the model's pick (the planner's
procedure: the default menu plus 64x64x32, a new choice only when 3 % better), weighted by the
groups of each task in the database's artifacts' manifests when given. --check compares the fit
with the kConv* constants of cost_model.cc and exits 1 if one differs by more than 1 % (the
test tuning_data_checks runs it on run58's database). --rank-on OTHER_DB ranks, in another
database's measurements of the same tasks, each task's candidates by the fit and by the
estimates the planner stored with them (the model of the code that planned the jobs), and
prints where the measured best falls: how many candidates a search in that order measures
before it. Pure Python.
"""
import argparse, collections, json, re, sqlite3

from tuning_db import conv_problem, parse

NAMES = ["floor", "item", "k_tile", "gather_window", "gather_point", "weights", "epilogue", "split", "slot"]
CONSTANTS = {"item": "kConvItemUs", "k_tile": "kConvKTileUs", "gather_window": "kConvGatherWindowUs",
             "gather_point": "kConvGatherPointUs", "weights": "kConvWeightUs", "epilogue": "kConvEpilogueUs",
             "split": "kConvSplitUs", "slot": "kConvSplitSlotUs"}  # the floor is not priced
MENU = [(64, 128, 32), (64, 64, 64), (32, 64, 64), (64, 64, 32)]  # default_gemm_tiles(f16, conv)


def cdiv(a, b):
    return -(-a // b)


def split_factors(k, bk):  # cost_model.cc split_k_factors
    out = [1]
    for want in (2, 3, 4, 6, 8, 12, 16):
        if k // want < 2 * bk:
            break
        s = cdiv(k, cdiv(cdiv(k, want), bk) * bk)
        if s > out[-1]:
            out.append(s)
    return out


def features(t, bm, bn, bk, sk, grid):
    items = t["batch"] * cdiv(t["M"], bm) * cdiv(t["N"], bn) * sk  # gemm_items
    waves = cdiv(items, grid)
    kt = cdiv(cdiv(t["K"], sk), bk)
    g = bn * bk / 1024
    return [1.0, waves, waves * kt, waves * kt * g * (t["window"] > 1), waves * kt * g * (t["window"] == 1),
            waves * kt * bm * bk / 1024, waves * bm * bn / 4096, float(sk > 1), (sk - 1) * bm * bn / 4096 * waves]


def nnls(X, y):
    """Non-negative least squares on relative error, by coordinate descent."""
    n = len(X[0])
    w = [1 / v ** 2 for v in y]
    A = [[sum(x[i] * x[j] * ww for x, ww in zip(X, w)) for j in range(n)] for i in range(n)]
    b = [sum(x[i] * v * ww for x, v, ww in zip(X, y, w)) for i in range(n)]
    c = [0.0] * n
    for _ in range(20000):
        for i in range(n):
            r = b[i] - sum(A[i][j] * c[j] for j in range(n) if j != i)
            c[i] = max(0.0, r / A[i][i])
    return c


def load(path, a):
    """The conv-gemm tasks and measured samples of a database (see the docstring)."""
    db = sqlite3.connect(path)
    tasks, samples, skipped = {}, [], collections.Counter()
    query = "select j.id, j.payload from jobs j where j.kind = 'measure'"
    if a.model:
        query += (" and j.task_id in (select st.task_id from submission_tasks st join submissions s"
                  " on s.id = st.submission_id where s.model_name = ?)")
    for jid, payload in db.execute(query, (a.model,) if a.model else ()):
        p = json.loads(payload)
        ctx, cands, frag = parse(p["context"]), parse(p["candidates"]), parse(p["fragment"])
        if ctx["blocks_per_sm"] != a.blocks_per_sm or not cands or cands[0]["schedule"]["kind"] != "conv-gemm":
            continue
        problem = conv_problem(frag["ir"])
        if not problem:
            skipped[p["signature"]] += 1
            continue
        t = tasks.setdefault(p["signature"], dict(problem, meas={}, default=None))
        res = {c: (ok, us) for c, ok, us in db.execute("select candidate, ok, median_us from results where job_id = ?", (jid,))}
        for c in cands:
            ok, us = res.get(c["index"], (0, None))
            s = c["schedule"]
            key = (s["bm"], s["bn"], s["bk"], s["split_k"])
            if c["default"]:
                t["default"] = key
            t.setdefault("est", {})[key] = c.get("est_us")
            if ok and us:
                t["meas"][key] = us
                samples.append((features(t, *key, 132 * a.blocks_per_sm), us))
    if skipped:
        print(f"{len(skipped)} conv-gemm task(s) skipped: their fragment's Conv could not be read")
    return db, tasks, samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--blocks-per-sm", type=int, default=1)
    ap.add_argument("--model", help="only the tasks first planned for this submitted model (its model_name)")
    ap.add_argument("--check", metavar="COST_MODEL_CC")
    ap.add_argument("--rank-on", metavar="OTHER_DB")
    a = ap.parse_args()
    db, tasks, samples = load(a.db, a)
    if not samples:
        raise SystemExit(f"no measured conv-gemm candidates at {a.blocks_per_sm} block(s)/SM in {a.db}")
    weight = collections.Counter()
    for (m,) in db.execute("select manifest_json from artifacts"):
        for g in json.loads(m).get("schedule", {}).get("groups", []):
            weight[g.get("signature")] += 1
    X, y = [s[0] for s in samples], [s[1] for s in samples]
    c = nnls(X, y)
    errs = sorted(abs(sum(ci * xi for ci, xi in zip(c, x)) - v) / v for x, v in zip(X, y))
    print(f"{len(samples)} candidates of {len(tasks)} conv tasks at {a.blocks_per_sm} block(s)/SM"
          + (f" of {a.model}" if a.model else ""))
    print("coefficients (us):", ", ".join(f"{n} {v:.4f}" for n, v in zip(NAMES, c)))
    print(f"relative error: median {errs[len(errs) // 2]:.3f}, 90th percentile {errs[int(len(errs) * 0.9)]:.3f}")
    # The planner's estimate leaves out the floor (the timing fragment's own cost, the same for
    # every candidate), which would blunt its 3 % rule.
    est = lambda t, key: sum(ci * xi for ci, xi in zip(c[1:], features(t, *key, 132 * a.blocks_per_sm)[1:]))
    total = collections.Counter()
    for sig, t in sorted(tasks.items(), key=lambda kv: (kv[1]["N"], kv[1]["K"])):
        best, pick = 1e30, None
        for bm, bn, bk in MENU:
            for sk in split_factors(t["K"], bk):
                u = est(t, (bm, bn, bk, sk))
                if u < best * 0.97:
                    best, pick = u, (bm, bn, bk, sk)
        if not t["meas"]:
            print(f"M {t['M']} K {t['K']} N {t['N']}: no measured candidate, left out")
            continue
        d, b = t["meas"].get(t["default"]), min(t["meas"].values())
        p = t["meas"].get(pick)
        w = weight[sig] or 1
        if d is not None:  # the sums compare like with like: tasks whose default was measured
            total["default"] += w * d
            total["best"] += w * b
            total["pick"] += w * (p if p else d)
        fmt = lambda k: "x".join(map(str, k[:3])) + f" split {k[3]}"
        print(f"x{w} M {t['M']:5} K {t['K']:5} N {t['N']:6} window {t['window']:2}: default {fmt(t['default'])} "
              f"{d or float('nan'):.1f} us, best {b:.1f}, pick {fmt(pick)} {p if p else float('nan'):.1f}"
              + ("" if p else " (not measured)"))
    print("sum (weighted): " + ", ".join(f"{k} {v:.1f} us" for k, v in total.items()))
    if a.rank_on:
        _, other, _ = load(a.rank_on, a)
        ranks = {"fit": [], "stored estimate": []}
        for sig, t in other.items():
            if len(t["meas"]) < 2:
                continue
            best = min(t["meas"], key=t["meas"].get)
            for name, score in (("fit", lambda k: est(t, k)), ("stored estimate", lambda k: t["est"].get(k) or 1e30)):
                order = sorted(t["meas"], key=score)
                ranks[name].append(order.index(best) + 1)
        for name, r in ranks.items():
            r.sort()
            within = lambda n: sum(1 for x in r if x <= n)
            print(f"measured best's rank by the {name} in {a.rank_on}'s {len(r)} tasks: "
                  f"first {within(1)}, top 3 {within(3)}, top 5 {within(5)}, median {r[len(r) // 2]}, worst {r[-1]}")
    if a.check:
        text = open(a.check).read()
        bad = []
        for name, const in CONSTANTS.items():
            m = re.search(rf"constexpr double {const} = ([0-9.eE+-]+);", text)
            fitted = c[NAMES.index(name)]
            if not m:
                bad.append(f"{const} not found")
            elif abs(float(m.group(1)) - fitted) > 0.01 * max(abs(fitted), 1e-3):
                bad.append(f"{const} = {m.group(1)}, the fit gives {fitted:.4f}")
        print(f"{a.check}: " + ("; ".join(bad) if bad else "every kConv* constant is the fit's (within 1 %)"))
        if bad:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
