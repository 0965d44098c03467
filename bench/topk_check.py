#!/usr/bin/env python3
"""Does measuring only a task's default and its lowest estimates keep what full tuning found?
(issue 21 point 5; the tuning space's max_candidates)

    topk_check.py MONO_DB [MONO_DB...] [--space-h compiler/tuning/space.h] [--least 0.95]

For every database measured in full (every candidate of every task), the gain the measured best
schedules have over the defaults, summed over the model's groups (each task's group times alone,
times its instances), and the part of it kept when each task measures only its default and its
max_candidates - 1 lowest estimates (the estimates stored in the jobs: the cost model of the
code that made them). Exits 1 if a database keeps less than --least of its gain."""
import argparse, collections, re, sqlite3

from tuning_db import measure_jobs


def gains(db_path, most):
    db = sqlite3.connect(db_path)
    instances = dict(db.execute("select task_id, instances from submission_tasks"))
    tasks = collections.defaultdict(list)  # task -> [(estimate, measured us, default?)]
    for task, payload, results in measure_jobs(db):
        for c in payload["candidates"]:
            ok, us = results.get(c["index"], (0, None))
            if ok:
                tasks[task].append((c["est_us"], us, bool(c.get("default"))))
    total = kept = 0.0
    measured = capped = 0
    for task, rows in tasks.items():
        default = [us for _, us, d in rows if d]
        if not default:
            continue
        n = instances.get(task, 1)
        best = min(us for _, us, _ in rows)
        others = sorted((r for r in rows if not r[2]), key=lambda r: r[0])[:most - 1]
        total += (default[0] - best) * n
        kept += (default[0] - min([default[0]] + [us for _, us, _ in others])) * n
        measured += len(rows)
        capped += 1 + len(others)
    return total, kept, measured, capped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dbs", nargs="+")
    ap.add_argument("--space-h", default="compiler/tuning/space.h")
    ap.add_argument("--least", type=float, default=0.95)
    a = ap.parse_args()
    most = int(re.search(r"int max_candidates = (\d+);", open(a.space_h).read()).group(1))
    ok = True
    for path in a.dbs:
        total, kept, measured, capped = gains(path, most)
        share = kept / total if total > 0 else 1.0
        print(f"{path}: the default and {most - 1} lowest estimates a task keep {kept:.1f} of {total:.1f} us of "
              f"gain ({share:.0%}), measuring {capped} of {measured} candidates")
        ok = ok and share >= a.least
    if not ok:
        print(f"FAIL: a database keeps less than {a.least:.0%} of its gain with max_candidates = {most}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
