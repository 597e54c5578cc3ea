#!/usr/bin/python3
"""Two dtnn conv algorithms side by side, layer by layer, as ratios of medians.

Runs build/bin/conv_bench on both algorithms `--repeats` times (each run measures both, one layer
after the other, so a slow moment of the shared machine hits both alike) and prints for every layer
and pass the median time of each and the ratio FIRST / SECOND (below 1: the first is faster), with
the workspace of each. The issue's check "gemm within 10% of i2c" is

  bench/compare_algorithms.py gemm i2c --nets resnet20,vgg,resnet50 --repeats 5
"""
import argparse, json, os, pathlib, statistics, subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
PASSES = [("fwd_ms", "fwd"), ("bwd_data_ms", "bwd-data"), ("bwd_filter_ms", "bwd-filt"), ("fwdbwd_ms", "f+b")]


def last_json(out):
    return json.loads([l for l in out.splitlines() if l.startswith("JSON ")][-1][5:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--nets", default="resnet20,vgg")
    p.add_argument("--only", default="")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--layout", default="NHWC")
    p.add_argument("--workspace", default="per_layer", choices=["per_layer", "shared"],
                   help="shared: backward-filter cannot reuse what forward left in the workspace "
                        "(i2c's columns), as in a model whose layers share one (the default)")
    a = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    cmd = [str(ROOT / "build/bin/conv_bench"), "--algorithms", f"{a.first},{a.second}", "--nets", a.nets,
           "--min-time", str(a.min_time), "--dtype", a.dtype, "--layout", a.layout,
           "--workspace", a.workspace]
    if a.only:
        cmd += ["--only", a.only]
    times = {}  # (layer, algorithm, pass) -> [ms]
    work, layers, needs_dx = {}, [], {}
    for _ in range(a.repeats):
        run = last_json(subprocess.run(cmd, check=True, env=env, capture_output=True, text=True).stdout)
        for row in run["rows"]:
            if row["layer"] not in layers:
                layers.append(row["layer"])
            needs_dx[row["layer"]] = row["needs_dx"]
            work[row["layer"], row["algorithm"]] = row["workspace_bytes"] / 2**20
            for key, _ in PASSES:
                times.setdefault((row["layer"], row["algorithm"], key), []).append(row[key])
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{a.dtype} {a.layout}, {a.threads} threads, workspace {a.workspace}, medians of {a.repeats} runs; "
          f"ratio = {a.first} / {a.second}")
    print(f"{'layer':28}" + "".join(f"{name:>22}" for _, name in PASSES) + f"{'MiB':>16}")
    result, worst = [], 0.0
    for layer in layers:
        missing = [alg for alg in (a.first, a.second) if (layer, alg, "fwd_ms") not in med]
        if missing:  # an algorithm that does not support the layer (winograd on a strided one)
            print(f"{layer:28}  not run by {', '.join(missing)}")
            continue
        line, entry = f"{layer:28}", {"layer": layer}
        for key, name in PASSES:
            x, y = med[layer, a.first, key], med[layer, a.second, key]
            skipped = key == "bwd_data_ms" and not needs_dx[layer]
            line += f"{x:8.3f}{y:8.3f}" + ("     -" if skipped else f"{x / y:6.2f}")
            entry[name] = [x, y]
        worst = max(worst, med[layer, a.first, "fwdbwd_ms"] / med[layer, a.second, "fwdbwd_ms"])
        line += f"{work[layer, a.first]:8.2f}{work[layer, a.second]:8.2f}"
        entry["workspace_mib"] = [work[layer, a.first], work[layer, a.second]]
        result.append(entry)
        print(line)
    print(f"largest f+b ratio: {worst:.2f}")
    # Each net's layers together (every shape once), forward + backward: the sum of the medians.
    totals = {}
    for entry in result:
        net = entry["layer"].split()[0]
        x, y = entry["f+b"]
        totals[net] = [totals.get(net, [0.0, 0.0])[0] + x, totals.get(net, [0.0, 0.0])[1] + y]
    for net, (x, y) in totals.items():
        print(f"{net} layers together, f+b: {x:.3f} against {y:.3f} ms, ratio {x / y:.2f}")
    print("JSON " + json.dumps({"first": a.first, "second": a.second, "repeats": a.repeats, "rows": result,
                                "totals": totals}))


if __name__ == "__main__":
    main()
