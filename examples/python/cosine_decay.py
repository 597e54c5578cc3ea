"""A scheduler in Python, registered as dtnn's scheduler plugin "cosine_decay": the learning rate
follows half a cosine from its value when training begins down to `floor` times it at `epochs`
(Loshchilov and Hutter, 2017, without restarts). Its state (the starting rate) goes into
checkpoints, so a resumed run goes on along the same curve.

    "schedulers": [{"name": "cosine_decay", "epochs": 5}]
"""
import math


class CosineDecay:
    """learning rate along half a cosine over the epochs"""

    kind = "scheduler"
    name = "cosine_decay"
    parameters = {"epochs": 10, "floor": 0.0}

    def __init__(self, epochs, floor):
        self.epochs, self.floor, self.start = epochs, floor, None

    def on_train_begin(self, s):
        if self.start is None:
            self.start = s.learning_rate

    def on_epoch_begin(self, s):
        t = min(s.epoch / self.epochs, 1.0)
        s.learning_rate = self.start * (self.floor + (1 - self.floor) * 0.5 * (1 + math.cos(math.pi * t)))
        s.learning_rate = max(s.learning_rate, 1e-12)

    def state(self):
        return [] if self.start is None else [self.start]

    def set_state(self, values):
        self.start = values[0] if values else None
