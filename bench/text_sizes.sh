#!/usr/bin/env bash
# Where a kernel's text goes, by group function, on this machine (no GPU needed):
#   bench/text_sizes.sh FRAGMENT.json... [--top N]
# Each whole-model fragment (mono-compile MODEL --emit fragment; tests/data/zoo_fragments holds
# some) is emitted with its group functions out of line (build_time --source), compiled by nvcc
# for sm_90a as NVRTC would (-O3, the device library from compiler/codegen/device), and the
# functions' sizes are read from the cubin's symbol table (readelf). Prints, per fragment, the
# kernel's text and its largest functions with the groups each one runs.
# Out of line, a function is the group's code once; inlined into the kernel (the product's
# default where it makes at most 200 calls) a group's code can come out somewhat larger or smaller,
# so the sizes say where the text goes, not the inlined kernel's exact bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
top=12 fragments=()
while [ $# -gt 0 ]; do
  case "$1" in
    --top) top=$2; shift ;;
    -*) echo "text_sizes.sh: unknown flag $1" >&2; exit 2 ;;
    *) fragments+=("$1") ;;
  esac
  shift
done
[ ${#fragments[@]} -gt 0 ] || { echo "usage: bench/text_sizes.sh FRAGMENT.json... [--top N]" >&2; exit 2; }
[ -x build/bench/build_time ] || { echo "text_sizes.sh: build build/bench/build_time first (scripts/build.sh)" >&2; exit 2; }
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/inc" "$work/src"
ln -s "$PWD/compiler/codegen/device" "$work/inc/mono_dev"
for f in "${fragments[@]}"; do
  name=$(basename "$f" .json)
  # The fragment's own settings, with the group functions out of line.
  python3 - "$f" "$work/$name.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
def out_of_line(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == 'inline_groups':
                o[k] = 0
            else:
                out_of_line(v)
    elif isinstance(o, list):
        for v in o:
            out_of_line(v)
out_of_line(j)
json.dump(j, open(sys.argv[2], 'w'))
EOF
  build/bench/build_time "$work/$name.json" --source "$work/src" > "$work/$name.build.txt" 2>&1 ||
    { cat "$work/$name.build.txt" >&2; exit 1; }
  "$nvcc" -cubin -arch=sm_90a -O3 -std=c++17 -w -I"$work/inc" -o "$work/$name.cubin" "$work/src/$name.cu" 2> "$work/$name.nvcc.txt" ||
    { cat "$work/$name.nvcc.txt" >&2; exit 1; }
  python3 - "$work/$name.cubin" "$work/src/$name.cu" "$name" "$top" <<'EOF'
import re, subprocess, sys
cubin, source, name, top = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# The groups each function runs: the comment the emitter writes above it.
groups = {}
lines = open(source).read().splitlines()
for i, line in enumerate(lines):
    m = re.search(r'void (g\d+_[a-z0-9_]+)\(', line)
    if m and i > 0 and lines[i - 1].startswith('// group'):
        groups[m.group(1)] = lines[i - 1][3:]
sections = subprocess.run(['readelf', '-S', '-W', cubin], capture_output=True, text=True).stdout
text = sum(int(m.group(1), 16) for m in re.finditer(r'\.text\.\S+\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)', sections))
symbols = subprocess.run(['readelf', '-s', '-W', cubin], capture_output=True, text=True).stdout
sizes = []
for line in symbols.splitlines():
    p = line.split()
    if len(p) >= 8 and p[3] == 'FUNC' and p[-1] != 'mono_main':  # the kernel's symbol spans its section
        m = re.search(r'\d+(g\d+_[a-z0-9_]+?)E', p[-1])
        sizes.append((int(p[2], 0), m.group(1) if m else p[-1]))
sizes.sort(reverse=True)
functions = sum(s for s, _ in sizes)
print(f'{name}: kernel text {text / 1024:.1f} KB; group functions {functions / 1024:.1f} KB in {len(sizes)}')
for s, fn in sizes[:top]:
    print(f'  {s / 1024:7.1f} KB  {fn:32s} {groups.get(fn, "")}')
EOF
done
