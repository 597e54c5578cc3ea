"""The dtnn Python module (python/): experiments from a dict, a file and PyDTNN's flags; fit with
callbacks that see the metrics, change the learning rate and stop; evaluate; predict; parameters
and gradients as numpy views of dtnn's memory; weights saved and loaded; errors as dtnn.Error.

Run by ctest (test python_module) with the build's package on PYTHONPATH:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dtnn

ROOT = pathlib.Path(__file__).resolve().parents[2]
FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")


def synthetic(**training):
    """A small experiment on synthetic data: simplemlp, 10 classes of 28x28 images."""
    return {"model": "simplemlp",
            "dataset": {"name": "synthetic", "input_shape": [28, 28, 1], "classes": 10,
                        "train_samples": 256, "test_samples": 64},
            "training": {"epochs": 2, "batch_size": 32, "seed": 3, **training},
            "optimizer": {"name": "adam", "learning_rate": 0.001},
            "output": {"progress": "none"}}


def test_info_and_plugins():
    info = dtnn.info()
    assert info["version"] == dtnn.__version__
    assert info["instruction_set"] in ("portable", "avx2", "avx512")
    assert info["threads"] >= 1
    plugins = dtnn.plugins()
    names = {(p["kind"], p["name"]) for p in plugins if p["status"] == "ok"}
    assert {("conv", "i2c"), ("optimizer", "adam"), ("dataset", "mnist")} <= names
    adam = next(p for p in plugins if p["kind"] == "optimizer" and p["name"] == "adam")
    assert adam["parameters"]["beta2"] == 0.999


def test_python_m_dtnn_runs_the_program_of_the_package():
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(dtnn.__file__).parents[1]))
    done = subprocess.run([sys.executable, "-m", "dtnn", "plugins"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "i2c" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "dtnn", "run", "--no-such-flag"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "no-such-flag" in bad.stderr


def test_a_dict_trains_and_the_history_is_plain_data():
    exp = dtnn.Experiment(synthetic())
    history = exp.fit()
    assert [e["epoch"] for e in history["epochs"]] == [1, 2]
    assert history["epochs"][1]["loss"] < history["epochs"][0]["loss"]
    assert json.loads(json.dumps(history)) == history  # plain Python data
    assert exp.history == history
    assert exp.config["training"]["epochs"] == 2
    layers = exp.layers
    assert [l["type"] for l in layers][:2] == ["flatten", "fc"]
    assert layers[1]["output_shape"] == (512,)
    assert sum(l["parameters"] for l in layers) == exp.parameter_count == 669706


def test_the_default_experiment_file_with_overrides(tmp_path):
    if not FASHION.is_dir():
        pytest.skip("Fashion-MNIST (Debian's dataset-fashion-mnist) is not installed")
    exp = dtnn.Experiment(ROOT / "configs" / "fashion_mnist_simplecnn.json",
                          {"training.epochs": 1, "training.steps_per_epoch": 150,
                           "output.progress": "none",
                           "output.history": str(tmp_path / "h.json")})
    exp.fit()
    result = exp.evaluate()
    assert result["samples"] == 10000
    assert result["categorical_accuracy"] > 0.7  # 150 steps of Adam on real data
    with open(tmp_path / "h.json") as f:  # the outputs are written as dtnn run writes them
        assert "epochs" in json.load(f)


def test_callbacks_see_metrics_change_the_learning_rate_and_stop():
    class Watch:
        def __init__(self):
            self.batches, self.epochs = 0, []

        def on_batch_end(self, state):
            self.batches += 1
            assert np.isfinite(state.logs["batch_loss"])

        def on_epoch_end(self, state):
            self.epochs.append((state.epoch, dict(state.logs), state.learning_rate))
            state.learning_rate = state.learning_rate / 10
            if state.epoch == 1:
                state.stop_training = True

    watch = Watch()
    exp = dtnn.Experiment(synthetic(epochs=5))
    history = exp.fit(callbacks=[watch])
    assert len(history["epochs"]) == 2  # stopped after the second epoch
    assert watch.batches == 2 * 256 // 32
    assert [e for e, _, _ in watch.epochs] == [0, 1]
    assert watch.epochs[0][1]["loss"] == pytest.approx(history["epochs"][0]["loss"])
    assert watch.epochs[1][2] == pytest.approx(0.0001)  # 0.001 / 10 after the first epoch
    assert exp.learning_rate == pytest.approx(0.00001)


def test_a_plain_callable_is_called_at_each_epochs_end():
    seen = []
    dtnn.Experiment(synthetic()).fit(callbacks=[lambda state: seen.append(state.epoch)])
    assert seen == [0, 1]


def test_an_exception_in_a_callback_ends_fit_with_that_exception():
    def broken(state):
        raise KeyError("from the callback")

    exp = dtnn.Experiment(synthetic())
    with pytest.raises(KeyError, match="from the callback"):
        exp.fit(callbacks=[broken])
    assert exp.fit()["epochs"]  # the experiment is still usable


def test_predict_takes_numpy_and_agrees_with_evaluate():
    exp = dtnn.Experiment(synthetic())
    exp.fit()
    x = np.random.default_rng(0).random((70, 28, 28, 1), dtype=np.float32)  # more than a batch
    y = exp.predict(x)
    assert y.shape == (70, 10) and y.dtype == np.float32
    assert np.allclose(y.sum(axis=1), 1, atol=1e-5)  # softmax rows
    assert np.allclose(exp.predict(x[:5]), y[:5], rtol=1e-5, atol=1e-7)  # GEMMs block by size
    assert np.allclose(exp.predict(x.astype(np.float64)), y)  # converted to the model's dtype
    with pytest.raises(dtnn.Error, match=r"predict: x has shape \(3, 28, 28\).*\(n, 28, 28, 1\)"):
        exp.predict(np.zeros((3, 28, 28), np.float32))


def test_parameters_are_writable_views_of_dtnns_memory():
    exp = dtnn.Experiment(synthetic())
    params = exp.parameters()
    name = next(n for n in params if n.endswith("fc.weights"))
    w = params[name]
    assert w.shape == (784, 512) and w.dtype == np.float32 and not w.flags.owndata
    before = exp.predict(np.ones((2, 28, 28, 1), np.float32))
    for v in params.values():  # written through numpy...
        v[...] = 0
    assert np.count_nonzero(exp.parameters()[name]) == 0  # ...read back by dtnn
    after = exp.predict(np.ones((2, 28, 28, 1), np.float32))
    assert not np.allclose(before, after)
    assert np.allclose(after, 0.1)  # all-zero weights: a uniform softmax
    del exp  # the views keep the experiment's memory alive
    assert np.count_nonzero(w) == 0


def test_fit_epochs_save_and_resume(tmp_path):
    """fit(epochs=N) trains N; save() writes a checkpoint that training.resume goes on from: 2
    epochs, save, resume for 2 more give the weights of 4 straight (Adam's moments, the shuffle
    seed and the position come back)."""
    exp = dtnn.Experiment(synthetic(epochs=4))
    assert len(exp.fit(epochs=2)["epochs"]) == 2
    exp.save(tmp_path / "two.dtnn")
    resumed = dtnn.Experiment(synthetic(epochs=4), {"training.resume": str(tmp_path / "two.dtnn")})
    assert [e["epoch"] for e in resumed.fit()["epochs"]] == [3, 4]
    straight = dtnn.Experiment(synthetic(epochs=4))
    assert len(straight.fit()["epochs"]) == 4
    for name, value in straight.parameters().items():
        assert np.array_equal(resumed.parameters()[name], value), name
    with pytest.raises(dtnn.Error, match="fit: epochs -1: expected 0 or more"):
        exp.fit(epochs=-1)


def test_activations_are_each_layers_output_for_a_batch():
    config = synthetic()
    config["model"] = {"name": "acts", "layers": [
        {"type": "flatten"}, {"type": "fc", "units": 6}, {"type": "relu"},
        {"type": "fc", "units": "$classes"}, {"type": "softmax"}]}
    exp = dtnn.Experiment(config)
    x = np.random.default_rng(4).standard_normal((5, 28, 28, 1)).astype(np.float32)
    acts = exp.activations(x)
    assert list(acts) == ["1.flatten", "2.fc", "3.relu", "4.fc", "5.softmax"]
    assert acts["1.flatten"].shape == (5, 784) and np.array_equal(acts["1.flatten"], x.reshape(5, -1))
    w = exp.parameters()["2.fc.weights"]
    b = exp.parameters()["2.fc.biases"]
    assert np.allclose(acts["2.fc"], acts["1.flatten"] @ w + b, rtol=1e-5, atol=1e-5)
    # relu runs over fc's output buffer: the fc's copy was taken before it did.
    assert (acts["2.fc"] < 0).any()
    assert np.array_equal(acts["3.relu"], np.maximum(acts["2.fc"], 0))
    assert np.array_equal(acts["5.softmax"], exp.predict(x))
    with pytest.raises(dtnn.Error, match=r"activations: x holds 10 values: expected \(n, 28, 28, 1\)"):
        exp.activations(np.zeros(10, np.float32))


def test_gradients_of_a_batch_match_finite_differences():
    exp = dtnn.Experiment(synthetic(epochs=1))
    exp.fit()
    assert all(np.count_nonzero(g) == 0 for g in exp.gradients().values())  # a step consumes them
    rng = np.random.default_rng(2)
    x = rng.random((8, 28, 28, 1), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
    before = {n: p.copy() for n, p in exp.parameters().items()}
    grads = exp.gradients(x, y)
    assert all(np.array_equal(before[n], p) for n, p in exp.parameters().items())  # no update
    name = next(n for n in grads if n.endswith("biases"))
    bias, g = exp.parameters()[name], grads[name].copy()

    def loss():  # the mean categorical cross-entropy of the batch, from predict
        p = exp.predict(x).astype(np.float64)
        return -np.mean(np.log(np.sum(p * y, axis=1)))

    for k in np.argsort(-np.abs(g))[:3]:  # the largest components
        h, saved = 1e-2, bias[k]
        bias[k] = saved + h
        up = loss()
        bias[k] = saved - h
        down = loss()
        bias[k] = saved
        assert (up - down) / (2 * h) == pytest.approx(g[k], rel=0.05, abs=1e-4)
    with pytest.raises(dtnn.Error, match="give both x and y"):
        exp.gradients(x)


def test_weights_round_trip_through_npz_and_checkpoint(tmp_path):
    exp = dtnn.Experiment(synthetic(epochs=1))
    exp.fit()
    x = np.random.default_rng(1).random((4, 28, 28, 1), dtype=np.float32)
    y = exp.predict(x)
    for file in (tmp_path / "w.npz", tmp_path / "w.dtnn"):
        exp.save_weights(str(file))
        fresh = dtnn.Experiment(synthetic(epochs=1))
        assert not np.allclose(fresh.predict(x), y)
        fresh.load_weights(str(file))
        assert np.array_equal(fresh.predict(x), y)


def test_pydtnn_flags_make_an_experiment():
    with pytest.warns(UserWarning, match="PyDTNN 3.x's defaults that dtnn does not take"):
        exp = dtnn.Experiment.from_flags(["--model", "simplemlp", "--dataset", "synthetic",
                                          "--num-epochs=1", "--steps-per-epoch", "2",
                                          "--no-evaluate", "--learning-rate", "0.05"])
    assert exp.config["optimizer"]["learning_rate"] == 0.05
    assert exp.config["optimizer"]["learning_rate_scaling"] == "auto"  # PyDTNN 3.x's
    assert exp.config["training"]["evaluate"] is False
    with pytest.raises(dtnn.Error, match="--bogus: not a launcher flag"):
        dtnn.Experiment.from_flags(["--model", "simplemlp", "--bogus", "1"])


def test_errors_name_the_key_and_what_was_expected(tmp_path):
    with pytest.raises(dtnn.Error, match=r"unknown key 'training.epochz' \(did you mean "
                                         r"'training.epochs'\?\)"):
        dtnn.Experiment({"model": "simplemlp", "training": {"epochz": 1}})
    with pytest.raises(dtnn.Error, match="training.batch_size"):
        dtnn.Experiment(synthetic(), {"training.batch_size": 0})
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "simplemlp",')
    with pytest.raises(dtnn.Error, match=r"bad\.json:1:.*invalid JSON"):
        dtnn.Experiment(bad)
    with pytest.raises(dtnn.Error, match="evaluate: split 'nope'"):
        dtnn.Experiment(synthetic()).evaluate("nope")
    assert issubclass(dtnn.Error, RuntimeError)


def blobs(n, seed=0):
    """n samples of 8 features in 3 classes that a small network separates."""
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(99).normal(size=(8, 3))
    x = rng.normal(size=(n, 8)).astype(np.float32)
    return x, np.argmax(x @ w, axis=1)


MLP = {"name": "mlp", "layers": [{"type": "fc", "units": 32}, {"type": "relu"},
                                 {"type": "fc", "units": "$classes"}, {"type": "softmax"}]}


def arrays_experiment(data, **kwargs):
    return dtnn.Experiment({"model": MLP, "training": {"epochs": 10, "batch_size": 32, "seed": 1},
                            "optimizer": {"name": "adam", "learning_rate": 0.01},
                            "output": {"progress": "none"}}, data=data, **kwargs)


def test_numpy_arrays_are_a_dataset_batched_by_dtnn():
    x, y = blobs(600)
    exp = arrays_experiment((x[:500], y[:500], x[500:], y[500:]))
    assert exp.config["dataset"]["name"] == "arrays"
    history = exp.fit()
    assert history["test"]["samples"] == 100
    assert history["test"]["categorical_accuracy"] >= 0.9
    # The same data as one-hot rows, in a dict, trains to the same weights.
    onehot = np.eye(3, dtype=np.float32)
    again = arrays_experiment({"x_train": x[:500], "y_train": onehot[y[:500]],
                               "x_test": x[500:], "y_test": onehot[y[500:]]})
    again.fit()
    for name, w in exp.parameters().items():
        assert np.array_equal(w, again.parameters()[name])


def test_array_dataset_takes_the_dataset_keys_and_images_in_either_layout(tmp_path):
    x, y = blobs(400)
    exp = dtnn.Experiment({"model": MLP, "dataset": {"validation_split": 0.25},
                           "training": {"epochs": 1, "batch_size": 50},
                           "output": {"progress": "none"}}, data=(x, y))
    history = exp.fit()
    assert history["epochs"][0]["samples"] == 300  # a quarter held out for validation
    assert "val_loss" in history["epochs"][0]
    images = np.random.default_rng(3).random((64, 6, 5, 2), dtype=np.float32)
    labels = np.arange(64) % 4
    conv = {"name": "c", "layers": [{"type": "conv2d", "filters": 3, "kernel": 3},
                                    {"type": "flatten"}, {"type": "fc", "units": "$classes"},
                                    {"type": "softmax"}]}
    def experiment(layout):
        return dtnn.Experiment({"model": conv, "training": {"epochs": 1, "batch_size": 16,
                                                            "tensor_format": layout},
                                "output": {"progress": "none"}}, data=(images, labels))

    nhwc, nchw = experiment("NHWC"), experiment("NCHW")
    assert nchw.fit()["epochs"][0]["samples"] == 64  # the arrays served in NCHW train
    nhwc.fit()
    nhwc.save_weights(str(tmp_path / "w.npz"))  # PyDTNN's layout, read into either of dtnn's
    nchw.load_weights(str(tmp_path / "w.npz"))
    assert np.allclose(nhwc.predict(images), nchw.predict(images.transpose(0, 3, 1, 2).copy()),
                       atol=1e-5)
    # The dataset serves the same images in NCHW: the same weights score them alike.
    assert nchw.evaluate("train")["loss"] == pytest.approx(nhwc.evaluate("train")["loss"],
                                                           rel=1e-5)


def test_target_values_train_a_regression():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(512, 4)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.25]]) + 0.1).astype(np.float32)
    model = {"name": "linear", "layers": [{"type": "fc", "units": 1}]}
    exp = dtnn.Experiment({"model": model, "loss": "mse", "metrics": ["regression_mse"],
                           "training": {"epochs": 30, "batch_size": 32},
                           "optimizer": {"name": "adam", "learning_rate": 0.05},
                           "output": {"progress": "none"}},
                          data=(x[:448], y[:448], x[448:], y[448:]), targets="values")
    history = exp.fit()
    assert history["test"]["loss"] < 1e-3


class Items:
    """A PyTorch-style dataset: __len__ and __getitem__ giving (x, y) pairs."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i >= len(self.x):
            raise IndexError(i)
        return self.x[i], int(self.y[i])


