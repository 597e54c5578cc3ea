#!/usr/bin/python3
"""Where a model's training step goes, by kind of layer, and how close each kind runs to the FP32 peak.

  bench/profile_by_type.py [--model resnet50_imagenet] [--batch 32] [--steps 4] [--threads 2]
                           [--input 224,224,3] [--classes 1000] [--dtnn build/bin/dtnn]

Trains the model on synthetic data with `dtnn run --profile` and groups the profile's layers (blocks
left out: their layers are counted) by type, convolutions by kernel size and stride. For each kind:
the layers, milliseconds per step (forward + backward), share of the step, GFLOP/s, and that as a
fraction of the FP32 peak `dtnn info` measures for the same threads; then the rest of the step.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_of_step import synthetic_experiment  # noqa: E402


def kind_of(row):
    if row["type"] in ("conv2d", "depthwise_conv2d", "conv2d_transpose"):
        kernel = re.search(r"kernel=\((\d+),(\d+)\)", row["attributes"])
        stride = re.search(r"stride=\((\d+),(\d+)\)", row["attributes"])
        k = f"{kernel[1]}x{kernel[2]}" if kernel else "?"
        s = f"/{stride[1]}" if stride and stride[1] != "1" else ""
        return f"{row['type']} {k}{s}"
    return row["type"]


def peak_gflops(dtnn, env):
    out = subprocess.run([dtnn, "info"], env=env, check=True, capture_output=True, text=True).stdout
    m = re.search(r"FP32 peak \(measured\): ([\d.]+) GFLOPS", out)
    if not m:
        sys.exit("profile_by_type: `dtnn info` printed no 'FP32 peak (measured)' line")
    return float(m[1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50_imagenet")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--input", default="224,224,3", help="the synthetic samples' shape")
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--dtnn", default=str(ROOT / "build" / "bin" / "dtnn"))
    a = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    config = synthetic_experiment(a.model, a.batch, a.steps, [int(v) for v in a.input.split(",")],
                                  a.classes)
    config["output"]["profile"] = True
    with tempfile.TemporaryDirectory() as tmp:
        exp, hist = pathlib.Path(tmp) / "exp.json", pathlib.Path(tmp) / "history.json"
        exp.write_text(json.dumps(config))
        done = subprocess.run([a.dtnn, "run", str(exp), "--history", str(hist)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"profile_by_type: dtnn run failed ({done.returncode}):\n{done.stderr}")
        profile = json.loads(hist.read_text())["profile"]
    peak = peak_gflops(a.dtnn, env)
    kinds = collections.defaultdict(lambda: dict(layers=0, ms=0.0, gflop=0.0))
    for row in profile["layers"]:
        if row["block"]:
            continue
        k = kinds[kind_of(row)]
        ms = row["forward_ms"] + row["backward_ms"]
        k["layers"] += 1
        k["ms"] += ms
        k["gflop"] += row["gflops"] * ms / 1e3
    step_ms = profile["step_ms"]
    print(f"{a.model}, batch {a.batch}, {a.threads} thread(s), {profile['steps']} steps: "
          f"{step_ms:.1f} ms per step, {profile['step_gflops']:.1f} GFLOP/s over the step "
          f"({100 * profile['step_gflops'] / peak:.0f}% of the {peak:.0f} GFLOPS FP32 peak)")
    print("| kind | layers | ms per step | share of the step | GFLOP/s | of the peak |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, k in sorted(kinds.items(), key=lambda kv: -kv[1]["ms"]):
        gflops = k["gflop"] / (k["ms"] / 1e3) if k["ms"] > 0 and k["gflop"] > 0 else 0.0
        rate = f"{gflops:.1f} | {100 * gflops / peak:.0f}%" if gflops else "- | -"
        print(f"| {name} | {k['layers']} | {k['ms']:.1f} | {100 * k['ms'] / step_ms:.1f}% | {rate} |")
    rest = step_ms - sum(k["ms"] for k in kinds.values())
    print(f"| the rest: blocks' own work (add), loss, optimizer | | {rest:.1f} | "
          f"{100 * rest / step_ms:.1f}% | - | - |")
    print("JSON " + json.dumps(dict(model=a.model, batch=a.batch, threads=a.threads, peak=peak,
                                    step_ms=step_ms, kinds=kinds)))


if __name__ == "__main__":
    main()
