#!/usr/bin/env python3
"""Issue 21, point 3: per model, the sum of its groups' timed candidates against the whole
kernel's time, from a tuning database (bench/tune_gpu.sh leaves one in its logs, mono.db.gz).

    sum_vs_whole.py MONO_DB

For every artifact in the database: the configuration its whole-kernel job chose (context and
schedules), each group's measured time for the schedule it runs in that context (the median
of its candidate in the group's tuning job; groups that share a task count once each), their
sum, and the whole kernel's time for that configuration (the worker's timing, L2 flushed); the
same for the untuned default (configuration 0). Groups with no timed candidate (parts of an
attention group, whose tiles are fixed) are left out of the sum; "timed" counts the others. A group's job times a kernel of that group
alone, fixed costs included (launch, the fragment's own first stage), so the sum exceeds the
whole kernel by about that fixed cost per group.
"""
import json, sqlite3, sys

from tuning_db import measure_jobs, parse


def canon_ctx(c):
    return json.dumps({k: c[k] for k in ("blocks_per_sm", "register_cap", "smem_bytes", "threads")}, sort_keys=True)


def canon_sched(s):
    s = dict(s)
    s.pop("kind", None)
    s.pop("index", None)
    return json.dumps({k: v for k, v in s.items() if v not in (0, False) or k == "split_k"}, sort_keys=True)


def main():
    db = sqlite3.connect(sys.argv[1])
    # (signature, context) -> {schedule: median us}
    timed, default_of = {}, {}
    for _, p, results in measure_jobs(db):
        key = (p["signature"], canon_ctx(p["context"]))
        res = {c: us for c, (ok, us) in results.items() if ok}
        for c in p["candidates"]:
            if c.get("default"):
                default_of[key] = canon_sched(c["schedule"])
            if c["index"] in res:
                timed.setdefault(key, {})[canon_sched(c["schedule"])] = res[c["index"]]
    print(f"{'model':20} {'configuration':34} {'groups':>6} {'timed':>6} {'sum of groups us':>17} {'whole kernel us':>16} {'ratio':>6}")
    for (mj,) in db.execute("select manifest_json from artifacts"):
        m = json.loads(mj)
        t = m.get("tuning", {})
        wk = {c["config"]: c for c in t.get("whole_kernel", [])}
        model = m.get("model", {}).get("name", "?") if isinstance(m.get("model"), dict) else str(m.get("model"))
        # the whole-kernel job's configurations (contexts and schedules)
        job = db.execute("select payload from jobs where id = ?", (t.get("whole_kernel_job"),)).fetchone()
        if not job:
            continue
        configs = parse(json.loads(job[0]).get("configs"))
        timed_ok = [c for c in wk.values() if c.get("ok") and c.get("median_us")]
        if not timed_ok:
            print(f"{model[:20]:20} no whole-kernel configuration timed")
            continue
        chosen = min(timed_ok, key=lambda c: c["median_us"])["config"]
        for cfg in sorted({0, chosen}):
            if cfg not in wk or not wk[cfg].get("ok") or not wk[cfg].get("median_us"):
                continue
            conf = next(c for c in configs if c["index"] == cfg)
            ctx = canon_ctx(conf["context"])
            total, n, found = 0.0, 0, 0
            for g in m["schedule"]["groups"]:
                sig = g.get("signature")
                if not sig:
                    continue
                n += 1
                sched = conf.get("schedules", {}).get(sig)
                cands = timed.get((sig, ctx), {})
                key = (sig, ctx)
                name = canon_sched(sched) if sched is not None else default_of.get(key)
                us = cands.get(name) if name else None
                if us is not None:
                    total += us
                    found += 1
            label = conf["label"][:34]
            print(f"{model[:20]:20} {label:34} {n:6} {found:6} {total:17.1f} {wk[cfg]['median_us']:16.1f} {total / wk[cfg]['median_us']:6.2f}")


if __name__ == "__main__":
    main()