def test_an_object_with_len_and_getitem_is_a_dataset():
    x, y = blobs(600)
    arrays = arrays_experiment((x[:500], y[:500], x[500:], y[500:]))
    arrays.fit()
    items = arrays_experiment({"train": Items(x[:500], y[:500]), "test": Items(x[500:], y[500:])})
    history = items.fit()
    assert history["test"]["samples"] == 100
    for name, w in arrays.parameters().items():  # the same samples: the same training
        assert np.array_equal(w, items.parameters()[name])
    assert arrays_experiment(Items(x, y)).fit()["epochs"][-1]["loss"] < 1.0  # train only
    with pytest.raises(dtnn.Error, match=r"train\[3\]: expected a pair \(x, y\)"):
        arrays_experiment(type("Bad", (), {
            "__len__": lambda s: 5,
            "__getitem__": lambda s, i: 1.0 if i == 3 else (np.zeros(8), 0)})())
    with pytest.raises(dtnn.Error, match="train's items differ in shape"):
        arrays_experiment(Items([x[0], x[0][:4]], [0, 1]))


class CountingItems(Items):
    """Items that count the reads, and may raise at one."""

    def __init__(self, x, y, fail_at=None):
        super().__init__(x, y)
        self.reads, self.fail_at = 0, fail_at

    def __getitem__(self, i):
        self.reads += 1
        if i == self.fail_at:
            raise ValueError(f"cannot decode item {i}")
        return super().__getitem__(i)


