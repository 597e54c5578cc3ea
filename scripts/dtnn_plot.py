#!/usr/bin/python3
"""PNG plots of dtnn's JSON outputs (run by `dtnn plot`; Debian's python3-matplotlib).

    dtnn_plot.py HISTORY.json [--output FILE.png]   loss and metrics per epoch, training and
                                                    validation (dtnn run --history FILE.json)
    dtnn_plot.py PREDICT.json [--output FILE.png]   predicted speedup and parallel efficiency
                                                    against ranks (dtnn predict --output), with
                                                    the measured points when the file has some

The output defaults to the input's name with .png; it is never the input itself, and it is written
atomically (a temporary file beside it, then renamed). The file is trusted for nothing: a field
missing or of the wrong type is one line naming the file and the field, exit 1, never a traceback.
"""
import argparse
import json
import math
import os
import sys
import tempfile


def fail(message):
    print(f"dtnn plot: error: {message}", file=sys.stderr)
    sys.exit(1)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_rows(file, key, rows, fields, positive=()):
    """rows must be a non-empty list of objects, each with the named finite numbers."""
    if not isinstance(rows, list) or not rows:
        fail(f"{file}: \"{key}\": expected a non-empty list, got {json.dumps(rows)[:60]}")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            fail(f"{file}: {key}[{i}]: expected an object, got {json.dumps(row)[:60]}")
        for f in fields:
            if not is_number(row.get(f)):
                fail(f"{file}: {key}[{i}].{f}: expected a finite number, got "
                     f"{json.dumps(row.get(f))[:60]}")
            if f in positive and row[f] <= 0:
                fail(f"{file}: {key}[{i}].{f}: expected a number > 0 (a log scale), got {row[f]}")


def plot_history(file, history, out, plt):
    epochs = history.get("epochs")
    if isinstance(epochs, list) and not epochs:
        fail(f"{file}: the history has no epochs")
    check_rows(file, "epochs", epochs, ["epoch", "loss"])
    metrics = [k for k in epochs[0] if k not in ("epoch", "loss", "samples", "seconds",
                                                  "samples_per_second")
               and not k.startswith("val_") and is_number(epochs[0][k])]
    names = ["loss"] + metrics
    check_rows(file, "epochs", epochs, names)
    for name in names:
        if all("val_" + name in e for e in epochs):
            check_rows(file, "epochs", epochs, ["val_" + name])
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
    save(fig, out)


def plot_prediction(file, prediction, out, plt):
    points = prediction["points"]
    check_rows(file, "points", points, ["ranks", "speedup", "efficiency"],
               positive=("ranks", "speedup"))
    measured = prediction.get("measured", [])
    if measured:
        check_rows(file, "measured", measured, ["ranks", "speedup", "efficiency"],
                   positive=("ranks", "speedup"))
    net = prediction.get("network", {})
    if not isinstance(net, dict) or not all(is_number(net.get(k, 0))
                                            for k in ("latency_us", "bandwidth_gbps")):
        fail(f"{file}: \"network\": expected {{\"latency_us\": L, \"bandwidth_gbps\": B}}, got "
             f"{json.dumps(net)[:60]}")
    ranks = [p["ranks"] for p in points]
    fig, (speed, eff) = plt.subplots(1, 2, figsize=(10, 4))
    speed.plot(ranks, [p["speedup"] for p in points], marker="o", label="predicted")
    speed.plot(ranks, ranks, linestyle=":", color="gray", label="linear")
    eff.plot(ranks, [100 * p["efficiency"] for p in points], marker="o", label="predicted")
    if measured:
        speed.plot([m["ranks"] for m in measured], [m["speedup"] for m in measured], marker="x",
                   linestyle="none", markersize=9, label="measured")
        eff.plot([m["ranks"] for m in measured], [100 * m["efficiency"] for m in measured],
                 marker="x", linestyle="none", markersize=9, label="measured")
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
    save(fig, out)


def save(fig, out):
    """The PNG written beside out, then renamed over it: a failure leaves the old file."""
    folder = os.path.dirname(os.path.abspath(out))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".dtnn-plot-", suffix=".png", dir=folder)
    except OSError as e:
        fail(f"{out}: cannot write in {folder} ({e.strerror})")
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, dpi=100, format="png")
        os.replace(tmp, out)
    except OSError as e:
        os.unlink(tmp)
        fail(f"{out}: cannot write ({e.strerror})")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file")
    p.add_argument("--output")
    a = p.parse_args()
    out = a.output or os.path.splitext(a.file)[0] + ".png"
    if os.path.abspath(out) == os.path.abspath(a.file) or (
            os.path.exists(out) and os.path.exists(a.file) and os.path.samefile(out, a.file)):
        fail(f"{a.file}: the picture would overwrite its own input: give --output FILE.png "
             "(the input is a history or prediction JSON)")
    if os.path.isdir(out):
        fail(f"{out}: is a directory, expected a file name for the picture")
    try:
        with open(a.file, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        fail(f"{a.file}: cannot read ({e.strerror})")
    except ValueError as e:  # JSON, or text that is not UTF-8
        fail(f"{a.file}: not a JSON file ({e})")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: install Debian's python3-matplotlib (scripts/install-deps.sh)")
    if isinstance(data, dict) and "points" in data:
        plot_prediction(a.file, data, out, plt)
    elif isinstance(data, dict) and "epochs" in data:
        plot_history(a.file, data, out, plt)
    else:
        fail(f"{a.file}: expected a history (dtnn run --history FILE.json) or a prediction "
             "(dtnn predict --output FILE.json)")
    print(f"dtnn plot: {out} written")


if __name__ == "__main__":
    main()
