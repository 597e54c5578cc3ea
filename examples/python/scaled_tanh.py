"""A layer in numpy, registered as dtnn's layer plugin "scaled_tanh": y = alpha * tanh(x), with
alpha a learned scalar (initially the parameter `alpha`). Its gradients are checked against finite
differences by dtnn.check_plugin("layer", "scaled_tanh").

    {"type": "scaled_tanh", "alpha": 1.0}
"""
import numpy as np


class ScaledTanh:
    """y = alpha * tanh(x), alpha learned"""

    kind = "layer"
    name = "scaled_tanh"
    parameters = {"alpha": 1.0}
    traits = {"conformance": [{"params": {"alpha": 0.7}, "input": [3, 4, 2]},
                              {"params": {}, "input": [5]}]}

    def __init__(self, alpha):
        self.initial = alpha

    def build(self, ctx):
        self.alpha, self.dalpha = ctx.parameter("alpha", [1])
        self.alpha[0] = self.initial
        return None  # the output has the input's shape

    def forward(self, x, y, training):
        np.multiply(np.tanh(x), self.alpha[0], out=y)

    def backward(self, x, y, dy, dx):
        t = np.tanh(x)
        self.dalpha[0] += np.sum(dy * t)  # parameter gradients accumulate
        if dx is not None:
            dx[...] = dy * self.alpha[0] * (1 - t * t)
