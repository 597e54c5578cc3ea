"""A metric in numpy, registered as dtnn's metric plugin "top2_accuracy": the share of rows whose
class is among the two highest predictions. Its totals (hits, rows) add over batches and ranks.

    "metrics": ["categorical_accuracy", "top2_accuracy"]
"""
import numpy as np


class Top2Accuracy:
    """share of rows whose class is among the two most likely"""

    kind = "metric"
    name = "top2_accuracy"
    parameters = {}
    traits = {"better": "max"}  # schedulers in mode "auto" maximise it
    totals = 2  # hits, rows

    def accumulate(self, y_pred, y_true):
        top2 = np.argsort(y_pred, axis=1)[:, -2:]
        truth = np.argmax(y_true, axis=1)[:, None]
        return [float(np.sum(top2 == truth)), float(y_pred.shape[0])]

    def value(self, totals):
        hits, rows = totals
        return hits / rows if rows else 0.0
