"""An optimizer in numpy, registered as dtnn's optimizer plugin "sign_sgd": signSGD with momentum
(Bernstein et al., 2018, "signum"): m = beta m + (1 - beta) g, w -= learning_rate * sign(m). Its
momentum lives in state dtnn owns, so checkpoints keep it.

    "optimizer": {"name": "sign_sgd", "learning_rate": 0.0005, "beta": 0.9}
"""
import numpy as np


class SignSgd:
    """signSGD with momentum (signum)"""

    kind = "optimizer"
    name = "sign_sgd"
    parameters = {"learning_rate": 0.001, "beta": 0.9}

    def __init__(self, learning_rate, beta):
        self.learning_rate = learning_rate
        self.beta = beta

    def build(self, parameters, ctx):
        self.momentum = [ctx.state(value.shape) for _, value, _ in parameters]

    def update(self, index, value, grad):
        m = self.momentum[index]
        m *= self.beta
        m += (1 - self.beta) * grad
        value -= self.learning_rate * np.sign(m)
