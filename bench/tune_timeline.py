#!/usr/bin/env python3
"""Where a tuning run's time went, from the tuner's database and the workers' logs (issue 23).

  bench/tune_timeline.py MONO_DB [WORKER_LOG...]

Prints, in seconds from the first submission: per submission, when its measurements ended, when
its whole-kernel job was queued and finished, and when its artifact was done; then, from the
workers' logs, the measure and whole-kernel jobs' summed seconds and NVRTC seconds (the CPU work
that grows when several workers share a host's cores), and the measure jobs' NVRTC seconds a
candidate in 5-second windows of when they ended: whether compiles slow down while other work (the
server's compiles ahead before 8b6de83, whole-kernel jobs) shares the cores, or throughout.
"""
import re
import sqlite3
import sys


def timeline(db, t0):
    rows = db.execute(
        """SELECT s.model_name, s.id, s.finished_at,
                  (SELECT MAX(j.updated_at) FROM jobs j JOIN submission_tasks st ON st.task_id = j.task_id
                   WHERE st.submission_id = s.id AND j.kind = 'measure' AND j.state = 'done'),
                  (SELECT MIN(created_at) FROM jobs WHERE submission_id = s.id AND kind = 'whole_kernel'),
                  (SELECT MAX(updated_at) FROM jobs WHERE submission_id = s.id AND kind = 'whole_kernel' AND state = 'done')
           FROM submissions s ORDER BY s.created_at""").fetchall()

    def at(ms):
        return "-" if ms is None else f"{(ms - t0) / 1000:.1f}"

    out = []
    for name, _, finished, measured, wk_queued, wk_done in rows:
        out.append(f"timeline {name}: measurements end {at(measured)} s, whole-kernel job queued {at(wk_queued)} s, "
                   f"done {at(wk_done)} s, artifact {at(finished)} s")
    return out


JOB = re.compile(r"job (\S+) \((measure|whole_kernel), (\d+) candidates\) in ([\d.]+) s \(compile ([\d.]+) s")


def read_jobs(logs):
    """(id, kind, candidates, seconds, NVRTC seconds) of every job the workers' logs report."""
    jobs = []
    for path in logs:
        with open(path, errors="replace") as f:
            for line in f:
                m = JOB.search(line)
                if m:
                    jobs.append((m.group(1), m.group(2), int(m.group(3)), float(m.group(4)), float(m.group(5))))
    return jobs


def job_seconds(jobs):
    total = {}
    for _, kind, _, s, c in jobs:
        n, ts, tc = total.get(kind, (0, 0.0, 0.0))
        total[kind] = (n + 1, ts + s, tc + c)
    return [f"jobs {kind}: {n}, {s:.1f} s in all, NVRTC {c:.1f} s (summed over the workers)"
            for kind, (n, s, c) in sorted(total.items())]


def compile_windows(db, t0, jobs, width=5):
    ended = dict(db.execute("SELECT id, updated_at FROM jobs WHERE kind = 'measure' AND state = 'done'").fetchall())
    windows = {}
    for job, kind, candidates, _, compile_s in jobs:
        if kind == "measure" and candidates > 0 and job in ended:
            w = int((ended[job] - t0) / 1000 // width) * width
            n, s = windows.get(w, (0, 0.0))
            windows[w] = (n + 1, s + compile_s / candidates)
    return [f"measure jobs ending {w}..{w + width} s: {n}, NVRTC {s / n:.3f} s a candidate"
            for w, (n, s) in sorted(windows.items())]


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    jobs = read_jobs(sys.argv[2:])
    try:
        db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)  # never creates one
        t0 = db.execute("SELECT MIN(created_at) FROM submissions").fetchone()[0]
        if t0 is None:
            lines = ["timeline: no submission in the database"] + job_seconds(jobs)
        else:
            lines = timeline(db, t0) + job_seconds(jobs) + compile_windows(db, t0, jobs)
    except sqlite3.Error as e:
        lines = [f"timeline: cannot read {sys.argv[1]}: {e}"] + job_seconds(jobs)
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
