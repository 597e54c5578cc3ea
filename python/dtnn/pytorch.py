"""Weights from PyTorch into a dtnn model of the same architecture (PyDTNN 3.x's from_pytorch, its
resnet50_from_pytorch and densenet169_from_pytorch).

    import dtnn, dtnn.pytorch, torchvision
    exp = dtnn.Experiment({"model": "resnet50_from_pytorch", ...})
    net = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1)
    dtnn.pytorch.load_into(exp, net)              # or a state_dict, or a file torch.save wrote

The layers with weights are matched in order: PyTorch's modules as the network registers them
(torchvision's: a block's layers, then its shortcut), dtnn's as PyDTNN numbers them (a block's
paths in order), the same order for the zoo's torchvision-shaped models (resnet18_imagenet,
resnet50_pytorch, vgg16_imagenet, densenet169_imagenet, mobilenetv2). Each pair must be of one
kind (a Conv2d and a Conv2D or DepthwiseConv2D, a BatchNorm2d and a BatchNormalization, a Linear
and an FC) and each array of one shape; the first that is not is an error naming both layers,
and nothing is loaded. The arrays go through PyDTNN's weight file (dtnn's layouts on either
side: PyTorch's are PyDTNN's, but for Linear's transpose), which the experiment then loads.

Needs torch only for a module or a file; a state_dict of numpy arrays works without it.
"""
import os
import re
import tempfile

import numpy as np

__all__ = ["load_into", "pydtnn_arrays"]

# PyTorch's layer kinds and dtnn's (PyDTNN's class names in the weight file) that match.
_MATCHES = {"conv": ("Conv2D", "DepthwiseConv2D"), "batchnorm": ("BatchNormalization",),
            "linear": ("FC",)}


def _numpy(value):
    """A tensor or an array as a float numpy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _torch_layers(source):
    """[(name, kind, {attribute: array})] in the network's order, from a module (its state_dict,
    which lists its modules' arrays in the order it registers them, once every module with weights
    is one dtnn takes), a state_dict or a file that torch.save wrote (either)."""
    if isinstance(source, (str, os.PathLike)):
        import torch
        source = torch.load(os.fspath(source), map_location="cpu")
    if hasattr(source, "named_modules"):
        for name, m in source.named_modules():
            kind = type(m).__name__
            if kind not in ("Conv2d", "BatchNorm2d", "Linear") and any(
                    True for _ in m.parameters(recurse=False)):
                raise ValueError(f"PyTorch module '{name}' ({kind}) has weights that dtnn cannot "
                                 "take: expected Conv2d, BatchNorm2d and Linear only")
        source = source.state_dict()
    return _state_dict_layers(source)


def _state_dict_layers(state):
    """The layers of a state_dict by its key prefixes, in its order: a prefix with
    running_mean is a BatchNorm2d, a 4-D weight a Conv2d, a 2-D one a Linear."""
    layers, by_prefix = [], {}
    for key, value in state.items():
        prefix, _, attribute = key.rpartition(".")
        if attribute == "num_batches_tracked":
            continue
        if prefix not in by_prefix:
            by_prefix[prefix] = {}
            layers.append(prefix)
        by_prefix[prefix][attribute] = _numpy(value)
    out = []
    for prefix in layers:
        a = by_prefix[prefix]
        if "running_mean" in a:
            out.append((prefix, "batchnorm", {"gamma": a["weight"], "beta": a["bias"],
                                               "running_mean": a["running_mean"],
                                               "running_var": a["running_var"]}))
        elif "weight" in a and a["weight"].ndim in (2, 4):
            arrays = {"weights": a["weight"]}
            if "bias" in a:
                arrays["biases"] = a["bias"]
            out.append((prefix, "conv" if a["weight"].ndim == 4 else "linear", arrays))
        else:
            raise ValueError(f"state_dict entry '{prefix}' ({', '.join(a)}): expected a Conv2d, "
                             "BatchNorm2d or Linear's arrays")
    return out


def _dtnn_layers(template):
    """[(id, class, {attribute: shape})] of a PyDTNN weight file, in id order."""
    layers = {}
    with np.load(template) as f:
        for key in f.files:
            m = re.fullmatch(r"(\d+)_([A-Za-z0-9]+)_(\w+)", key)
            if not m:
                raise ValueError(f"{template}: '{key}' is not a PyDTNN key <id>_<Class>_<name>")
            layer = layers.setdefault(int(m[1]), (m[2], {}))
            layer[1][m[3]] = f[key].shape
    return [(i, cls, shapes) for i, (cls, shapes) in sorted(layers.items())]


def _matched_arrays(theirs, ours, source="PyTorch"):
    """{PyDTNN key: array}: the source's layers with weights [(name, kind, {attribute: array})],
    PyTorch's kinds and layouts, paired in order with the model's PyDTNN layers (_dtnn_layers).
    A ValueError names the first pair that differs."""
    if len(theirs) != len(ours):
        raise ValueError(f"{source}'s network has {len(theirs)} layers with weights, dtnn's model "
                         f"{len(ours)}: not the same architecture")
    arrays = {}
    for (name, kind, values), (i, cls, shapes) in zip(theirs, ours):
        where = f"{source}'s '{name}' ({kind}) and dtnn's layer {i} ({cls})"
        if cls not in _MATCHES[kind]:
            raise ValueError(f"{where}: not the same kind of layer")
        values = dict(values)
        if kind == "linear":
            values["weights"] = values["weights"].T  # (units, inputs) -> (inputs, units)
        if cls == "DepthwiseConv2D":  # (C, 1, KH, KW) -> (C, KH, KW)
            values["weights"] = values["weights"].reshape(values["weights"].shape[0],
                                                          *values["weights"].shape[2:])
        if set(values) != set(shapes):
            raise ValueError(f"{where}: arrays {sorted(values)} against {sorted(shapes)} "
                             "(a bias on one side only?)")
        for attribute, shape in shapes.items():
            if values[attribute].shape != tuple(shape):
                raise ValueError(f"{where}: {attribute} {values[attribute].shape} against "
                                 f"{tuple(shape)}")
            arrays[f"{i}_{cls}_{attribute}"] = np.ascontiguousarray(values[attribute])
    return arrays


def pydtnn_arrays(source, template):
    """{PyDTNN key: array} for the model whose PyDTNN weight file `template` is (its keys and
    shapes), from the PyTorch `source` (a module, a state_dict or a torch.save file)."""
    return _matched_arrays(_torch_layers(source), _dtnn_layers(template))


def _load_matched(experiment, arrays_for):
    """Loads arrays_for(template)'s {PyDTNN key: array} into the experiment, `template` being its
    model's PyDTNN weight file: all of them, or on an error none."""
    with tempfile.TemporaryDirectory(prefix="dtnn-weights-") as folder:
        template = os.path.join(folder, "template.npz")
        experiment.save_weights(template)
        arrays = arrays_for(template)
        with np.load(template) as t:
            arrays = {k: v.astype(t[k].dtype) for k, v in arrays.items()}
        weights = os.path.join(folder, "weights.npz")
        np.savez(weights, **arrays)
        experiment.load_weights(weights)


