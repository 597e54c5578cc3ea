#!/usr/bin/env python3
"""Cuts an MNIST-format dataset (IDX files, as Debian's dataset-fashion-mnist has them) into one
folder per rank, for federated runs where each rank reads only its own data
(`--no-shared-data --dataset-path 'OUT/site_{rank}'`, docs/federated.md):

    scripts/split-dataset.py SOURCE OUT --ranks 4 [--unbalanced ALPHA] [--sizes 4,2,1,1] [--seed 1]

Each OUT/site_R holds its share of the training split (train-images-idx3-ubyte.gz and
train-labels-idx1-ubyte.gz) and the whole test split (the same test set everywhere, so that the
ranks' accuracies compare). Every training sample goes to exactly one rank.

- balanced (the default): every rank gets each class in the dataset's proportions, and equal
  shares (or the relative --sizes given);
- --unbalanced ALPHA: each class is dealt to the ranks in proportions drawn from a Dirichlet
  distribution of concentration ALPHA (0.1: most ranks see few classes; 100: nearly balanced), the
  usual model of clients whose data differ.

The split is a function of --seed. OUT/split.json records every rank's class counts.
"""
import argparse
import gzip
import json
import math
import os
import random
import struct
import sys


class Idx:
    """An IDX file of unsigned bytes: its shape and its data, one record per first index."""

    def __init__(self, path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data = f.read()
        if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 8:
            sys.exit(f"split-dataset: {path}: not an IDX file of unsigned bytes")
        dims = data[3]
        if dims < 1 or len(data) < 4 + 4 * dims:
            sys.exit(f"split-dataset: {path}: truncated header")
        self.shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
        self.record = math.prod(self.shape[1:])
        self.data = data[4 + 4 * dims:]
        if len(self.data) != self.shape[0] * self.record:
            sys.exit(f"split-dataset: {path}: {len(self.data)} bytes of data, the header says "
                     f"{self.shape}")

    def __getitem__(self, i):
        return self.data[i * self.record:(i + 1) * self.record]

    def write(self, path, indices):
        shape = (len(indices),) + tuple(self.shape[1:])
        header = bytes([0, 0, 8, len(shape)]) + struct.pack(">" + "I" * len(shape), *shape)
        with gzip.open(path, "wb", compresslevel=6) as f:
            f.write(header + b"".join(self[i] for i in indices))


def find(folder, stem):
    for suffix in (".gz", ""):
        path = os.path.join(folder, stem + suffix)
        if os.path.exists(path):
            return path
    sys.exit(f"split-dataset: {folder}: no {stem}[.gz]")


def dirichlet(rng, alpha, n):
    draws = [rng.gammavariate(alpha, 1.0) for _ in range(n)]
    total = sum(draws)
    return [x / total for x in draws] if total > 0 else [1.0 / n] * n


def shares(labels, ranks, sizes, alpha, rng):
    """Each rank's sample indices, ascending."""
    by_class = {}
    for i, c in enumerate(labels):
        by_class.setdefault(c, []).append(i)
    out = [[] for _ in range(ranks)]
    for c in sorted(by_class):
        members = by_class[c]
        rng.shuffle(members)
        if alpha is None:
            weights = [s / sum(sizes) for s in sizes]
        else:
            weights = [w * s for w, s in zip(dirichlet(rng, alpha, ranks), sizes)]
            weights = [w / sum(weights) for w in weights]
        cut, start = 0.0, 0
        for r in range(ranks):
            cut += weights[r]
            end = len(members) if r == ranks - 1 else round(cut * len(members))
            out[r].extend(members[start:end])
            start = end
    return [sorted(part) for part in out]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="folder of train-/t10k- IDX files")
    p.add_argument("out", help="folder to write site_0, site_1, ... into")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--unbalanced", type=float, metavar="ALPHA",
                   help="Dirichlet concentration of each class over the ranks")
    p.add_argument("--sizes", help="relative share of each rank, comma-separated")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.ranks < 1:
        sys.exit("split-dataset: --ranks: expected at least 1")
    if a.unbalanced is not None and not a.unbalanced > 0:
        sys.exit("split-dataset: --unbalanced: expected a concentration > 0")
    sizes = [1.0] * a.ranks
    if a.sizes:
        try:
            sizes = [float(x) for x in a.sizes.split(",")]
        except ValueError:
            sys.exit(f"split-dataset: --sizes: expected numbers, got '{a.sizes}'")
        if len(sizes) != a.ranks or not all(x > 0 for x in sizes):
            sys.exit(f"split-dataset: --sizes: expected {a.ranks} positive numbers")

    images = Idx(find(a.source, "train-images-idx3-ubyte"))
    labels = Idx(find(a.source, "train-labels-idx1-ubyte"))
    if len(labels.shape) != 1 or labels.shape[0] != images.shape[0]:
        sys.exit("split-dataset: the training images and labels differ in count")
    test_images = Idx(find(a.source, "t10k-images-idx3-ubyte"))
    test_labels = Idx(find(a.source, "t10k-labels-idx1-ubyte"))

    rng = random.Random(a.seed)
    label_list = list(labels.data)
    parts = shares(label_list, a.ranks, sizes, a.unbalanced, rng)
    classes = max(label_list) + 1
    record = {"source": os.path.abspath(a.source), "seed": a.seed, "unbalanced": a.unbalanced,
              "sizes": sizes, "ranks": []}
    everything = range(test_images.shape[0])
    for r, idx in enumerate(parts):
        site = os.path.join(a.out, f"site_{r}")
        os.makedirs(site, exist_ok=True)
        images.write(os.path.join(site, "train-images-idx3-ubyte.gz"), idx)
        labels.write(os.path.join(site, "train-labels-idx1-ubyte.gz"), idx)
        test_images.write(os.path.join(site, "t10k-images-idx3-ubyte.gz"), everything)
        test_labels.write(os.path.join(site, "t10k-labels-idx1-ubyte.gz"), everything)
        counts = [0] * classes
        for i in idx:
            counts[label_list[i]] += 1
        record["ranks"].append({"samples": len(idx), "class_counts": counts})
        print(f"site_{r}: {len(idx)} samples, classes {counts}")
    with open(os.path.join(a.out, "split.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
