#!/usr/bin/env python3
"""What a plugin written in Python costs: the default experiment trained with its convolutions done
by examples/python/numpy_conv.py (registered with dtnn.register) and by dtnn's `i2c` and `direct`,
alternately, each run in a process of its own; the steady-state training throughput each run's
history reports, medians, and each algorithm's ratio to numpy_conv.

    bench/python_plugin_cost.py [--train-limit 6400] [--repeats 3] [--python /usr/bin/python3]

Prints a table and a final `JSON {...}` line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FIT = """
import json, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import dtnn, numpy_conv
dtnn.register(numpy_conv.NumpyConv)
exp = dtnn.Experiment(sys.argv[3], {"training.epochs": 1, "output.progress": "none",
                                    "dataset.train_limit": int(sys.argv[4]),
                                    "training.evaluate": False, "conv.algorithm": sys.argv[5]})
print(json.dumps(exp.fit()["train_samples_per_second"]))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiment", default=os.path.join(ROOT, "configs/fashion_mnist_simplecnn.json"))
    p.add_argument("--train-limit", type=int, default=6400)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--python", default="/usr/bin/python3")
    a = p.parse_args()
    algorithms = ["numpy_conv", "i2c", "direct"]
    rates = {alg: [] for alg in algorithms}
    for r in range(a.repeats):
        for alg in algorithms:
            out = subprocess.run([a.python, "-c", FIT, os.path.join(ROOT, "build", "python"),
                                  os.path.join(ROOT, "examples", "python"), a.experiment,
                                  str(a.train_limit), alg],
                                 capture_output=True, text=True, check=True)
            rates[alg].append(float(out.stdout.strip().splitlines()[-1]))
        print(f"repeat {r + 1}: " + "   ".join(f"{alg} {rates[alg][-1]:,.0f} samples/s"
                                                for alg in algorithms))
    medians = {alg: statistics.median(v) for alg, v in rates.items()}
    for alg in algorithms:
        print(f"{alg:>10}: {medians[alg]:>10,.0f} samples/s, "
              f"{medians[alg] / medians['numpy_conv']:.1f}x numpy_conv")
    print("JSON " + json.dumps({"experiment": a.experiment, "train_limit": a.train_limit,
                                "repeats": a.repeats, "samples_per_second": rates,
                                "medians": medians}))


if __name__ == "__main__":
    main()
