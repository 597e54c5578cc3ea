#!/usr/bin/python3
"""What a training run needs besides its steps' time, dtnn beside PyTorch on the CPU: the peak
resident memory of a run and the seconds from the process's start to its first training step
(loading, plugins, the model's build, the first batch; PyTorch's import and model build).

ResNet-50 (configs/models/resnet50_imagenet.json; torchvision's resnet50 for PyTorch) on synthetic
224x224x3 images, batch 32, SGD with momentum, float32, a few steps, run alternately `--repeats`
times; medians. dtnn's figures come from its history (`seconds_to_first_step`) and the kernel's
count of the process's peak resident set (`/usr/bin/time`); the peer's from bench/gpu/
torch_imagenet.py --device cpu, which reports the same two. With `--steps 8` or more it also
gives both sides' training samples/s after the first steps (dtnn's steady-state figure skips 5);
`--model vgg16_imagenet` runs VGG-16 the same way.

  bench/scale_of_step.py [--model resnet50_imagenet] [--batch 32] [--steps 2] [--repeats 3]
                         [--threads 2] [--peer-python /usr/bin/python3]
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def synthetic_experiment(model, batch, steps, input_shape=(224, 224, 3), classes=1000):
    """An experiment training `model` for `steps` batches of synthetic samples, SGD with momentum,
    without evaluation or progress output (bench/profile_by_type.py runs it too)."""
    return {"model": model, "dataset": {"name": "synthetic", "input_shape": list(input_shape),
                                        "classes": classes, "train_samples": batch * steps,
                                        "test_samples": batch},
            "training": {"batch_size": batch, "epochs": 1, "evaluate": False},
            "optimizer": {"name": "sgd", "learning_rate": 0.01, "momentum": 0.9},
            "output": {"progress": "none"}}


def run_dtnn(a):
    config = synthetic_experiment(a.model, a.batch, a.steps)
    config["training"]["threads"] = a.threads
    with tempfile.TemporaryDirectory() as tmp:
        exp, hist, rss = (pathlib.Path(tmp) / n for n in ("exp.json", "history.json", "rss"))
        exp.write_text(json.dumps(config))
        cmd = ["/usr/bin/time", "-f", "%M", "-o", str(rss), a.dtnn, "run", str(exp), "--history", str(hist)]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"scale_of_step: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
        h = json.loads(hist.read_text())
        return dict(seconds_to_first_step=h["seconds_to_first_step"],
                    max_rss_mib=int(rss.read_text().split()[-1]) / 1024,
                    samples_per_s=h["train_samples_per_second"])


def run_torch(a):
    cmd = [a.peer_python, str(ROOT / "bench/gpu/torch_imagenet.py"), "--device", "cpu",
           "--model", a.model, "--batch", str(a.batch), "--steps", str(max(a.steps - 1, 1)),
           "--warmup", "1", "--threads", str(a.threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS=str(a.threads))).stdout
    j = json.loads([l for l in out.splitlines() if l.startswith("JSON ")][-1][5:])
    return dict(seconds_to_first_step=j["seconds_to_first_step"], max_rss_mib=j["max_rss_kib"] / 1024,
                samples_per_s=j["samples_per_second"], torch=j["torch"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50_imagenet", choices=["resnet50_imagenet", "vgg16_imagenet"])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=2,
                   help="training steps per run (the first is start-up's end; dtnn's samples/s counts "
                        "those after its 5th, so a speed comparison needs 8 or more)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dtnn", default=str(ROOT / "build/bin/dtnn"))
    p.add_argument("--peer-python", default="/usr/bin/python3")
    a = p.parse_args()
    runs = {"dtnn": [], "pytorch": []}
    for r in range(a.repeats):
        runs["dtnn"].append(run_dtnn(a))
        runs["pytorch"].append(run_torch(a))
        d, t = runs["dtnn"][-1], runs["pytorch"][-1]
        print(f"repeat {r + 1}: dtnn {d['max_rss_mib']:,.0f} MiB, first step at {d['seconds_to_first_step']:.2f} s; "
              f"pytorch {t['torch']} {t['max_rss_mib']:,.0f} MiB, first step at {t['seconds_to_first_step']:.2f} s",
              flush=True)
    summary = {}
    for side, results in runs.items():
        summary[side] = {key: statistics.median(r[key] for r in results)
                         for key in ("max_rss_mib", "seconds_to_first_step", "samples_per_s")}
    d, t = summary["dtnn"], summary["pytorch"]
    print(f"{a.model}, batch {a.batch}, {a.threads} threads, medians of {a.repeats}: peak resident memory "
          f"dtnn {d['max_rss_mib']:,.0f} MiB, pytorch {t['max_rss_mib']:,.0f} MiB "
          f"({d['max_rss_mib'] / t['max_rss_mib']:.2f}x); start to first step dtnn "
          f"{d['seconds_to_first_step']:.2f} s, pytorch {t['seconds_to_first_step']:.2f} s")
    if d["samples_per_s"] > 0 and t["samples_per_s"] > 0:  # dtnn's needs more than its 5 warm-up steps
        print(f"training after the first steps: dtnn {d['samples_per_s']:.2f} samples/s, pytorch "
              f"{t['samples_per_s']:.2f} ({d['samples_per_s'] / t['samples_per_s']:.2f}x)")
    print("JSON " + json.dumps(dict(model=a.model, batch=a.batch, threads=a.threads, steps=a.steps,
                                    repeats=a.repeats, runs=runs, medians=summary)))


if __name__ == "__main__":
    main()
