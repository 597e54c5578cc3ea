#!/usr/bin/python3
"""Per-layer convolution speed of dtnn beside PyTorch, in one run.

Runs build/bin/conv_bench (every dtnn conv algorithm, pass by pass) and the peer's
../shared/peers/conv_bench.py (PyTorch Conv2d, oneDNN) on the layers they share (simplecnn and
VGG16-CIFAR10 at batch 64), alternately `--repeats` times, and prints for each layer: the fastest dtnn
algorithm's forward and forward+backward times (backward-data left out on a first layer, as the
peer does), PyTorch's, and the ratios PyTorch time / dtnn time (above 1: dtnn is faster). Medians over
the repeats. Needs Debian's PyTorch: scripts/install-deps.sh --bench.

  bench/compare_conv.py --threads 2 --repeats 3
"""
import argparse, json, os, pathlib, statistics, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def last_json(out):
    return json.loads([l for l in out.splitlines() if l.startswith("JSON ")][-1][5:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--only", default="", help="substring filter on the layer label")
    p.add_argument("--peer", default=str(ROOT.parent / "shared/peers/conv_bench.py"))
    a = p.parse_args()
    if not pathlib.Path(a.peer).is_file():
        sys.exit(f"compare_conv.py: cannot find the peer's conv_bench.py at {a.peer}; pass --peer PATH")
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    dtnn_runs, torch_runs = [], []
    for r in range(a.repeats):
        cmd = [str(ROOT / "build/bin/conv_bench"), "--nets", "scnn,vgg", "--min-time", str(a.min_time)]
        if a.only:
            cmd += ["--only", a.only]
        dtnn_runs.append(last_json(subprocess.run(cmd, check=True, env=env, capture_output=True, text=True).stdout))
        cmd = ["/usr/bin/python3", a.peer, "--threads", str(a.threads), "--min-time", str(a.min_time)]
        if a.only:
            cmd += ["--only", a.only]
        torch_runs.append(last_json(subprocess.run(cmd, check=True, env=env, capture_output=True, text=True).stdout))
        print(f"repeat {r + 1} of {a.repeats} done", file=sys.stderr)
    # Per layer and algorithm: medians over the repeats.
    ours = {}
    for run in dtnn_runs:
        for row in run["rows"]:
            ours.setdefault(row["layer"], {}).setdefault(row["algorithm"], []).append(row)
    theirs = {}
    for run in torch_runs:
        for row in run["rows"]:
            theirs.setdefault(row["layer"], []).append(row)
    print(f"{'layer':18s} {'best dtnn':10s} {'fwd ms':>8s} {'torch':>8s} {'ratio':>6s}   "
          f"{'f+b ms':>8s} {'torch':>8s} {'ratio':>6s}   best dtnn fwd+bwd")
    table = []
    for layer, rows in theirs.items():
        if layer not in ours:
            continue
        t_fwd = statistics.median(r["fwd_ms"] for r in rows)
        t_fb = statistics.median(r["fwdbwd_ms"] for r in rows)
        med = {alg: (statistics.median(r["fwd_ms"] for r in rs), statistics.median(r["fwdbwd_ms"] for r in rs))
               for alg, rs in ours[layer].items()}
        best_fwd = min(med, key=lambda k: med[k][0])
        best_fb = min(med, key=lambda k: med[k][1])
        row = dict(layer=layer, best_fwd=best_fwd, fwd_ms=med[best_fwd][0], torch_fwd_ms=t_fwd,
                   fwd_ratio=t_fwd / med[best_fwd][0], best_fwdbwd=best_fb, fwdbwd_ms=med[best_fb][1],
                   torch_fwdbwd_ms=t_fb, fwdbwd_ratio=t_fb / med[best_fb][1])
        table.append(row)
        print(f"{layer:18s} {best_fwd:10s} {row['fwd_ms']:8.3f} {t_fwd:8.3f} {row['fwd_ratio']:5.2f}x   "
              f"{row['fwdbwd_ms']:8.3f} {t_fb:8.3f} {row['fwdbwd_ratio']:5.2f}x   {best_fb}")
    print("JSON " + json.dumps(dict(threads=a.threads, repeats=a.repeats, rows=table)))


if __name__ == "__main__":
    main()
