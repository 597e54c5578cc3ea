"""Plugins written in Python (examples/python/): a numpy conv algorithm, a layer and an optimizer
registered with dtnn.register pass the conformance checks of their kind (dtnn.check_plugin: the
conv against `reference` over the geometry sweep, the layer's gradients against finite differences,
the optimizer's contracts and state), train together in a real run, run as best_of's candidates
(whose accuracy guard refuses a wrong one), and an exception raised in one ends the run as a
dtnn.Error naming the plugin and carrying the traceback.
"""
import pathlib
import sys

import numpy as np
import pytest

import dtnn

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))
import cosine_decay  # noqa: E402
import numpy_conv  # noqa: E402
import scaled_tanh  # noqa: E402
import sign_sgd  # noqa: E402
import smoothed_cross_entropy  # noqa: E402
import top2_accuracy  # noqa: E402
import two_spirals  # noqa: E402

FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")

for plugin in (numpy_conv.NumpyConv, scaled_tanh.ScaledTanh, sign_sgd.SignSgd,
               smoothed_cross_entropy.SmoothedCrossEntropy, top2_accuracy.Top2Accuracy,
               cosine_decay.CosineDecay, two_spirals.TwoSpirals):
    dtnn.register(plugin)


def failures(checks):
    return [c for c in checks if c["supported"] and not c["passed"]]


@pytest.mark.parametrize("kind,name", [("conv", "numpy_conv"), ("layer", "scaled_tanh"),
                                       ("optimizer", "sign_sgd"),
                                       ("loss", "smoothed_cross_entropy"),
                                       ("metric", "top2_accuracy"), ("scheduler", "cosine_decay"),
                                       ("dataset", "two_spirals")])
def test_examples_pass_their_kinds_conformance(kind, name):
    checks = dtnn.check_plugin(kind, name)
    assert sum(c["supported"] for c in checks) >= 2
    assert failures(checks) == []
    listed = {(p["kind"], p["name"]): p for p in dtnn.plugins()}
    assert listed[(kind, name)]["status"] == "ok"
    assert listed[(kind, name)]["description"].endswith("(Python)")


class WrongConv(numpy_conv.NumpyConv):
    """numpy_conv with its filter's taps flipped: a wrong convolution"""
    name = "wrong_conv"

    def forward(self, x, w, y):
        super().forward(x, w[::-1, ::-1] if self.g.layout == "nhwc" else w[:, :, ::-1, ::-1], y)


def test_a_wrong_plugin_fails_the_checks():
    dtnn.register(WrongConv)
    bad = failures(dtnn.check_plugin("conv", "wrong_conv"))
    assert bad and all("forward" in c["what"] or "forward" in c["setting"] for c in bad[:1])


def small_run(model_layers, **sections):
    config = {"model": {"name": "python_plugins", "layers": model_layers},
              "dataset": {"name": "mnist", "path": str(FASHION), "train_limit": 12000,
                          "test_limit": 2000},
              "training": {"epochs": 2, "batch_size": 64, "seed": 1},
              "optimizer": {"name": "sign_sgd", "learning_rate": 0.0005},
              "metrics": ["categorical_accuracy"], "output": {"progress": "none"}}
    config.update(sections)
    return dtnn.Experiment(config)


CNN = [{"type": "conv2d", "filters": 8, "kernel": 3, "weights_initializer": "he_normal"},
       {"type": "relu"}, {"type": "maxpool2d", "pool": 2}, {"type": "flatten"},
       {"type": "fc", "units": 64, "weights_initializer": "he_normal"},
       {"type": "scaled_tanh", "alpha": 1.0},
       {"type": "fc", "units": "$classes"}, {"type": "softmax"}]


@pytest.mark.skipif(not FASHION.is_dir(), reason="needs Debian's dataset-fashion-mnist")
def test_the_three_train_together():
    exp = small_run(CNN, conv={"algorithm": "numpy_conv"})
    exp.fit()
    result = exp.evaluate()
    assert result["categorical_accuracy"] > 0.8  # 0.8685 when written
    alpha = exp.parameters()["6.scaled_tanh.alpha"]
    assert alpha.shape == (1,) and alpha[0] != 1.0  # learned