def test_a_lazy_item_dataset_is_read_batch_by_batch_as_it_trains():
    x, y = blobs(600)
    train, test = CountingItems(x[:500], y[:500]), CountingItems(x[500:], y[500:])
    lazy = arrays_experiment({"train": train, "test": test}, lazy=True, classes=3)
    assert train.reads <= 1 and test.reads == 0  # the first item's shape, nothing more
    history = lazy.fit()
    # 10 epochs of 500 and the test before and after: every read as the batches came.
    assert train.reads >= 10 * 500 and test.reads >= 2 * 100
    assert history["test"]["samples"] == 100
    # The same samples in the same order train to the same weights as the arrays.
    arrays = arrays_experiment((x[:500], y[:500], x[500:], y[500:]))
    arrays.fit()
    for name, w in arrays.parameters().items():
        assert np.array_equal(w, lazy.parameters()[name])
    # Read by dtnn's loader thread ahead of each step (dataset.prefetch), beside a callback: the
    # two take Python's lock in turn.
    ahead = CountingItems(x[:500], y[:500])
    prefetched = dtnn.Experiment({"model": MLP, "dataset": {"prefetch": True},
                                  "training": {"epochs": 2, "batch_size": 32, "evaluate": False},
                                  "output": {"progress": "none"}},
                                 data=ahead, lazy=True, classes=3)
    epochs = []
    prefetched.fit(callbacks=[lambda state: epochs.append(state.epoch)])
    assert epochs == [0, 1] and ahead.reads >= 2 * 500


