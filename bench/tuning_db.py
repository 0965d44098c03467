"""Reading a tuning database (mono.db) from Python: the helpers bench/fit_conv_model.py,
bench/prune_check.py, bench/sum_vs_whole.py and bench/topk_check.py share."""
import ast, json, math, re


def parse(v):
    """A payload field: JSON (or, in older payloads, a Python literal); other values as they are."""
    if not isinstance(v, str):
        return v
    try:
        return json.loads(v)
    except ValueError:
        return ast.literal_eval(v)


def conv_problem(ir):
    """The implicit GEMM of a fragment's Conv: dict(M, K, N, batch, window), or None. The Conv line
    names its input and weights; their declarations may stand anywhere in the IR."""
    conv = re.search(r"%\S+: \w+\[(\d+),(\d+)(?:,(\d+))?(?:,(\d+))?\] = Conv\(%([\w.:]+), %([\w.:]+)", ir)
    w = conv and re.search(r"%" + re.escape(conv.group(6)) + r": \w+\[(\d+),(\d+),(\d+)(?:,(\d+))?\]", ir)
    if not conv or not w:
        return None
    wd = [int(x) for x in w.groups() if x]
    window = math.prod(wd[2:])
    return dict(M=int(conv.group(2)), K=wd[1] * window, N=int(conv.group(3) or 1) * int(conv.group(4) or 1),
                batch=int(conv.group(1)), window=window)


def measure_jobs(db):
    """Every measure job of a database (an sqlite3 connection): (task id, payload with its
    candidates and context parsed, {candidate index: (ok, median us)})."""
    for job, task, payload in db.execute("select id, task_id, payload from jobs where kind = 'measure'"):
        p = json.loads(payload)
        p["candidates"], p["context"] = parse(p["candidates"]), parse(p["context"])
        results = {c: (ok, us) for c, ok, us in db.execute("select candidate, ok, median_us from results where job_id = ?", (job,))}
        yield task, p, results
