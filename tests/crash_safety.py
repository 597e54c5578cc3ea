#!/usr/bin/env python3
"""Runs that are stopped: kill -9, SIGINT and SIGTERM, a full disk, and a checkpoint folder that
holds another run's checkpoints.

    crash_safety.py DTNN [kill|signal|disk|ownership ...]
    crash_safety.py DTNN mpi_signal MPIEXEC

kill:      a run that writes a checkpoint every epoch is killed (SIGKILL) at random moments spread
           over its run, checkpoint writes included; each time it is resumed from its folder (or
           started afresh when no checkpoint was written yet). The final weights must equal an
           uninterrupted run's, bit for bit, and no temporary file may be left.
signal:    SIGINT and SIGTERM stop the run at the next batch boundary with a message, exit code
           128 + the signal, a checkpoint and the history; resuming gives the uninterrupted weights.
disk:      with RLIMIT_FSIZE below a checkpoint's size, the checkpoint write fails with a clear
           error, exit 1, and the previous checkpoint stays loadable; the same for the history and
           the weights file.
ownership: a fresh run refuses a folder holding checkpoints it did not write; told to
           (output.checkpoint_overwrite), it removes them.
mpi_signal: `signal` for SIGTERM sent to mpiexec, which hands it to 2 ranks: they stop at the same
           batch (rank 0 writes the checkpoint), and 2 ranks resumed from it end with the weights
           of 2 ranks never stopped.
"""
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DTNN = sys.argv[1]
WANTED = sys.argv[2:3] or ["kill", "signal", "disk", "ownership"]
LAUNCHER = []  # mpi_signal: mpiexec -n 2
if WANTED == ["mpi_signal"]:
    LAUNCHER = [sys.argv[3], "-n", "2"]

