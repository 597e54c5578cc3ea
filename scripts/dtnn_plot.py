#!/usr/bin/python3
"""PNG plots of dtnn's JSON outputs (run by `dtnn plot`; Debian's python3-matplotlib).

    dtnn_plot.py HISTORY.json [--output FILE.png]   loss and metrics per epoch, training and
                                                    validation (dtnn run --history FILE.json)
    dtnn_plot.py PREDICT.json [--output FILE.png]   predicted speedup and parallel efficiency
                                                    against ranks (dtnn predict --output), with
                                                    the measured points when the file has some

The output defaults to the input's name with .png. Exit 1 with one line on a file that is
neither.
"""
import argparse
import json
import os
import sys


def fail(message):
    print(f"dtnn plot: error: {message}", file=sys.stderr)
    sys.exit(1)


def plot_history(history, out, plt):
    epochs = history.get("epochs", [])
    if not epochs:
        fail("the history has no epochs")
    metrics = [k for k in epochs[0] if k not in ("epoch", "loss", "samples", "seconds",
                                                  "samples_per_second")
               and not k.startswith("val_") and isinstance(epochs[0][k], (int, float))]
    names = ["loss"] + metrics
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    x = [e["epoch"] for e in epochs]
    for ax, name in zip(axes[0], names):
        ax.plot(x, [e[name] for e in epochs], marker="o", label="training")
        if all("val_" + name in e for e in epochs):
            ax.plot(x, [e["val_" + name] for e in epochs], marker="s", label="validation")
        ax.set_xlabel("epoch")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def plot_prediction(prediction, out, plt):
    points = prediction["points"]
    ranks = [p["ranks"] for p in points]
    fig, (speed, eff) = plt.subplots(1, 2, figsize=(10, 4))
    speed.plot(ranks, [p["speedup"] for p in points], marker="o", label="predicted")
    speed.plot(ranks, ranks, linestyle=":", color="gray", label="linear")
    eff.plot(ranks, [100 * p["efficiency"] for p in points], marker="o", label="predicted")
    measured = prediction.get("measured", [])
    if measured:
        speed.plot([m["ranks"] for m in measured], [m["speedup"] for m in measured], marker="x",
                   linestyle="none", markersize=9, label="measured")
        eff.plot([m["ranks"] for m in measured], [100 * m["efficiency"] for m in measured],
                 marker="x", linestyle="none", markersize=9, label="measured")
    net = prediction.get("network", {})
    title = f"{prediction.get('model', '')}: {net.get('latency_us', 0):g} us, " \
            f"{net.get('bandwidth_gbps', 0):g} Gb/s"
    speed.set_yscale("log", base=2)
    for ax, label in ((speed, "speedup"), (eff, "parallel efficiency (%)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend()
    speed.set_title(title)
    eff.set_ylim(0, 105)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file")
    p.add_argument("--output")
    a = p.parse_args()
    try:
        with open(a.file) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{a.file}: {e}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: install Debian's python3-matplotlib (scripts/install-deps.sh)")
    out = a.output or os.path.splitext(a.file)[0] + ".png"
    if isinstance(data, dict) and "points" in data:
        plot_prediction(data, out, plt)
    elif isinstance(data, dict) and "epochs" in data:
        plot_history(data, out, plt)
    else:
        fail(f"{a.file}: expected a history (dtnn run --history FILE.json) or a prediction "
             "(dtnn predict --output FILE.json)")
    print(f"dtnn plot: {out} written")


if __name__ == "__main__":
    main()
