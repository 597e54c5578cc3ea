#!/usr/bin/python3
"""Records the golden values of tests/test_golden.cpp from PyTorch: simplecnn (PyDTNN's, as
configs/models/simplecnn.json) on 8 Fashion-MNIST test images, in float64, with weights given by a
formula both sides compute, so that only the batch and the results are stored.

    /usr/bin/python3 tests/golden/record_simplecnn.py   (Debian's python3-torch; run once)

Writes tests/golden/simplecnn.npz:
  x           (8, 1, 28, 28) float32   the images, pixels in [0, 1] (NCHW)
  labels      (8,) int64
  logits      (8, 10) float64          the last fc's output
  probabilities (8, 10) float64        softmax of the logits
  loss        () float64               mean categorical cross-entropy
  grad/<key>  the loss's gradient of each parameter, in PyDTNN's layout and key (1_Conv2D_weights,
              ...): whole for tensors up to 4096 values; for larger ones, every 37th value
              (grad/<key>/every37) with the sum and the sum of squares of all of them
              (grad/<key>/moments)
Weights (PyDTNN's layout, flattened in C order): value i of the array with PyDTNN id `id` and
attribute a (0 weights, 1 biases) is sqrt(3 / fan_in) * (2 u - 1), u = ((i * 2654435761 +
40503 * id + 7919 * a) mod 2^32) / 2^32: integer arithmetic, exact on both sides.
"""
import gzip
import os

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FMNIST = "/usr/share/datasets/fashion-mnist"
SAMPLED_ABOVE = 4096
STRIDE = 37


def images_and_labels(n):
    with gzip.open(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read()[16:], np.uint8)[: n * 784].reshape(n, 1, 28, 28)
    with gzip.open(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read()[8:], np.uint8)[:n]
    return (x.astype(np.float32) / 255.0), y.astype(np.int64)


def formula(shape, pydtnn_id, attribute, fan_in):
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    h = (i * np.uint64(2654435761) + np.uint64(40503 * pydtnn_id + 7919 * attribute)) % np.uint64(2**32)
    u = h.astype(np.float64) / 2.0**32
    return (np.sqrt(3.0 / fan_in) * (2.0 * u - 1.0)).reshape(shape)


def main():
    torch.set_default_dtype(torch.float64)
    x_np, labels = images_and_labels(8)
    # PyDTNN's layouts: Conv2D (K, C, KH, KW), FC (inputs, units) with inputs in (C, H, W) order.
    layers = {"1_Conv2D": ((4, 1, 3, 3), 9), "3_Conv2D": ((8, 4, 3, 3), 36),
              "7_FC": ((1152, 128), 1152), "9_FC": ((128, 10), 128)}
    w = {}
    for key, (shape, fan_in) in layers.items():
        pid = int(key.split("_")[0])
        w[key + "_weights"] = torch.tensor(formula(shape, pid, 0, fan_in), requires_grad=True)
        w[key + "_biases"] = torch.tensor(formula((shape[0] if "Conv" in key else shape[1],), pid, 1, fan_in),
                                          requires_grad=True)
    x = torch.tensor(x_np, dtype=torch.float64)
    h = F.relu(F.conv2d(x, w["1_Conv2D_weights"], w["1_Conv2D_biases"]))
    h = F.relu(F.conv2d(h, w["3_Conv2D_weights"], w["3_Conv2D_biases"]))
    h = F.max_pool2d(h, 2).flatten(1)  # (C, H, W) order, as PyDTNN's FC rows
    h = F.relu(h @ w["7_FC_weights"] + w["7_FC_biases"])
    logits = h @ w["9_FC_weights"] + w["9_FC_biases"]
    loss = F.cross_entropy(logits, torch.tensor(labels))
    loss.backward()
    out = {"x": x_np, "labels": labels, "logits": logits.detach().numpy(),
           "probabilities": torch.softmax(logits, 1).detach().numpy(), "loss": np.array(loss.item())}
    for key, t in w.items():
        g = t.grad.numpy()
        if g.size <= SAMPLED_ABOVE:
            out["grad/" + key] = g
        else:
            flat = g.reshape(-1)
            out["grad/" + key + "/every37"] = flat[::STRIDE].copy()
            out["grad/" + key + "/moments"] = np.array([flat.sum(), (flat * flat).sum()])
    np.savez_compressed(os.path.join(HERE, "simplecnn.npz"), **out)
    print("loss", loss.item(), "written", os.path.join(HERE, "simplecnn.npz"))


if __name__ == "__main__":
    main()
