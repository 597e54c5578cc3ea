#!/usr/bin/env python3
"""The cost of driving dtnn from Python: the same experiment trained by `dtnn run` and by
`dtnn.Experiment(...).fit()` (the module over the same core), alternately, each in a process of its
own; the steady-state training throughput that each run's history reports (the first batches
excluded, as dtnn measures it), medians and their ratio (Python / dtnn run; 1.0 is no cost).

    bench/python_overhead.py [--experiment configs/fashion_mnist_simplecnn.json] [--epochs 1]
                             [--repeats 5] [--python /usr/bin/python3]

Prints a table and a final `JSON {...}` line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")

FIT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import dtnn
exp = dtnn.Experiment(sys.argv[2], {"training.epochs": int(sys.argv[3]), "output.progress": "none"})
print(json.dumps(exp.fit()["train_samples_per_second"]))
"""


def dtnn_run(experiment, epochs):
    with tempfile.TemporaryDirectory() as folder:
        history = os.path.join(folder, "h.json")
        subprocess.run([os.path.join(BUILD, "bin", "dtnn"), "run", experiment, "--set",
                        f"training.epochs={epochs}", "--set", 'output.progress="none"',
                        "--history", history], check=True, capture_output=True)
        with open(history) as f:
            return json.load(f)["train_samples_per_second"]


def python_fit(python, experiment, epochs):
    out = subprocess.run([python, "-c", FIT, os.path.join(BUILD, "python"), experiment,
                          str(epochs)], check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiment", default=os.path.join(ROOT, "configs",
                                                        "fashion_mnist_simplecnn.json"))
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--python", default="/usr/bin/python3")
    a = p.parse_args()
    runs = {"dtnn run": [], "python": []}
    for r in range(a.repeats):
        runs["dtnn run"].append(dtnn_run(a.experiment, a.epochs))
        runs["python"].append(python_fit(a.python, a.experiment, a.epochs))
        print(f"repeat {r + 1}: dtnn run {runs['dtnn run'][-1]:,.0f}, python "
              f"{runs['python'][-1]:,.0f} samples/s", flush=True)
    medians = {k: statistics.median(v) for k, v in runs.items()}
    ratio = medians["python"] / medians["dtnn run"]
    print(f"{'':10s} {'median samples/s':>18s}")
    for k, v in medians.items():
        print(f"{k:10s} {v:18,.0f}")
    print(f"python / dtnn run: {ratio:.3f}")
    print("JSON " + json.dumps({"experiment": a.experiment, "epochs": a.epochs, "runs": runs,
                                "medians": medians, "ratio": ratio}))


if __name__ == "__main__":
    sys.exit(main())
