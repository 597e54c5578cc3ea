"""dtnn from Python: experiments from a dict, a JSON file or PyDTNN's launcher flags; training
with Python callbacks; the model's parameters as numpy arrays over dtnn's own memory.

    import dtnn
    exp = dtnn.Experiment("configs/fashion_mnist_simplecnn.json", {"training.epochs": 1})
    history = exp.fit()                   # as `dtnn run`: the history as a dict
    exp.evaluate()                        # {"loss": ..., "categorical_accuracy": ..., ...}
    probabilities = exp.predict(images)   # numpy in, numpy out
    w = exp.parameters()                  # {"1.conv2d.weights": array, ...}, no copies

Plugins may be Python classes: `dtnn.register(MyConv)` adds a conv algorithm, layer or optimizer
that experiments then name; `dtnn.check_plugin("conv", "my_conv")` runs its conformance checks;
`dtnn.load_plugins(path)` registers the plugin classes of a .py file or folder, and the .py files of
the plugin folders (DTNN_PLUGIN_PATH, ...) are registered at import (docs/plugin-authoring.md,
"Plugins in Python"; examples/python/).

Errors from dtnn are dtnn.Error, with dtnn's message (the file, key or offset at fault).
"""
from ._dtnn import (CallbackState, Error, Experiment, __version__, check_plugin, info, plugins,
                    register)
from .plugin_files import load_plugin_folders, load_plugins

__all__ = ["CallbackState", "Error", "Experiment", "check_plugin", "info", "load_plugins",
           "plugins", "register", "__version__"]

load_plugin_folders()