@pytest.mark.skipif(not FASHION.is_dir(), reason="needs Debian's dataset-fashion-mnist")
def test_best_of_times_python_candidates_and_refuses_a_wrong_one(capfd):
    dtnn.register(WrongConv)
    exp = small_run(CNN, conv={"algorithm": "best_of", "max_rel_error": 1e-3, "cache_file": "",
                               "candidates": ["numpy_conv", "wrong_conv", "i2c"]},
                    training={"epochs": 1, "batch_size": 64, "seed": 1})
    exp.fit()
    assert exp.evaluate()["categorical_accuracy"] > 0.75
    log = capfd.readouterr().err
    import re
    errors = dict(re.findall(r"(numpy_conv|wrong_conv|i2c) ([0-9.e+-]+) \(forward", log))
    assert set(errors) == {"numpy_conv", "wrong_conv", "i2c"}, log
    assert float(errors["numpy_conv"]) < 1e-5 and float(errors["wrong_conv"]) > 0.1
    chosen = re.findall(r"'(\w+)' after \d+ rounds", log)
    assert chosen and "wrong_conv" not in chosen


@pytest.mark.skipif(not FASHION.is_dir(), reason="needs Debian's dataset-fashion-mnist")
def test_a_python_loss_metric_and_scheduler_in_a_run():
    exp = small_run(CNN, conv={"algorithm": "i2c"},
                    loss={"name": "smoothed_cross_entropy", "epsilon": 0.1},
                    metrics=["categorical_accuracy", "top2_accuracy"],
                    schedulers=[{"name": "cosine_decay", "epochs": 2, "floor": 0.1}])
    history = exp.fit()
    test = history["test"]
    assert test["categorical_accuracy"] > 0.8
    assert test["top2_accuracy"] >= test["categorical_accuracy"] and test["top2_accuracy"] > 0.9
    # epoch 0 at 0.0005, epoch 1 at half way down the cosine: 0.0005 * (0.1 + 0.9 * 0.5)
    assert exp.learning_rate == pytest.approx(0.0005 * 0.55, rel=1e-6)


def test_a_python_dataset_trains_an_mlp():
    exp = dtnn.Experiment({
        "model": {"name": "mlp", "layers": [
            {"type": "fc", "units": 64}, {"type": "relu"}, {"type": "fc", "units": 64},
            {"type": "relu"}, {"type": "fc", "units": "$classes"}, {"type": "softmax"}]},
        "dataset": {"name": "two_spirals", "train_samples": 4000, "test_samples": 1000},
        "training": {"epochs": 15, "batch_size": 64, "seed": 1},
        "optimizer": {"name": "adam", "learning_rate": 0.01},
        "metrics": ["categorical_accuracy"], "output": {"progress": "none"}})
    exp.fit()
    assert exp.evaluate()["categorical_accuracy"] > 0.95  # 0.989 when written; linear: about 0.6


class Boom:
    """a layer whose forward raises"""
    kind = "layer"
    name = "boom"

    def build(self, ctx):
        return None

    def forward(self, x, y, training):
        raise ValueError("boom: the plugin's own error")

    def backward(self, x, y, dy, dx):
        dx[...] = dy


def test_a_python_exception_ends_the_run_naming_the_plugin():
    dtnn.register(Boom)
    exp = small_run([{"type": "flatten"}, {"type": "boom"}, {"type": "fc", "units": "$classes"},
                     {"type": "softmax"}],
                    dataset={"name": "synthetic", "input_shape": [4, 4, 1], "classes": 3,
                             "train_samples": 64, "test_samples": 16})
    with pytest.raises(dtnn.Error) as e:
        exp.fit()
    text = str(e.value)
    assert "layer plugin 'boom'.forward (Python) raised" in text
    assert "ValueError: boom: the plugin's own error" in text
    assert "Traceback" in text and "test_python_plugins.py" in text


def test_registration_is_checked():
    class Nameless:
        kind = "conv"
    with pytest.raises(dtnn.Error, match="give the plugin a name"):
        dtnn.register(Nameless)
    with pytest.raises(dtnn.Error, match="kind 'codec'; Python plugins are of kind conv"):
        dtnn.register(Boom, kind="codec")

    class NotI2c(numpy_conv.NumpyConv):
        name = "i2c"
    with pytest.raises(dtnn.Error, match="already a plugin from"):
        dtnn.register(NotI2c)

    class BadArgs(scaled_tanh.ScaledTanh):
        name = "bad_args"
        parameters = {"alpha": 1.0}

        def __init__(self):  # takes no alpha
            pass
    dtnn.register(BadArgs)
    with pytest.raises(dtnn.Error, match="bad_args' \\(constructing it\\)"):
        small_run([{"type": "flatten"}, {"type": "bad_args"}, {"type": "fc", "units": 3}],
                  dataset={"name": "synthetic", "input_shape": [4, 4, 1], "classes": 3,
                           "train_samples": 64, "test_samples": 16})


