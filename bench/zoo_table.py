#!/usr/bin/env python3
"""Print the zoo table of a GPU bench run (bench/gpu_bench.sh --zoo full --zoo-time) from its logs.

    zoo_table.py LOGDIR   (reads zoo_NAME-EXPORTER_fp32.log, zoo_NAME-EXPORTER_fp16.log, zootime_NAME.log,
                           zootime_NAME_rK.log and zoo_baselines.json)

One row per full-size model: its worst relative error against PyTorch float32 in fp32 (bar 1e-4)
and in fp16 (bar 1e-2), Mono's fp16 median, PyTorch eager and torch.compile from the same call,
and the ratio torch.compile / Mono. With ZOO_REPEAT rounds (zootime_NAME_rK.log), Mono's number
is the median over the rounds' processes and the column says how many there were.
"""
import json, os, re, statistics, sys

logs = sys.argv[1]
base = {}
try:
    base = json.load(open(os.path.join(logs, "zoo_baselines.json")))
except Exception:
    pass


def read(name):
    try:
        return open(os.path.join(logs, name)).read()
    except OSError:
        return ""


def error(text, bar):
    m = re.search(r"worst relative error: ([\d.e+-]+|inf|nan)", text)
    if not m:
        e = re.search(r"error: (.*)", text)
        return "refused: " + e.group(1)[:60] if e else "-"
    v = float(m.group(1))
    return f"{v:.1e} {'ok' if v <= bar else 'FAIL'}"


# full-size models: the default exporter's (opset20), or the older one's (opset17) where the default failed
names = sorted({(m.group(1), m.group(2)) for f in os.listdir(logs)
                for m in [re.match(r"zoo_(?!tiny-)(.+)-(opset\d+)_fp(32|16)\.log$", f)] if m})
print(f"GPU: {base.get('gpu', '?')}   (batch 1; PyTorch {base.get('torch', '?')}; errors against PyTorch float32 on the CPU)")
print(f"{'model':<20} {'fp32 error':>14} {'fp16 error':>14} {'Mono fp16 us':>13} {'eager us':>9} {'compile us':>11} {'vs compile':>10}")
for n, exporter in names:
    e32 = error(read(f"zoo_{n}-{exporter}_fp32.log"), 1e-4)
    e16 = error(read(f"zoo_{n}-{exporter}_fp16.log"), 1e-2)
    rounds = [f"zootime_{n}.log"] + [f for f in os.listdir(logs) if re.fullmatch(rf"zootime_{re.escape(n)}_r\d+\.log", f)]
    times = [float(t.group(1)) for f in rounds for t in [re.search(r"median ([\d.]+) us per inference", read(f))] if t]
    mono = statistics.median(times) if times else None
    b = base.get("models", {}).get(n, {})
    comp, eager = b.get("compile_us"), b.get("eager_us")
    fmt = lambda x: f"{x:.1f}" if isinstance(x, (int, float)) else "-"
    ratio = f"{comp / mono:.2f}x" if mono and comp else "-"
    n = n if exporter == "opset20" else f"{n} ({exporter})"
    mono_s = fmt(mono) + (f" ({len(times)})" if len(times) > 1 else "")
    print(f"{n:<20} {e32:>14} {e16:>14} {mono_s:>13} {fmt(eager):>9} {fmt(comp):>11} {ratio:>10}")
