#!/usr/bin/env python3
"""Time the full-size models of export_zoo.py in PyTorch on the GPU (fp16, batch 1), for the zoo
table of bench/RESULTS.md.

    zoo_baselines.py --only NAME[,NAME...] [--modes eager,compile] [--json FILE] [--shared DIR]

The models are built exactly as export_zoo.py builds them (same constructors, seed 0, the same
randomised norms). Each figure is shared/bench/baselines.py's: the median over 7 repetitions of
the mean of 200 back-to-back calls after 20 warm-up calls, timed with CUDA events; compile is
torch.compile with mode reduce-overhead. Inductor's compiles are CPU work, so every model compiles
at once in its own process; then all wait at a barrier and the timings run one process at a time,
with nothing else on the GPU or the CPU.
"""
import argparse, json, multiprocessing as mp, os, sys, time, warnings
warnings.filterwarnings("ignore")


def run_one(name, modes, shared, barrier, lock, results):
    import torch
    r = {}
    try:
        sys.path[:0] = [shared, os.path.dirname(os.path.abspath(__file__))]
        from baselines import bench
        import export_zoo
        make, inputs, _ = export_zoo.MODELS[name]
        torch.set_num_threads(2)
        torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
        torch.manual_seed(0)
        m = export_zoo.randomize_norms(make()).eval().cuda().half()
        xs = tuple(x.cuda().half() if x.is_floating_point() else x.cuda() for x in inputs())
        with torch.inference_mode():
            mc = None
            if "compile" in modes:
                t0 = time.time(); mc = torch.compile(m, mode="reduce-overhead")
                for _ in range(3): mc(*xs)
                r["compile_s"] = round(time.time() - t0, 1)
            torch.cuda.synchronize()
    except Exception as e:  # a model PyTorch can't compile still reaches the barrier
        r["error"] = str(e)[:300]
    try:
        barrier.wait(timeout=480)
    except Exception:  # another model's process died before the barrier: time this one anyway
        pass
    with lock:
        if "error" not in r:
            with torch.inference_mode():
                if "eager" in modes: r["eager_us"] = bench(lambda: m(*xs))
                if mc is not None: r["compile_us"] = bench(lambda: mc(*xs))
        results[name] = r
        print(name, json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", required=True); ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--json", default="zoo_baselines.json")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", ".gpu", "shared_bench"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    names = a.only.split(",")
    ctx = mp.get_context("spawn")
    barrier, lock, manager = ctx.Barrier(len(names)), ctx.Lock(), ctx.Manager()
    results = manager.dict()
    procs = [ctx.Process(target=run_one, args=(n, a.modes, os.path.abspath(a.shared), barrier, lock, results))
             for n in names]
    for p in procs: p.start()
    for p in procs: p.join()
    import torch
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "dtype": "fp16",
           "models": dict(results)}
    json.dump(out, open(a.json, "w"), indent=1)
    return 0 if all("error" not in r for r in results.values()) and len(results) == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