def test_a_lazy_item_datasets_errors_name_the_item():
    x, y = blobs(100)
    with pytest.raises(dtnn.Error, match=r"lazy item dataset whose y are class ids needs classes"):
        arrays_experiment(Items(x, y), lazy=True)
    with pytest.raises(dtnn.Error, match=r"lazy=True reads an item dataset"):
        arrays_experiment((x, y), lazy=True)
    # An exception raised by __getitem__ mid-training ends fit with the item and its text.
    broken = arrays_experiment(CountingItems(x, y, fail_at=37), lazy=True, classes=3)
    with pytest.raises(dtnn.Error, match=r"data: train\[37\]: ValueError: cannot decode item 37"):
        broken.fit()
    odd = arrays_experiment(type("Odd", (), {
        "__len__": lambda s: 10,
        "__getitem__": lambda s, i: (np.zeros(8 if i != 4 else 5), 0)})(), lazy=True, classes=3)
    with pytest.raises(dtnn.Error, match=r"train\[4\]'s x is not train\[0\]'s shape \(8,\)"):
        odd.fit()


def test_bad_arrays_are_named():
    x, y = blobs(50)
    cases = [((x, y[:40]), r"y_train: expected \(50,\)"),
             ((x[:, :, None], y, x, y), r"x_test's samples are not x_train's \(8, 1\)"),
             ((np.where(np.arange(50)[:, None] == 7, np.nan, x), y),
              r"x_train: sample 7, value 0 is not finite"),
             ((x, y + 0.5), r"y_train\[0\] = .*: expected a class id"),
             ((x, y, x), "give x_test with y_test"),
             ((x,), "x_train and y_train are needed"),
             ((["a", "b"], y), "x_train: expected an array of numbers")]
    for data, pattern in cases:
        with pytest.raises(dtnn.Error, match=pattern):
            arrays_experiment(data)
    with pytest.raises(dtnn.Error, match="targets 'labels'"):
        arrays_experiment((x, y), targets="labels")


def test_the_type_stubs_name_every_public_name_of_the_module():
    """python/dtnn/_dtnn.pyi, for editors: a binding added without its stub fails here."""
    import ast
    import dtnn._dtnn as module
    stub = pathlib.Path(module.__file__).with_name("_dtnn.pyi")
    assert stub.exists(), "the stubs are installed beside the module"
    tree = ast.parse(stub.read_text())
    top = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))} | {
        t.target.id for t in tree.body if isinstance(t, ast.AnnAssign)}
    public = {n for n in dir(module) if not n.startswith("_")} | {"__version__"}
    assert public - top == set()
    for cls in ("Experiment", "CallbackState"):
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
        names = {n.name for n in body if isinstance(n, ast.FunctionDef)} | {
            n.target.id for n in body if isinstance(n, ast.AnnAssign)}
        members = {n for n in dir(getattr(module, cls)) if not n.startswith("_")}
        assert members - names == set(), cls
    assert (stub.parent / "py.typed").exists()
