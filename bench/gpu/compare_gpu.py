#!/usr/bin/env python3
"""dtnn beside PyTorch on one GPU: training throughput of vgg16_imagenet and resnet50_imagenet on
synthetic ImageNet-shaped data, batch 64 and 128, the same precision on both sides.

For each model and batch, dtnn_bench (bench/gpu/imagenet_synthetic.json) and the PyTorch peer
(bench/gpu/torch_imagenet.py) run alternately, --rounds times each, in one session on the same
GPU; each run reports the median of its --repeats timings of --steps steps (setup, cuDNN's
algorithm search and --warmup steps excluded). Printed: both medians over the rounds, the ratio
dtnn / PyTorch (the target is >= 0.9) and the median of the paired ratios. Then, for each model at
its first batch size, one dtnn run with --profile gives the per-layer tables (forward and backward
ms, the device synchronised around each layer): what limits dtnn.

  bench/gpu/compare_gpu.py [--models vgg16_imagenet,resnet50_imagenet] [--batches 64,128]
                           [--rounds 2] [--repeats 3] [--steps 20] [--tf32] [--out DIR]
On the GPU machine: scripts/gpu-env.sh bench/gpu/compare_gpu.py --dtnn-bench .gpu/bin/dtnn_bench
Prints a table and a final `JSON {...}` line; --out keeps every run's output.
"""
import argparse, json, pathlib, statistics, subprocess, sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def json_line(text, what):
    lines = [l for l in text.splitlines() if l.startswith("JSON ")]
    if not lines:
        sys.exit(f"compare_gpu.py: {what} printed no JSON line:\n{text[-3000:]}")
    return json.loads(lines[-1][5:])


def run(cmd, what, log):
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n" + text + "\n")
    if r.returncode != 0:
        sys.exit(f"compare_gpu.py: {what} failed ({r.returncode}):\n{text[-3000:]}")
    return text


def dtnn_cmd(a, model, batch, profile=False):
    cmd = [a.dtnn_bench, str(HERE / "imagenet_synthetic.json"), "--set", f"model=\"{model}\"",
           "--set", f"training.batch_size={batch}", "--set", f"gpu.tf32={str(a.tf32).lower()}",
           "--warmup", str(a.warmup)]
    if profile:
        return cmd + ["--steps", "10", "--repeats", "1", "--profile"]
    return cmd + ["--steps", str(a.steps), "--repeats", str(a.repeats)]


def torch_cmd(a, model, batch):
    cmd = [a.python, str(HERE / "torch_imagenet.py"), "--model", model, "--batch", str(batch),
           "--steps", str(a.steps), "--warmup", str(a.warmup), "--repeats", str(a.repeats)]
    return cmd + ["--tf32"] if a.tf32 else cmd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="vgg16_imagenet,resnet50_imagenet")
    p.add_argument("--batches", default="64,128")
    p.add_argument("--rounds", type=int, default=2, help="alternating runs of each")
    p.add_argument("--repeats", type=int, default=3, help="timings within a run (its median)")
    p.add_argument("--steps", type=int, default=20, help="steps per timing")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--tf32", action="store_true", help="TF32 on both sides (default: strict float32)")
    p.add_argument("--no-profile", action="store_true", help="skip the per-layer table")
    p.add_argument("--dtnn-bench", default=str(ROOT / "build/bin/dtnn_bench"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", help="folder for the runs' output")
    a = p.parse_args()
    log = None
    if a.out:
        pathlib.Path(a.out).mkdir(parents=True, exist_ok=True)
        log = str(pathlib.Path(a.out) / "runs.log")
    results = []
    for model in a.models.split(","):
        for index, batch in enumerate(int(b) for b in a.batches.split(",")):
            mine, theirs = [], []
            gpu = ""
            for _ in range(a.rounds):
                mine.append(json_line(run(dtnn_cmd(a, model, batch), "dtnn_bench", log), "dtnn_bench")["samples_per_second"])
                t = json_line(run(torch_cmd(a, model, batch), "torch_imagenet.py", log), "torch_imagenet.py")
                theirs.append(t["samples_per_second"])
                gpu = t["gpu"]
            row = {"model": model, "batch": batch, "gpu": gpu, "tf32": a.tf32,
                   "dtnn": statistics.median(mine), "torch": statistics.median(theirs),
                   "dtnn_runs": mine, "torch_runs": theirs,
                   "paired_ratio": statistics.median(m / t for m, t in zip(mine, theirs))}
            row["ratio"] = row["dtnn"] / row["torch"]
            print(f"{model:18} batch {batch:4}: dtnn {row['dtnn']:8.1f}  PyTorch {row['torch']:8.1f} images/s"
                  f"  ratio {row['ratio']:.3f} (paired {row['paired_ratio']:.3f}; runs {mine} / {theirs})",
                  flush=True)
            if not a.no_profile and index == 0:
                text = run(dtnn_cmd(a, model, batch, profile=True), "dtnn_bench --profile", log)
                table = text[text.find("device:"):text.find("JSON ")]
                print(table, flush=True)
                row["profile"] = table
            results.append(row)
    print("JSON " + json.dumps({"results": [{k: v for k, v in r.items() if k != "profile"} for r in results]}))


if __name__ == "__main__":
    main()
