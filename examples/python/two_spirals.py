"""A dataset in Python, registered as dtnn's dataset plugin "two_spirals": points of two
interleaved spirals in the plane (Lang and Witbrock, 1988), with noise; class 0 or 1 by spiral. A
sample is a pure function of (seed, split, index), so nothing is stored and every rank reads the
same. An MLP learns it; a linear model cannot.

    "dataset": {"name": "two_spirals", "train_samples": 4000, "test_samples": 1000}
"""
import numpy as np


class TwoSpirals:
    """two interleaved spirals in the plane, with noise"""

    kind = "dataset"
    name = "two_spirals"
    parameters = {"train_samples": 4000, "test_samples": 1000, "turns": 1.5, "noise": 0.05,
                  "seed": 1}
    sample_shape = (2,)
    classes = 2

    def __init__(self, train_samples, test_samples, turns, noise, seed):
        self.sizes = {"train": train_samples, "test": test_samples}
        self.turns, self.noise, self.seed = turns, noise, seed

    def size(self, split):
        return self.sizes[split]

    def read(self, split, indices, x, y):
        for row, i in enumerate(indices):
            rng = np.random.default_rng([self.seed, 0 if split == "train" else 1, int(i)])
            spiral = int(i) % 2
            t = rng.uniform(0.05, 1.0)
            angle = 2 * np.pi * self.turns * t + np.pi * spiral
            x[row] = t * np.array([np.cos(angle), np.sin(angle)]) + rng.normal(0, self.noise, 2)
            y[row] = 0
            y[row, spiral] = 1
