#!/usr/bin/env python3
"""Data-parallel training from Python: `mpiexec -n 2 python3 mpi_two_ranks.py BUILD_PYTHON_DIR`
trains on 2 ranks (dtnn's mpi communicator, no mpi4py), and each rank checks that its weights are
the model one process trains with the global batch (the same experiment on the local
communicator, batch 2 x 16). Exit 77 where numpy is missing."""
import sys

sys.path.insert(0, sys.argv[1])
try:
    import numpy as np
except ImportError:
    print("skipped: numpy is missing")
    sys.exit(77)
import dtnn


def experiment(**changes):
    e = {"model": "simplemlp",
         "dataset": {"name": "synthetic", "input_shape": [28, 28, 1], "classes": 10,
                     "train_samples": 256, "test_samples": 64},
         "training": {"epochs": 2, "batch_size": 16, "threads": 1, "evaluate": False},
         "optimizer": {"name": "sgd", "learning_rate": 0.05},
         "output": {"progress": "none"}}
    for key, value in changes.items():
        section, name = key.split(".")
        e.setdefault(section, {})[name] = value
    return e


ranks = dtnn.Experiment(experiment())
history = ranks.fit()
one = dtnn.Experiment(experiment(**{"training.batch_size": 32, "parallel.communicator": "local"}))
one.fit()
problems = []
if history["ranks"] != 2:
    problems.append(f"the run had {history['ranks']} rank(s), expected 2")
for name, w in ranks.parameters().items():
    if not np.allclose(w, one.parameters()[name], rtol=1e-4, atol=1e-6):
        problems.append(f"{name} differs from the one-process model")
print("ok" if not problems else "FAIL " + "; ".join(problems), flush=True)
sys.exit(1 if problems else 0)
