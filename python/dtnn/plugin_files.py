"""Plugins written in Python, from files: `load_plugins(path)` imports a .py file (or every .py
file of a folder) and registers each class it defines that has `kind` and `name` attributes, as
`dtnn.register` would. `import dtnn` does this for the .py files of the plugin folders (those of
`dtnn.info()["plugin_folders"]`: DTNN_PLUGIN_PATH's, then the build's or the install's), as the
registry opens the .so files there; a file that fails to import or to register is a warning
naming it, as a plugin that fails to load is."""
import importlib.util
import pathlib
import sys
import warnings

from ._dtnn import info, register


def plugin_classes(module):
    """The classes `module` defines (not imports) with `kind` and `name` attributes."""
    return [c for c in vars(module).values()
            if isinstance(c, type) and c.__module__ == module.__name__
            and hasattr(c, "kind") and hasattr(c, "name")]


def import_file(path):
    """Imports the .py file at path as a module named after it (replacing one of that name)."""
    path = pathlib.Path(path).resolve()
    name = "dtnn_plugin_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_plugins(path):
    """Registers the plugin classes of a .py file, or of every .py file of a folder (sorted by
    name). Returns the (kind, name) of each; an error in a file raises."""
    path = pathlib.Path(path)
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    loaded = []
    for f in files:
        for cls in plugin_classes(import_file(f)):
            loaded.append((str(cls.kind), register(cls)))
    return loaded


def load_plugin_folders():
    """load_plugins over the plugin folders' .py files; failures become warnings."""
    for folder in info()["plugin_folders"]:
        folder = pathlib.Path(folder)
        if not folder.is_dir():
            continue
        for f in sorted(folder.glob("*.py")):
            try:
                load_plugins(f)
            except Exception as e:  # noqa: BLE001 - a broken plugin file must not stop import
                warnings.warn(f"dtnn: {f}: not loaded: {type(e).__name__}: {e}", RuntimeWarning,
                              stacklevel=2)