def load_into(experiment, source):
    """Loads the PyTorch `source`'s weights (a module, a state_dict, or a file torch.save wrote)
    into the dtnn `experiment`'s model: all of them or, on any mismatch, none (a ValueError
    naming the layers)."""
    _load_matched(experiment, lambda template: pydtnn_arrays(source, template))


def _main(argv=None):
    """python3 -m dtnn.pytorch MODEL TORCHVISION_MODEL OUT.npz: torchvision's network (its
    pretrained weights with --pretrained, which torchvision downloads) as a PyDTNN weight file
    for the dtnn MODEL, which `dtnn run --weights-and-bias-filename OUT.npz` loads."""
    import argparse

    import dtnn
    import torch
    import torchvision

    parser = argparse.ArgumentParser(prog="python3 -m dtnn.pytorch", description=_main.__doc__)
    parser.add_argument("model", help="the dtnn model (resnet50_from_pytorch, a file, ...)")
    parser.add_argument("torchvision_model", help="torchvision.models' name (resnet50, ...)")
    parser.add_argument("out", help="the PyDTNN weight file (.npz) to write")
    parser.add_argument("--pretrained", action="store_true",
                        help="torchvision's default pretrained weights (downloaded by it)")
    parser.add_argument("--classes", type=int, default=1000,
                        help="the classifier's outputs (a fresh last Linear unless 1000)")
    parser.add_argument("--input", default="224,224,3", help="H,W,C of the images")
    args = parser.parse_args(argv)
    h, w, c = (int(v) for v in args.input.split(","))
    net = getattr(torchvision.models, args.torchvision_model)(
        weights="DEFAULT" if args.pretrained else None)
    if args.classes != 1000:  # PyDTNN 3.x's from_pytorch: a new classifier for the dataset's
        parent, name = net, None
        for path, module in net.named_modules():
            if isinstance(module, torch.nn.Linear):
                name = path
        *owners, last = name.split(".")
        for o in owners:
            parent = getattr(parent, o)
        old = getattr(parent, last)
        setattr(parent, last, torch.nn.Linear(old.in_features, args.classes))
    exp = dtnn.Experiment({"model": args.model,
                           "dataset": {"name": "synthetic", "input_shape": [h, w, c],
                                       "classes": args.classes, "train_samples": 1,
                                       "test_samples": 1},
                           "training": {"batch_size": 1}, "output": {"progress": "none"}})
    load_into(exp, net)
    exp.save_weights(args.out)
    print(f"{args.out}: {args.torchvision_model}'s weights for {args.model}")


if __name__ == "__main__":
    _main()
