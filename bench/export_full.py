#!/usr/bin/env python3
"""Export the full-size models with the default (torch.export, opset 20) exporter only.

    export_full.py OUTDIR [--only NAME,...] [--tiny]

Uses shared/bench/export_models.py (copied next to this script on the GPU machine as
shared_bench/). One exporter instead of two halves the export time of a device call.
"""
import argparse, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".gpu", "shared_bench"))
import export_models as em

ap = argparse.ArgumentParser()
ap.add_argument("outdir"); ap.add_argument("--only", default=""); ap.add_argument("--tiny", action="store_true")
a = ap.parse_args()
table = em.TINY if a.tiny else em.FULL
for name in (a.only.split(",") if a.only else list(table)):
    em.export(name, *table[name], a.outdir, "opset20")
