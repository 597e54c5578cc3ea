"""examples/notebooks/getting_started.ipynb runs from top to bottom (nbclient and a python3 kernel:
Debian's python3-nbclient and python3-ipykernel, which scripts/install-deps.sh installs; skipped
without them), on one epoch: it trains, plots, shows the filters, checks its numpy convolution
against dtnn's within 1e-4, and races the numpy conv plugin in best_of."""
import os
import pathlib

import pytest

import dtnn

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_getting_started_notebook_runs(monkeypatch):
    # The kernel is another process: it imports the same dtnn, and trains one epoch.
    package_parent = str(pathlib.Path(dtnn.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("DTNN_NOTEBOOK_EPOCHS", "1")
    nb = nbformat.read(ROOT / "examples" / "notebooks" / "getting_started.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # a cell that raises fails here, with its traceback
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    assert "test: {'loss':" in text and "'categorical_accuracy':" in text
    assert "largest difference from dtnn's:" in text
    assert "dtnn i2c" in text and "numpy" in text
    assert "conformance of numpy_conv:" in text and " 0 failed" in text
    assert "best_of with a Python candidate, test:" in text
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) >= 2  # the history and the filters
