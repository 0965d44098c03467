#!/usr/bin/env python3
"""Splits a generated kernel (mono-compile --emit cuda) into the parts it holds, one file each,
so that a golden copy stays readable and a code-generator change shows per part:
  00-params.cu             the prelude: includes, settings, the parameter struct
  NN-gK_<name>.cu          one per group function, with the epilogue and functor types before it
(lossless: the parts, concatenated in name order, are the source)
  99-buffers-kernel.cu     the buffer macros and the kernel, mono_main
    split.py SOURCE OUTDIR"""
import os, re, sys

src, out = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines(keepends=True)
os.makedirs(out, exist_ok=True)
parts, current, name = [], [], "00-params"
functions = re.compile(r"^__device__ __forceinline__ void (g\d+_\w+)\(")
in_function = None
for line in lines:
    if line.startswith("// ---- buffers"):
        if name is None and not any(l.strip() for l in current) and parts:
            parts[-1][1].extend(current)  # blank lines after the last function stay with it
            current = []
        parts.append((name, current))
        current, name = [], "99-buffers-kernel"
    elif line.startswith("// ---- group functions") and name == "00-params":
        parts.append((name, current))
        current, name = [], None
    if name is None:
        m = functions.match(line)
        if m:
            in_function = m.group(1)
        current.append(line)
        if in_function and line.rstrip("\n") == "}":
            parts.append((f"{len(parts):02d}-{in_function}", current))
            current, in_function = [], None
        continue
    current.append(line)
parts.append((name, current))
for n, body in parts:
    if n is None:  # text between the last group function and the buffers marker
        n = f"{len(parts):02d}-tail"
    if body:
        with open(os.path.join(out, n + ".cu"), "w") as f:
            f.write("".join(body))
