"""dtnn models out to ONNX (dtnn.onnx): the zoo's CNNs, trained a few steps (so that batchnorm's
running statistics are not 0 and 1), exported, checked by onnx.checker, and run by ONNX Runtime
from PyPI: the same outputs as dtnn's predict within 1e-4 on a batch, in both layouts. A model
with a layer the exporter does not take is refused naming it. Skipped without the onnx package
(Debian's python3-onnx); ONNX Runtime is run by the Python that has it
(scripts/install-deps.sh: /opt/dtnn-pytools, or DTNN_ONNXRUNTIME_PYTHON).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import dtnn

pytest.importorskip("onnx")
import dtnn.onnx  # noqa: E402

RUNNER = r"""
import sys, numpy as np, onnxruntime as ort
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
x = np.load(sys.argv[2])
np.save(sys.argv[3], session.run(["output"], {"input": x})[0])
"""


def ort_python():
    for candidate in (os.environ.get("DTNN_ONNXRUNTIME_PYTHON"), "/opt/dtnn-pytools/bin/python3",
                      sys.executable):
        if candidate and subprocess.run([candidate, "-c", "import onnxruntime"],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


def experiment(model, shape, classes, layout):
    return dtnn.Experiment({"model": model,
                            "dataset": {"name": "synthetic", "input_shape": list(shape),
                                        "classes": classes, "train_samples": 48,
                                        "test_samples": 8},
                            "training": {"batch_size": 8, "tensor_format": layout, "epochs": 1,
                                         "steps_per_epoch": 3, "evaluate": False},
                            "optimizer": {"name": "sgd", "learning_rate": 0.01},
                            "output": {"progress": "none"}})


CASES = [  # the zoo's CNNs that cover every kind of layer the exporter takes
    ("simplecnn", (28, 28, 1), 10),             # conv2d, relu, maxpool2d, flatten, fc, softmax
    ("simplemlp", (28, 28, 1), 10),             # fc on images (its own flatten)
    ("resnet20_cifar10", (32, 32, 3), 10),      # batchnorm, add blocks, avgpool2d
    ("mobilenetv2_tiny", (32, 32, 3), 10),      # depthwise, pointwise, relu6, adaptive pooling
    ("densenet_cifar10", (32, 32, 3), 10),      # concat blocks
    ("testNet", (32, 32, 3), 10),               # leaky_relu, gelu, dropout and the rest
]


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("model,shape,classes", CASES)
def test_export_runs_in_onnxruntime(tmp_path, model, shape, classes, layout):
    python = ort_python()
    if python is None:
        pytest.skip("no Python with onnxruntime (scripts/install-deps.sh)")
    exp = experiment(model, shape, classes, layout)
    exp.fit()
    path = dtnn.onnx.export(exp, tmp_path / f"{model}.onnx")
    rng = np.random.default_rng(5)
    images = rng.standard_normal((5, *shape)).astype(np.float32)  # HWC per sample
    ours = exp.predict(images if layout == "NHWC" else images.transpose(0, 3, 1, 2))
    nchw = np.ascontiguousarray(images.transpose(0, 3, 1, 2))
    np.save(tmp_path / "x.npy", nchw)
    r = subprocess.run([python, "-c", RUNNER, str(path), str(tmp_path / "x.npy"),
                        str(tmp_path / "y.npy")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = np.load(tmp_path / "y.npy")
    assert theirs.shape == ours.reshape(len(images), -1).shape
    assert np.abs(theirs - ours.reshape(theirs.shape)).max() < 1e-4


def run_in_onnxruntime(tmp_path, path, x):
    python = ort_python()
    if python is None:
        pytest.skip("no Python with onnxruntime (scripts/install-deps.sh)")
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([python, "-c", RUNNER, str(path), str(tmp_path / "x.npy"),
                        str(tmp_path / "y.npy")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return np.load(tmp_path / "y.npy")


def test_the_transformer_language_model_exports(tmp_path):
    """transformer_lm on fortunes' characters: embedding, learned positions, causal attention,
    layer norm, the feed-forward with GELU, log-probabilities over the last axis."""
    exp = dtnn.Experiment(os.path.join(os.path.dirname(__file__), "..", "..", "configs",
                                       "fortunes_char_lm.json"),
                          {"dataset.context": 16, "training.batch_size": 8,
                           "training.steps_per_epoch": 3, "training.evaluate": False,
                           "output.progress": "none"})
    exp.fit()
    path = dtnn.onnx.export(exp, tmp_path / "lm.onnx")
    ids = np.random.default_rng(2).integers(0, 40, size=(3, 16)).astype(np.float32)
    theirs = run_in_onnxruntime(tmp_path, path, ids)
    ours = exp.predict(ids)
    assert theirs.shape == ours.shape
    assert np.abs(theirs - ours).max() < 1e-4


def test_a_padded_classifier_exports_with_its_masks(tmp_path):
    """fortunes_classify's transformer: an embedding with padding id 0, so attention masks the keys
    past each sequence's padding and the mean pools the positions before it; sequences of every
    length, one all padding (it still attends to its first position)."""
    exp = dtnn.Experiment(os.path.join(os.path.dirname(__file__), "..", "..", "configs",
                                       "fortunes_classify.json"),
                          {"dataset.context": 12, "training.batch_size": 8,
                           "training.steps_per_epoch": 3, "training.epochs": 1,
                           "training.evaluate": False, "output.progress": "none"})
    exp.fit()
    path = dtnn.onnx.export(exp, tmp_path / "classifier.onnx")
    ids = np.random.default_rng(5).integers(1, 40, size=(5, 12)).astype(np.float32)
    for row, length in enumerate((12, 7, 1, 0, 3)):
        ids[row, length:] = 0
    ids[4, 5] = 9  # an id after the padding: the sequence ended at position 3 all the same
    theirs = run_in_onnxruntime(tmp_path, path, ids)
    ours = exp.predict(ids)
    assert theirs.shape == ours.shape
    assert np.abs(theirs - ours).max() < 1e-4
    junk = ids.copy()  # ids after a sequence's first padding id change nothing, on either side
    junk[1, 8:] = 3
    assert np.abs(run_in_onnxruntime(tmp_path, path, junk) - theirs).max() < 1e-6
    assert np.abs(exp.predict(junk) - ours).max() < 1e-6


def test_an_encoder_over_vectors_with_pooling_exports(tmp_path):
    """Sinusoidal positions, non-causal attention of two heads, mean and first pooling."""
    for mode in ("mean", "first"):
        exp = dtnn.Experiment({"model": {"name": "encoder", "layers": [
                                   {"type": "fc", "units": 16, "flatten": False},
                                   {"type": "positional_encoding"},
                                   {"type": "add", "paths": [
                                       [{"type": "layer_norm"},
                                        {"type": "multi_head_attention", "heads": 2}], []]},
                                   {"type": "gelu"},
                                   {"type": "sequence_pool", "mode": mode},
                                   {"type": "fc", "units": 3}, {"type": "softmax"}]},
                               "dataset": {"name": "synthetic", "input_shape": [6, 5],
                                           "classes": 3, "train_samples": 32, "test_samples": 8},
                               "training": {"batch_size": 8, "evaluate": False},
                               "output": {"progress": "none"}})
        exp.fit()
        path = dtnn.onnx.export(exp, tmp_path / f"encoder_{mode}.onnx")
        x = np.random.default_rng(4).standard_normal((4, 6, 5)).astype(np.float32)
        assert np.abs(run_in_onnxruntime(tmp_path, path, x) - exp.predict(x)).max() < 1e-4, mode


def test_a_layer_without_an_export_is_named(tmp_path):
    exp = dtnn.Experiment({"model": {"name": "normed", "layers": [
                               {"type": "fc", "units": 8}, {"type": "arctanh"},
                               {"type": "fc", "units": 4}, {"type": "softmax"}]},
                           "dataset": {"name": "synthetic", "input_shape": [6],
                                       "classes": 4, "train_samples": 8, "test_samples": 8},
                           "output": {"progress": "none"}})
    with pytest.raises(ValueError, match=r"model 'normed': layers\[1\] \(arctanh\): no ONNX "
                                         r"export for layer type 'arctanh'"):
        dtnn.onnx.export(exp, tmp_path / "t.onnx")
    assert not (tmp_path / "t.onnx").exists()


def test_an_export_loads_back_into_a_fresh_model(tmp_path):
    trained = experiment("resnet20_cifar10", (32, 32, 3), 10, "NHWC")
    trained.fit()
    path = dtnn.onnx.export(trained, tmp_path / "resnet20.onnx")
    fresh = experiment("resnet20_cifar10", (32, 32, 3), 10, "NCHW")  # another layout, same file
    dtnn.onnx.load_into(fresh, path)
    images = np.random.default_rng(7).standard_normal((4, 32, 32, 3)).astype(np.float32)
    assert np.abs(fresh.predict(images.transpose(0, 3, 1, 2).copy()) -
                  trained.predict(images)).max() < 1e-6


def torch_or_skip():
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    return torch, torchvision


def torchvision_onnx(torch, net, size, path):
    """torchvision's network in evaluation, exported by torch.onnx (which folds each batchnorm
    into the convolution before it), with batchnorm statistics that are not 0 and 1."""
    from torch_nets import randomised
    randomised(net, 3).eval()
    torch.onnx.export(net, torch.zeros(1, 3, size, size), str(path), input_names=["x"],
                      output_names=["y"], opset_version=13)
    return net


@pytest.mark.parametrize("dtnn_model, torchvision_model, size, layout", [
    ("resnet18_imagenet", "resnet18", 224, "NCHW"),
    ("mobilenetv2", "mobilenet_v2", 64, "NHWC"),
])
def test_torchvision_exported_by_torch_onnx_gives_torchvision_logits(tmp_path, dtnn_model,
                                                                     torchvision_model, size,
                                                                     layout):
    torch, torchvision = torch_or_skip()
    torch.manual_seed(1)
    classes = 1000 if dtnn_model.endswith("_imagenet") else 10
    net = torchvision_onnx(torch, getattr(torchvision.models, torchvision_model)(
        num_classes=classes), size, tmp_path / "net.onnx")
    exp = dtnn.Experiment({"model": dtnn_model,
                           "dataset": {"name": "synthetic", "input_shape": [size, size, 3],
                                       "classes": classes, "train_samples": 2, "test_samples": 2},
                           "training": {"batch_size": 2, "tensor_format": layout},
                           "output": {"progress": "none"}})
    dtnn.onnx.load_into(exp, tmp_path / "net.onnx")
    images = np.random.default_rng(3).standard_normal((2, 3, size, size)).astype(np.float32)
    with torch.no_grad():
        expected = torch.log_softmax(net(torch.from_numpy(images)), dim=1).numpy()
    got = exp.predict(images if layout == "NCHW" else images.transpose(0, 2, 3, 1).copy())
    # The logits up to the softmax's shift: log-probabilities agree within 1e-4.
    assert np.abs(np.log(got) - expected).max() < 1e-4


def test_an_onnx_model_of_another_architecture_is_refused_and_nothing_loads(tmp_path):
    torch, torchvision = torch_or_skip()
    torchvision_onnx(torch, torchvision.models.resnet18(num_classes=10), 32, tmp_path / "r.onnx")
    exp = experiment("mobilenetv2", (32, 32, 3), 10, "NHWC")
    before = {k: v.copy() for k, v in exp.parameters().items()}
    with pytest.raises(ValueError, match=r"ONNX's network has [0-9]+ layers with weights|"
                                         r"ONNX's '.*' \(.*\) and dtnn's layer [0-9]+"):
        dtnn.onnx.load_into(exp, tmp_path / "r.onnx")
    for k, v in exp.parameters().items():
        assert np.array_equal(v, before[k]), k


def test_the_command_line_exports_an_experiment_file(tmp_path):
    import onnx
    out = tmp_path / "simplecnn.onnx"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(dtnn.__file__))] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    r = subprocess.run([sys.executable, "-m", "dtnn.onnx",
                        os.path.join(os.path.dirname(__file__), "..", "..", "configs",
                                     "fashion_mnist_simplecnn.json"), str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "simplecnn, 149210 parameters" in r.stdout
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:] == [1, 28, 28]
