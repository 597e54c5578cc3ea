"""A loss in numpy, registered as dtnn's loss plugin "smoothed_cross_entropy": cross-entropy against
labels smoothed towards the uniform distribution (Szegedy et al., 2016): the target of a one-hot
row y is (1 - epsilon) y + epsilon / classes. The model's output are probabilities (a softmax).

    "loss": {"name": "smoothed_cross_entropy", "epsilon": 0.1}
"""
import numpy as np


class SmoothedCrossEntropy:
    """cross-entropy with label smoothing"""

    kind = "loss"
    name = "smoothed_cross_entropy"
    parameters = {"epsilon": 0.1}
    traits = {"conformance": [{"params": {"epsilon": 0.1}, "classes": 5},
                              {"params": {"epsilon": 0.0}, "classes": 3}]}

    def __init__(self, epsilon):
        self.epsilon = epsilon

    def _target(self, y_true):
        return (1 - self.epsilon) * y_true + self.epsilon / y_true.shape[1]

    def forward(self, y_pred, y_true):
        p = np.maximum(y_pred, 1e-12)
        return float(-np.sum(self._target(y_true) * np.log(p)) / y_pred.shape[0])

    def backward(self, y_pred, y_true, dy):
        dy[...] = -self._target(y_true) / np.maximum(y_pred, 1e-12) / y_pred.shape[0]
