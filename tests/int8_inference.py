#!/usr/bin/env python3
"""Post-training int8 quantisation end to end (docs/precision.md, "int8 inference"): the default
experiment (simplecnn on Fashion-MNIST) trains one epoch and writes a checkpoint; `dtnn quantize`
makes the int8 model from it, evaluating the test set in float32 and in int8; the int8 test
accuracy must lie within 0.5 points of float32's (issue 39's target), `dtnn run --evaluate-only`
on the int8 model must print the same figures, and the int8 model must be refused for training and
when damaged, with one clear error each and nothing written.

    int8_inference.py DTNN CONFIG
"""
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def main():
    dtnn, config = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck")
        code, out = run(dtnn, "run", config, "--set", "training.epochs=1", "--set",
                        "training.evaluate=false", "--checkpoint-dir", ck)
        check(code == 0, "one epoch of the default experiment trains")
        if code != 0:
            print(out)
            return
        model = os.path.join(tmp, "simplecnn.int8")
        code, out = run(dtnn, "quantize", config, "--weights", ck, "--calibration-batches", "10",
                        "--output", model)
        print(out)
        check(code == 0 and os.path.exists(model), "dtnn quantize writes the int8 model")
        acc = dict(re.findall(r"^\s+(float32|int8)\s+loss \S+\s+categorical_accuracy (\S+)", out,
                              re.M))
        check(set(acc) == {"float32", "int8"}, "dtnn quantize prints both test accuracies")
        if set(acc) != {"float32", "int8"}:
            return
        fp32, int8 = float(acc["float32"]), float(acc["int8"])
        check(fp32 > 0.8, f"float32 test accuracy after one epoch {fp32:.4f} > 0.8")
        check(abs(int8 - fp32) <= 0.005, f"int8 accuracy {int8:.4f} within 0.5 points of {fp32:.4f}")
        check(len(re.findall(r"^\d+\s+(conv2d|fc)\s", out, re.M)) == 4,
              "all four products (two conv2d, two fc) are quantised")

        code, out = run(dtnn, "run", config, "--evaluate-only", "true", "--set",
                        f'training.weights_and_bias_filename="{model}"')
        got = re.search(r"categorical_accuracy (\S+)", out.split("Test", 1)[-1])
        check(code == 0 and got and abs(float(got.group(1)) - int8) < 1e-4,
              "dtnn run --evaluate-only on the int8 model gives dtnn quantize's int8 accuracy")

        code, out = run(dtnn, "run", config, "--set", "training.epochs=1", "--set",
                        f'training.weights_and_bias_filename="{model}"')
        check(code != 0 and "is an int8 model" in out and "--evaluate-only" in out,
              "training from an int8 model is refused, naming the file: " + out.strip()[-200:])

        with open(model, "rb") as f:
            data = bytearray(f.read())
        data[len(data) // 2] ^= 0x40
        damaged = os.path.join(tmp, "damaged.int8")
        with open(damaged, "wb") as f:
            f.write(data)
        code, out = run(dtnn, "run", config, "--evaluate-only", "true", "--set",
                        f'training.weights_and_bias_filename="{damaged}"')
        check(code != 0 and "damaged.int8: corrupt or truncated int8 model" in out,
              "a damaged int8 model is refused: " + out.strip()[-200:])

        again = os.path.join(tmp, "again.int8")
        code, out = run(dtnn, "quantize", config, "--weights", model, "--output", again)
        check(code != 0 and "already an int8 model" in out and not os.path.exists(again),
              "quantizing an int8 model is refused, nothing written")


main()
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
