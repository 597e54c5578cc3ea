#!/usr/bin/env python3
"""configs/models/unet.json learns to segment: a set of 16x16 grey images the test writes (a
brighter rectangle of random size and place on noise; the mask is the rectangle), as an npz
dataset of masks (targets "values", y of shape (N, H, W)), trained with the Dice loss. After three
epochs the test set's Dice loss must be below 0.2 (Dice above 0.8; untrained it is about 0.78), in
both layouts (a one-channel mask is the same bytes in NHWC and NCHW).

    segmentation.py DTNN [--gpu]

--gpu trains on the GPU (`--enable-gpu true`, NCHW only: the layout the CUDA layers take).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def shapes(rng, n, size=16):
    x = rng.normal(0.2, 0.1, (n, size, size)).astype(np.float32)
    y = np.zeros((n, size, size), np.float32)
    for i in range(n):
        h, w = rng.integers(3, 10, 2)
        r, c = rng.integers(0, size - h + 1), rng.integers(0, size - w + 1)
        x[i, r:r + h, c:c + w] += 0.6
        y[i, r:r + h, c:c + w] = 1
    return x, y


def main(dtnn, gpu=False):
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "shapes.npz")
        (xtr, ytr), (xte, yte) = shapes(rng, 512), shapes(rng, 128)
        np.savez(data, x_train=xtr, y_train=ytr, x_test=xte, y_test=yte)
        experiment = os.path.join(d, "unet.json")
        with open(experiment, "w") as f:
            json.dump({"model": "unet",
                       "dataset": {"name": "npz", "path": data, "targets": "values"},
                       "training": {"batch_size": 32, "epochs": 3, "seed": 1},
                       "optimizer": {"name": "adam", "learning_rate": 0.001},
                       "loss": "dice", "metrics": ["regression_mae"]}, f)
        for layout in ("NCHW",) if gpu else ("NHWC", "NCHW"):
            history = os.path.join(d, f"history-{layout}.json")
            r = subprocess.run([dtnn, "run", experiment, "--history", history,
                                "--set", f'training.tensor_format="{layout}"',
                                "--set", 'output.progress="lines"']
                               + (["--enable-gpu", "true"] if gpu else []),
                               capture_output=True, text=True, timeout=600)
            check(r.returncode == 0, f"{layout}: dtnn run exits 0 ({r.stderr[-300:]})")
            if r.returncode != 0:
                continue
            h = json.load(open(history))
            before, after = h["test_before"]["loss"], h["test"]["loss"]
            check(before > 0.5, f"{layout}: untrained, the test set's Dice loss is {before:.3f}")
            check(after < 0.2, f"{layout}: trained, the test set's Dice loss is {after:.3f} (< 0.2)")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1], gpu="--gpu" in sys.argv[2:])
