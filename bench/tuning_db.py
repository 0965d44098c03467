"""Reading a tuning database (mono.db) from Python: the helpers bench/fit_conv_model.py,
bench/prune_check.py and bench/sum_vs_whole.py share."""
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
