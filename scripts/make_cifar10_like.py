#!/usr/bin/python3
"""Writes a CIFAR-10-format dataset (binary version) whose classes can be learnt, for trying the
cifar10 dataset plugin and the CIFAR models where the real CIFAR-10 is not at hand.

Class k is a pattern of stripes at angle 18k degrees with a colour of its own, shifted at random,
under Gaussian noise. Writes data_batch_1..5.bin and test_batch.bin (and, with --archive, the
cifar-10-binary.tar.gz that holds them as the real archive does).

  scripts/make_cifar10_like.py OUT_DIR [--per-file 2000] [--test 2000] [--seed 0] [--archive]
"""
import argparse, io, pathlib, tarfile
import numpy as np


def records(n, rng):
    labels = rng.integers(0, 10, n)
    yy, xx = np.mgrid[0:32, 0:32].astype(np.float32)
    out = np.empty((n, 3073), np.uint8)
    for i, k in enumerate(labels):
        angle = np.deg2rad(18.0 * k)
        phase = rng.uniform(0, 2 * np.pi)
        wave = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * 0.6 + phase)
        colour = np.array([np.cos(k), np.sin(1.7 * k), np.cos(2.3 * k + 1)], np.float32)
        img = 128 + 60 * wave[None] * colour[:, None, None] + rng.normal(0, 30, (3, 32, 32))
        out[i, 0] = k
        out[i, 1:] = np.clip(img, 0, 255).astype(np.uint8).reshape(-1)
    return out.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--per-file", type=int, default=2000)
    ap.add_argument("--test", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--archive", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {f"data_batch_{i}.bin": records(a.per_file, rng) for i in range(1, 6)}
    files["test_batch.bin"] = records(a.test, rng)
    for name, data in files.items():
        (out / name).write_bytes(data)
    if a.archive:
        with tarfile.open(out / "cifar-10-binary.tar.gz", "w:gz") as t:
            for name, data in files.items():
                info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    print(f"{out}: {5 * a.per_file} training and {a.test} test records")


if __name__ == "__main__":
    main()
