"""dtnn from Python: experiments from a dict, a JSON file or PyDTNN's launcher flags; training
with Python callbacks; the model's parameters as numpy arrays over dtnn's own memory.

    import dtnn
    exp = dtnn.Experiment("configs/fashion_mnist_simplecnn.json", {"training.epochs": 1})
    history = exp.fit()                   # as `dtnn run`: the history as a dict
    exp.evaluate()                        # {"loss": ..., "categorical_accuracy": ..., ...}
    probabilities = exp.predict(images)   # numpy in, numpy out
    w = exp.parameters()                  # {"1.conv2d.weights": array, ...}, no copies

Errors from dtnn are dtnn.Error, with dtnn's message (the file, key or offset at fault).
"""
from ._dtnn import CallbackState, Error, Experiment, __version__, info, plugins

__all__ = ["CallbackState", "Error", "Experiment", "info", "plugins", "__version__"]