def test_dtnn_check_plugin_takes_a_python_file(tmp_path):
    import subprocess
    from dtnn.__main__ import program
    good = subprocess.run([str(program()), "check-plugin",
                           str(ROOT / "examples" / "python" / "sign_sgd.py")],
                          capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "optimizer 'sign_sgd': 10 passed, 0 failed" in good.stdout
    wrong = tmp_path / "forgets_to_zero.py"
    wrong.write_text(
        "class Forgetful:\n"
        "    kind = 'optimizer'\n    name = 'forgetful'\n    parameters = {'learning_rate': 0.1}\n"
        "    def __init__(self, learning_rate):\n        self.learning_rate = learning_rate\n"
        "    def build(self, parameters, ctx):\n        pass\n"
        "    def update(self, index, value, grad):\n        value += self.learning_rate * grad\n")
    bad = subprocess.run([str(program()), "check-plugin", str(wrong)], capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAIL a first step from zero descends" in bad.stdout


def test_plugin_files_and_folders(tmp_path):
    import subprocess
    loaded = dtnn.load_plugins(ROOT / "examples" / "python")
    assert ("conv", "numpy_conv") in loaded and ("scheduler", "cosine_decay") in loaded
    assert len(loaded) == 7
    # A plugin folder's .py files are registered when dtnn is imported; a broken one is a warning.
    (tmp_path / "halve.py").write_text(
        "import numpy as np\n"
        "class Halve:\n    kind = 'layer'\n    name = 'halve'\n"
        "    def build(self, ctx):\n        return None\n"
        "    def forward(self, x, y, training):\n        y[...] = x / 2\n"
        "    def backward(self, x, y, dy, dx):\n        dx[...] = dy / 2\n")
    (tmp_path / "broken.py").write_text("raise RuntimeError('not a plugin today')\n")
    env = dict(__import__("os").environ, DTNN_PLUGIN_PATH=str(tmp_path))
    env["PYTHONPATH"] = str(pathlib.Path(dtnn.__file__).resolve().parents[1])
    code = ("import warnings, dtnn\n"
            "print([p['status'] for p in dtnn.plugins() if p['name'] == 'halve'])\n"
            "print(dtnn.check_plugin('layer', 'halve')[0]['passed'])\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["['ok']", "True"]
    assert "broken.py: not loaded: RuntimeError: not a plugin today" in run.stderr


HALVE = ("import numpy as np\n"
         "class Halve:\n    kind = 'layer'\n    name = 'halve'\n"
         "    def build(self, ctx):\n        return None\n"
         "    def forward(self, x, y, training):\n        y[...] = x / 2\n"
         "    def backward(self, x, y, dy, dx):\n        dx[...] = dy / 2\n")


def test_dtnn_run_finds_python_plugins_in_plugin_folders(tmp_path):
    """The dtnn program, finding .py files in a plugin folder, runs the command in the Python
    package's process (python3 -m dtnn), where they are registered: an experiment names them."""
    import json
    import os
    import subprocess
    from dtnn.__main__ import program
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "halve.py").write_text(HALVE)
    experiment = tmp_path / "exp.json"
    history = tmp_path / "history.json"
    experiment.write_text(json.dumps(
        {"model": {"name": "halved", "layers": [{"type": "flatten"}, {"type": "halve"},
                                                {"type": "fc", "units": "$classes"},
                                                {"type": "softmax"}]},
         "dataset": {"name": "synthetic", "input_shape": [4, 4, 1], "classes": 3,
                     "train_samples": 256, "test_samples": 64},
         "training": {"epochs": 2, "batch_size": 32, "seed": 1},
         "output": {"progress": "none"}}))
    env = {k: v for k, v in os.environ.items() if k not in ("DTNN_PLUGIN_PATH", "DTNN_IN_PYTHON")}

    def dtnn(*args, **extra):
        return subprocess.run([str(program()), *args], env=dict(env, **extra),
                              capture_output=True, text=True, timeout=300)

    missing = dtnn("run", str(experiment))
    assert missing.returncode == 1 and "no layer plugin named 'halve'" in missing.stderr
    ran = dtnn("run", str(experiment), "--plugin-path", str(folder), "--history", str(history))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(history.read_text())["test"]["categorical_accuracy"] >= 0
    listed = dtnn("plugins", DTNN_PLUGIN_PATH=str(folder))
    assert listed.returncode == 0, listed.stderr
    assert any(line.split()[:2] == ["layer", "halve"] and str(folder / "halve.py") in line
               for line in listed.stdout.splitlines())
    # A Python exception ends the command's run with the plugin's name and the traceback.
    (folder / "halve.py").write_text(HALVE.replace("y[...] = x / 2", "raise ValueError('odd')"))
    failed = dtnn("run", str(experiment), DTNN_PLUGIN_PATH=str(folder))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "layer plugin 'halve'.forward (Python) raised" in failed.stderr
    assert "ValueError: odd" in failed.stderr and "Traceback" in failed.stderr

