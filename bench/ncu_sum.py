#!/usr/bin/env python3
"""Sums Nsight Compute's per-instruction warp-stall samples (bench/ncu_stalls.sh) by function and
by stall reason. The kernel's group functions share one text section with mono_main, so the
listing is cut at the targets of the SASS's CALL.REL instructions (cuobjdump -sass): "main" is
everything before the first target, each function is named by its offset, how many warps
entered it (its first instruction's executions) and what it holds (HGMMA, HMMA, EX2, ...).
  bench/ncu_sum.py ncu_sass_MODEL.csv.gz sass_MODEL.txt.gz [--top N]"""
import bisect, csv, gzip, re, sys
from collections import Counter, defaultdict

FEATURES = ('HGMMA', 'HMMA', 'MUFU.EX2', 'MUFU.RSQ', 'UTMALDG', 'UBLKCP', 'ATOMG', 'REDG')


def read_ncu(path):
    rows = list(csv.reader(gzip.open(path, 'rt')))
    head = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
    cols = rows[head]
    return cols, [dict(zip(cols, r)) for r in rows[head + 1:] if len(r) == len(cols)]


def call_targets(path):
    targets = set()
    for line in gzip.open(path, 'rt'):
        m = re.search(r'CALL\.REL(?:\.NOINC)? (0x[0-9a-f]+)', line)
        if m:
            targets.add(int(m.group(1), 16))
    return sorted(targets)


def opcode(source):
    parts = source.split()
    if parts and parts[0].startswith('@'):
        parts = parts[1:]
    return parts[0] if parts else ''


def main():
    ncu_path, sass_path = sys.argv[1], sys.argv[2]
    top = int(sys.argv[sys.argv.index('--top') + 1]) if '--top' in sys.argv else 25
    cols, rows = read_ncu(ncu_path)
    stalls = [c for c in cols if c.startswith('stall_') and '(Not Issued)' not in c]
    starts = call_targets(sass_path)
    base = int(rows[0]['Address'], 16)
    total, by_op = defaultdict(Counter), defaultdict(Counter)
    count, entered, feats = Counter(), {}, defaultdict(set)
    for r in rows:
        off = int(r['Address'], 16) - base
        k = bisect.bisect_right(starts, off)
        name = 'main' if k == 0 else f'fn@{starts[k - 1]:#x}'
        if k and off == starts[k - 1]:
            entered[name] = int(r['Instructions Executed'] or 0)
        op = opcode(r['Source'])
        count[name] += 1
        feats[name].update(f for f in FEATURES if op.startswith(f))
        for s in stalls:
            v = int(r[s] or 0)
            total[name][s[6:]] += v
            by_op[(name, op)][s[6:]] += v
    grand = sum(sum(c.values()) for c in total.values())
    print(f'{grand} stall samples over {len(rows)} instructions; by function (% of all samples):')
    for name, c in sorted(total.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(c.values())
        if not n:
            continue
        parts = ', '.join(f'{s} {100 * v / grand:.1f}' for s, v in c.most_common() if v * 200 >= grand)
        info = f'{count[name]} instructions' + (f', entered {entered[name]} times' if name in entered else '')
        info += f', {" ".join(sorted(feats[name]))}' if feats[name] else ''
        print(f'  {name} ({info}): {100 * n / grand:.1f} %: {parts}')
    every = Counter()
    for c in total.values():
        every.update(c)
    print('all, by reason:', ', '.join(f'{s} {100 * v / grand:.1f}' for s, v in every.most_common()))
    print(f'top {top} (function, opcode):')
    for (name, op), c in sorted(by_op.items(), key=lambda kv: -sum(kv[1].values()))[:top]:
        n = sum(c.values())
        print(f'  {100 * n / grand:5.1f} %  {name} {op}: ' + ', '.join(f'{s} {v}' for s, v in c.most_common(3) if v))


if __name__ == '__main__':
    main()
