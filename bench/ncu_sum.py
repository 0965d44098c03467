#!/usr/bin/env python3
"""Sums Nsight Compute's per-instruction warp-stall samples (bench/ncu_stalls.sh) by function and
by stall reason. The functions come from the cubin's SASS (cuobjdump -sass): each function's
instructions are found in ncu's address-ordered listing by their text.
  bench/ncu_sum.py ncu_sass_MODEL.csv.gz sass_MODEL.txt.gz [--top N]"""
import csv, gzip, re, sys
from collections import defaultdict


def norm(ins):
    ins = ins.strip().rstrip(';').strip()
    ins = re.sub(r'0x[0-9a-fA-F]+', 'X', ins)  # branch targets and addresses differ between the two
    return re.sub(r'\s+', ' ', ins)


def read_ncu(path):
    rows = list(csv.reader(gzip.open(path, 'rt')))
    head = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
    cols = rows[head]
    out = []
    for r in rows[head + 1:]:
        if len(r) != len(cols):
            continue
        out.append(dict(zip(cols, r)))
    return cols, out


def read_sass(path):
    funcs, cur = [], None
    for line in gzip.open(path, 'rt'):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            cur = [m.group(1), []]
            funcs.append(cur)
            continue
        m = re.match(r'\s*/\*[0-9a-f]{4,}\*/\s+(.*?);', line)
        if m and cur is not None:
            cur[1].append(norm(m.group(1)))
    return funcs


def main():
    ncu_path, sass_path = sys.argv[1], sys.argv[2]
    top = int(sys.argv[sys.argv.index('--top') + 1]) if '--top' in sys.argv else 25
    cols, rows = read_ncu(ncu_path)
    stalls = [c for c in cols if c.startswith('stall_') and '(Not Issued)' not in c]
    text = [norm(r['Source']) for r in rows]
    owner = ['?'] * len(rows)
    index = defaultdict(list)
    for i in range(len(text) - 3):
        index[tuple(text[i:i + 4])].append(i)
    for name, ins in read_sass(sass_path):
        if len(ins) < 4:
            continue
        for start in index.get(tuple(ins[:4]), []):
            n = min(len(ins), len(text) - start)
            if text[start:start + n] == ins[:n] and all(o == '?' for o in owner[start:start + n]):
                for k in range(start, start + n):
                    owner[k] = name
                break
    total = defaultdict(lambda: defaultdict(int))
    by_op = defaultdict(lambda: defaultdict(int))
    count = defaultdict(int)
    for r, o, t in zip(rows, owner, text):
        count[o] += 1
        op = t.split(' ')[0]
        if op.startswith('@'):
            op = t.split(' ')[1]
        for s in stalls:
            v = int(r[s] or 0)
            total[o][s] += v
            by_op[(o, op)][s] += v
    grand = sum(sum(v.values()) for v in total.values())
    print(f'{grand} stall samples over {len(rows)} instructions; by function (share of all samples):')
    for o, v in sorted(total.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(v.values())
        if n == 0:
            continue
        parts = ', '.join(f'{s[6:]} {100 * x / grand:.1f}' for s, x in sorted(v.items(), key=lambda kv: -kv[1]) if x * 200 >= grand)
        print(f'  {o} ({count[o]} instructions): {100 * n / grand:.1f} %: {parts}')
    print('all functions, by reason:',
          ', '.join(f'{s[6:]} {100 * sum(total[o][s] for o in total) / grand:.1f}' for s in
                    sorted(stalls, key=lambda s: -sum(total[o][s] for o in total))))
    print(f'top {top} (function, opcode) by samples:')
    for (o, op), v in sorted(by_op.items(), key=lambda kv: -sum(kv[1].values()))[:top]:
        n = sum(v.values())
        parts = ', '.join(f'{s[6:]} {x}' for s, x in sorted(v.items(), key=lambda kv: -kv[1])[:3] if x)
        print(f'  {100 * n / grand:5.1f} %  {o} {op}: {parts}')


if __name__ == '__main__':
    main()
