#!/usr/bin/env python3
"""`dtnn run --tensorboard DIR`, read back by TensorBoard's own event-file reader.

    tensorboard.py DTNN [READER_PYTHON]

The default experiment, cut short (2 epochs of 15 steps, a validation split, the test after
training), writes DIR; the `tensorboard` package from PyPI (scripts/install-deps.sh puts it in
/opt/dtnn-pytools; READER_PYTHON or DTNN_TENSORBOARD_PYTHON names another Python that has it)
loads the file with its EventAccumulator, which checks every record's CRC, and the test compares
what it read with the run's history: each epoch's loss, metrics and validation (as float32), the
test after training, a batch loss and learning rate per step, a weight and a gradient histogram
per parameter and epoch (the counts adding up to the parameter's size; gradients not all zero),
and the graph's nodes in the model's order. A folder that cannot be made is refused before
training. Exit 77 (skipped) where no Python with tensorboard is found.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXP = os.path.join(HERE, "..", "configs", "fashion_mnist_simplecnn.json")

# Runs in the reader's Python: everything the event file holds, as JSON.
READER = r"""
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "histograms": 0})
acc.Reload()
tags = acc.Tags()
out = {"scalars": {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags["scalars"]},
       "histograms": {t: [[e.step, e.histogram_value.num, e.histogram_value.min,
                           e.histogram_value.max, sum(e.histogram_value.bucket),
                           e.histogram_value.sum_squares] for e in acc.Histograms(t)]
                      for t in tags["histograms"]},
       "graph": [[n.name, n.op, list(n.input), {k: (v.s.decode() if v.s else v.i)
                                               for k, v in n.attr.items()}]
                 for n in acc.Graph().node] if tags["graph"] else []}
print(json.dumps(out))
"""

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def close(a, b):  # b went through float32
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7)


def reader_python(argv):
    for candidate in (argv[2] if len(argv) > 2 else None, os.environ.get("DTNN_TENSORBOARD_PYTHON"),
                      "/opt/dtnn-pytools/bin/python3"):
        if candidate and subprocess.run([candidate, "-c", "import tensorboard"],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


def main(argv):
    dtnn = argv[1]
    python = reader_python(argv)
    if not python:
        print("tensorboard.py: skipped: no Python with the tensorboard package "
              "(scripts/install-deps.sh installs it in /opt/dtnn-pytools)")
        return 77
    with tempfile.TemporaryDirectory() as d:
        board, history = os.path.join(d, "runs", "simplecnn"), os.path.join(d, "h.json")
        r = subprocess.run([dtnn, "run", EXP, "--num-epochs", "2", "--steps-per-epoch", "15",
                            "--set", "dataset.validation_split=0.05", "--set", "dataset.test_limit=500",
                            "--set", 'output.progress="lines"', "--tensorboard", board,
                            "--history", history], capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"dtnn run --tensorboard exits 0 ({r.stderr[-300:]})")
        files = os.listdir(board)
        check(len(files) == 1 and files[0].startswith("events.out.tfevents."),
              f"one event file: {files}")
        read = subprocess.run([python, "-c", READER, board], capture_output=True, text=True,
                              timeout=120)
        check(read.returncode == 0, f"TensorBoard's reader loads it ({read.stderr[-500:]})")
        if read.returncode != 0:
            return 1
        tb, h = json.loads(read.stdout), json.load(open(history))
        scalars, histograms = tb["scalars"], tb["histograms"]
        for e in h["epochs"]:
            for key in ("loss", "categorical_accuracy", "val_loss", "val_categorical_accuracy",
                        "samples_per_second"):
                got = [v for s, v in scalars.get("epoch/" + key, []) if s == e["epoch"]]
                check(len(got) == 1 and close(e[key], got[0]),
                      f"epoch {e['epoch']} epoch/{key}: history {e[key]}, TensorBoard {got}")
        for key in ("loss", "categorical_accuracy"):
            got = scalars.get("test/" + key, [])
            check(len(got) == 1 and got[0][0] == 2 and close(h["test"][key], got[0][1]),
                  f"test/{key}: history {h['test'][key]}, TensorBoard {got}")
        steps = [s for s, _ in scalars.get("train/batch_loss", [])]
        check(steps == list(range(1, 31)), f"a batch loss per step, steps 1..30: {steps[:3]}...")
        lr = [v for _, v in scalars.get("train/learning_rate", [])]
        check(len(lr) == 30 and all(close(0.001, v) for v in lr), "the learning rate per step")
        # simplecnn: conv2d (36 + 4), conv2d (288 + 8), fc (147456 + 128), fc (1280 + 10).
        sizes = {"1.conv2d.weights": 36, "1.conv2d.biases": 4, "3.conv2d.weights": 288,
                 "3.conv2d.biases": 8, "7.fc.weights": 147456, "7.fc.biases": 128,
                 "9.fc.weights": 1280, "9.fc.biases": 10}
        for name, size in sizes.items():
            for kind in ("weights", "gradients"):
                got = histograms.get(f"{kind}/{name}", [])
                check([g[0] for g in got] == [1, 2] and all(g[1] == size and g[4] == size
                                                             for g in got),
                      f"{kind}/{name}: a histogram per epoch of its {size} values "
                      f"({[(g[0], g[1], g[4]) for g in got]})")
            grads = histograms.get(f"gradients/{name}", [])
            check(bool(grads) and all(g[5] > 0 for g in grads),
                  f"gradients/{name} are not all zero (taken before the update zeroes them)")
        first = histograms.get("weights/1.conv2d.weights", [[0, 0, 0, 0, 0, 0]] * 2)
        check(first[0][2] != first[1][2] or first[0][3] != first[1][3],
              "the weights' histogram moves between epochs")
        names = [n[0] for n in tb["graph"]]
        check(names == ["0.input", "1.conv2d", "2.relu", "3.conv2d", "4.relu", "5.maxpool2d",
                        "6.flatten", "7.fc", "8.relu", "9.fc", "10.softmax"],
              f"the graph's nodes: {names}")
        chained = all(tb["graph"][i][2] == [names[i - 1]] for i in range(1, len(names)))
        check(chained, "each node is fed by the one before")
        if len(tb["graph"]) > 7:
            check(tb["graph"][7][3].get("parameters") == 147584 and
                  tb["graph"][7][3].get("output_shape") == "(128,)",
                  f"fc's node: {tb['graph'][7][3]}")

        # A folder that cannot be made: one error naming it, before any training.
        blocker = os.path.join(d, "a_file")
        open(blocker, "w").close()
        r = subprocess.run([dtnn, "run", EXP, "--num-epochs", "1", "--steps-per-epoch", "2",
                            "--tensorboard", os.path.join(blocker, "board")],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 1 and "output.tensorboard: cannot make the folder" in r.stderr
              and blocker in r.stderr and "Epoch 1/1" not in r.stdout,
              f"a blocked folder is refused: {r.returncode} {r.stderr.strip()[-200:]}")
    print("tensorboard: " + ("FAILED: " + "; ".join(failures) if failures else "all passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
