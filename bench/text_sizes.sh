#!/usr/bin/env bash
# Where a kernel's text goes, by group function, on this machine (no GPU needed):
#   bench/text_sizes.sh FRAGMENT.json... [--top N]
# Each whole-model fragment (mono-compile MODEL --emit fragment; tests/data/zoo_fragments holds
# some) is built by build_time with its group functions out of line (NVRTC, as the product
# compiles: the cubin from build_time's --cache, the source from --source), and the functions'
# sizes are read from the cubin's symbol table (readelf). Prints, per fragment, the kernel's text
# and its largest functions with the groups each one runs.
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in "${fragments[@]}"; do
  name=$(basename "$f" .json)
  mkdir -p "$work/$name/cache" "$work/$name/src"
  # The fragment's own settings, with the group functions out of line.
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["inline_groups"] = 0; json.dump(j, open(sys.argv[2], "w"))' \
    "$f" "$work/$name/$name.json"
  build/bench/build_time "$work/$name/$name.json" --cache "$work/$name/cache" --source "$work/$name/src" \
    > "$work/$name/build.txt" 2>&1 || { cat "$work/$name/build.txt" >&2; exit 1; }
  cubin=$(ls "$work/$name/cache"/*.cubin)  # the cache started empty: the kernel's one compile
  python3 - "$cubin" "$work/$name/src/$name.cu" "$name" "$top" <<'EOF'
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
print(f'{name}: kernel text {text / 1024:.1f} KiB; group functions {functions / 1024:.1f} KiB in {len(sizes)}')
for s, fn in sizes[:top]:
    print(f'  {s / 1024:7.1f} KiB  {fn:32s} {groups.get(fn, "")}')
EOF
done