EXPERIMENT = {
    "model": {"layers": [
        {"type": "conv2d", "filters": 16, "kernel": 3, "padding": 1}, {"type": "relu"},
        {"type": "maxpool2d"}, {"type": "conv2d", "filters": 16, "kernel": 3, "padding": 1},
        {"type": "relu"}, {"type": "flatten"}, {"type": "fc", "units": 512}, {"type": "relu"},
        {"type": "fc", "units": 4}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [24, 24, 3], "classes": 4,
                "train_samples": 512, "test_samples": 32},
    "training": {"batch_size": 32, "epochs": 16, "evaluate": False, "threads": 1},
    "optimizer": {"name": "adam", "learning_rate": 0.001},
    "output": {"progress": "lines"},
}
if WANTED == ["mpi_signal"]:
    # Open MPI's mpiexec hands SIGTERM on to the ranks about 2 s after it gets it (measured: sent
    # in epoch 2, the ranks stopped in epoch 16 of 16 or finished first), so the run must outlast
    # that by far: 64 epochs of about 0.07 s.
    EXPERIMENT["training"]["epochs"] = 64


def write_experiment(folder, **training):
    e = json.loads(json.dumps(EXPERIMENT))
    e["training"].update(training)
    path = os.path.join(folder, "e.json")
    with open(path, "w") as f:
        json.dump(e, f)
    return path


def dtnn(args, cwd, limit_bytes=None, **kw):
    def limit():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.Popen(LAUNCHER + [DTNN] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=limit, **kw)


def finish(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def reference_weights(folder):
    """The weights of an uninterrupted run, as bytes of its .npz."""
    exp = write_experiment(folder)
    code, out, err = finish(dtnn(["run", exp, "--set", "output.weights_npz=straight.npz"], folder))
    assert code == 0, err
    with open(os.path.join(folder, "straight.npz"), "rb") as f:
        return f.read()


def written(folder):
    """The files a run writes in its checkpoint folder (its lock file left out)."""
    return {f for f in os.listdir(folder) if f != ".dtnn.lock"} if os.path.isdir(folder) else set()


def checkpoints(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".dtnn"))


def check(condition, message):
    if not condition:
        print("FAIL " + message)
        sys.exit(1)


def test_kill(base):
    folder = os.path.join(base, "kill")
    os.makedirs(folder)
    straight = reference_weights(folder)
    exp = write_experiment(folder)
    ck = os.path.join(folder, "ck")
    rng = random.Random(int(os.environ.get("DTNN_CRASH_SEED", "7")))
    # How long a whole run takes, to spread the kills over it.
    t0 = time.time()
    finish(dtnn(["run", exp, "--set", "output.weights_npz=timing.npz"], folder))
    whole = time.time() - t0
    kills = during_write = 0
    for attempt in range(40):
        resume = ["--resume", ck] if os.path.isdir(ck) and checkpoints(ck) else []
        p = dtnn(["run", exp, "--checkpoint-dir", ck, "--set", "output.weights_npz=final.npz"] +
                 resume, folder)
        if kills < 6 and kills % 2 == 0:  # at a random moment of what is left of the run
            newest = checkpoints(ck)[-1] if os.path.isdir(ck) and checkpoints(ck) else ""
            done = int(newest[len("checkpoint-epoch-"):][:4]) if newest else 0
            left = whole * (1 - done / EXPERIMENT["training"]["epochs"])
            time.sleep(rng.uniform(0.1, 0.8) * left)
        elif kills < 6:  # the moment a file appears in the folder: a checkpoint being written
            seen = written(ck)
            for _ in range(rng.randint(1, 3)):  # the first, second or third write
                while p.poll() is None and not written(ck) - seen:
                    time.sleep(0.0005)
                if _ < 2:
                    seen = written(ck)
        if kills < 6:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.communicate()
                kills += 1
                files = os.listdir(ck) if os.path.isdir(ck) else []
                during_write += any(".tmp." in f for f in files)
                print(f"  killed at attempt {attempt}; newest checkpoint: "
                      f"{(checkpoints(ck) or ['none'])[-1]}; a write under way: "
                      f"{any('.tmp.' in f for f in files)}")
                continue
        code, out, err = finish(p)
        check(code == 0, f"kill: the resumed run failed ({code}): {err[-2000:]}")
        break
    check(kills == 6, f"kill: only {kills} kills landed")
    with open(os.path.join(folder, "final.npz"), "rb") as f:
        check(f.read() == straight, "kill: final weights differ from the uninterrupted run's")
    leftovers = [f for f in os.listdir(ck) if ".tmp" in f]
    check(not leftovers, f"kill: temporary files left: {leftovers}")
    print(f"ok   kill: {kills} kills ({during_write} during a checkpoint write), resumed each time; "
          f"final weights equal the straight run's")


def test_mpi_signal(base):
    test_signal(base, [("SIGTERM", signal.SIGTERM)])


def test_signal(base, signals=(("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM))):
    for name, number in signals:
        folder = os.path.join(base, "signal-" + name)
        os.makedirs(folder)
        straight = reference_weights(folder)
        exp = write_experiment(folder)
        ck = os.path.join(folder, "ck")
        p = dtnn(["run", exp, "--checkpoint-dir", ck, "--history", "h.json"], folder)
        # Under way: the second epoch's line has been printed.
        lines = []
        for line in p.stdout:
            lines.append(line)
            if line.startswith("Epoch 2/"):
                break
        p.send_signal(number)
        code, out, err = finish(p)
        expected = 1 if LAUNCHER else 128 + number  # mpiexec: 1 when a rank's code is not 0
        check(code == expected, f"{name}: exit code {code}, expected {expected}: {err}")
        check(err.count("dtnn: error: training stopped") == 1, f"{name}: one message expected: {err}")
        m = re.search(r"dtnn: error: training stopped by " + name +
                      r" after epoch (\d+), batch (\d+) of \d+; checkpoint (\S+) written \(go on "
                      r"with --resume (\S+)\)", err)
        check(m is not None, f"{name}: no stop message: {err}")
        with open(os.path.join(folder, "h.json")) as f:
            history = json.load(f)
        check(name in history.get("stopped", ""), f"{name}: the history does not say it stopped")
        check(len(history["epochs"]) >= 2, f"{name}: the history lost the finished epochs")
        code, out, err = finish(dtnn(["run", exp, "--resume", ck, "--checkpoint-dir", ck, "--set",
                                      "output.weights_npz=final.npz"], folder))
        check(code == 0, f"{name}: resuming failed: {err}")
        with open(os.path.join(folder, "final.npz"), "rb") as f:
            check(f.read() == straight, f"{name}: resumed weights differ from the straight run's")
        print(f"ok   {name}: stopped after epoch {m.group(1)}, batch {m.group(2)}; resumed to the "
              f"straight run's weights")


def write_fails_cleanly(folder, exp, what, name, args, limit_bytes):
    """A run whose write of `name` goes over RLIMIT_FSIZE: exit 1, a clear error naming the file,
    and the previous file left as it was."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(f"previous {what}\n")
    code, out, err = finish(dtnn(["run", exp, *args], folder, limit_bytes=limit_bytes))
    check(code == 1 and re.search(re.escape(name) + r": write failed after \d+ bytes \(File too large\)", err),
          f"disk: {what}: exit {code}: {err}")
    with open(path) as f:
        check(f.read() == f"previous {what}\n", f"disk: the previous {what} was damaged")


def test_disk(base):
    folder = os.path.join(base, "disk")
    os.makedirs(folder)
    exp = write_experiment(folder, epochs=1)
    ck = os.path.join(folder, "ck")
    code, out, err = finish(dtnn(["run", exp, "--checkpoint-dir", ck], folder))
    check(code == 0, f"disk: first run failed: {err}")
    first = checkpoints(ck)
    size = os.path.getsize(os.path.join(ck, first[-1]))
    exp = write_experiment(folder, epochs=2)
    code, out, err = finish(dtnn(["run", exp, "--resume", ck, "--checkpoint-dir", ck], folder,
                                 limit_bytes=size // 2))
    check(code == 1, f"disk: exit code {code} with a file size limit, expected 1: {err}")
    check(re.search(r"dtnn: error: .*checkpoint-epoch-0002-step-000000\.dtnn: write failed after "
                    r"\d+ bytes \(File too large\); the previous file, if any, is unchanged", err),
          f"disk: no clear error for the checkpoint write: {err}")
    check(checkpoints(ck) == first, f"disk: the folder changed: {checkpoints(ck)}")
    check(not [f for f in os.listdir(ck) if ".tmp" in f], "disk: a temporary file was left")
    # The history, the weights file (PyDTNN's .npz) and the trace, each larger than the limit.
    write_fails_cleanly(folder, exp, "history", "h.json", ["--history", "h.json"], 64)
    write_fails_cleanly(folder, exp, "weights", "w.npz", ["--set", "output.weights_npz=w.npz"], 4096)
    write_fails_cleanly(folder, exp, "trace", "t.json", ["--trace", "t.json"], 4096)
    check(not [f for f in os.listdir(folder) if ".tmp" in f], "disk: a temporary file was left")
    # The checkpoint written before still resumes.
    code, out, err = finish(dtnn(["run", exp, "--resume", ck, "--checkpoint-dir", ck], folder))
    check(code == 0, f"disk: resuming after the failed write failed: {err}")
    print("ok   disk: checkpoint, history, weights and trace writes over the limit fail clearly; "
          "old files intact")


def test_ownership(base):
    folder = os.path.join(base, "ownership")
    os.makedirs(folder)
    ck = os.path.join(folder, "ck")
    exp = write_experiment(folder, epochs=3)
    code, out, err = finish(dtnn(["run", exp, "--checkpoint-dir", ck], folder))
    check(code == 0, f"ownership: first run failed: {err}")
    before = checkpoints(ck)
    exp = write_experiment(folder, epochs=1)
    code, out, err = finish(dtnn(["run", exp, "--checkpoint-dir", ck], folder))
    check(code == 1 and "holds 3 checkpoint(s) that this run did not write" in err,
          f"ownership: a fresh run took a folder of another run's checkpoints ({code}): {err}")
    check(checkpoints(ck) == before, "ownership: the refused run changed the folder")
    code, out, err = finish(dtnn(["run", exp, "--checkpoint-dir", ck, "--set",
                                  "output.checkpoint_overwrite=true"], folder))
    check(code == 0 and checkpoints(ck) == ["checkpoint-epoch-0001-step-000000.dtnn"],
          f"ownership: overwrite: {code} {checkpoints(ck)} {err}")
    # Two runs at once on one folder: the second is refused at start, naming the first; once the
    # first is gone (kill -9 included), the folder is free again.
    busy = os.path.join(folder, "busy")
    exp = write_experiment(folder, epochs=200)
    first = dtnn(["run", exp, "--checkpoint-dir", busy], folder)
    lock = os.path.join(busy, ".dtnn.lock")
    deadline = time.time() + 60
    while first.poll() is None and time.time() < deadline and not (
            os.path.exists(lock) and f"pid {first.pid} " in open(lock).read()):
        time.sleep(0.01)
    second = dtnn(["run", exp, "--checkpoint-dir", busy], folder)
    try:
        code, out, err = finish(second, timeout=30)
    except subprocess.TimeoutExpired:  # it trains beside the first: not refused
        second.send_signal(signal.SIGKILL)
        code, (out, err) = None, second.communicate()
    alive = first.poll() is None
    first.send_signal(signal.SIGKILL)
    first.communicate()
    check(code == 1 and f"is in use by another run (pid {first.pid} on " in err,
          f"ownership: a second run in a busy folder was not refused ({code}): {err[-2000:]}")
    check(alive, "ownership: the first run ended before the second was refused")
    exp = write_experiment(folder, epochs=1)
    code, out, err = finish(dtnn(["run", exp, "--checkpoint-dir", busy, "--set",
                                  "output.checkpoint_overwrite=true"], folder))
    check(code == 0, f"ownership: the folder stayed locked after its run was killed: {err[-2000:]}")
    print("ok   ownership: another run's checkpoints are refused, and removed only when told to; "
          "a second run at once is refused, naming the first")


def main():
    base = tempfile.mkdtemp(prefix="dtnn-crash-")
    try:
        for name in WANTED:
            globals()["test_" + name](base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
