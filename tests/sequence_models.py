#!/usr/bin/env python3
"""A language model as a user trains and samples it: `dtnn run` on a text, `dtnn generate` from its
checkpoint, a resumed run that ends with the uninterrupted run's weights, and generate's errors;
then an encoder-decoder trained on the reverse task, which `dtnn generate` runs on a source.

    sequence_models.py DTNN

The text repeats "0123456789" on lines: every character follows from the ones before it, so a
small transformer learns it to (nearly) every token in a few epochs, and greedy generation from
"345" must continue "6789", a newline, "0123...".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGES = os.path.join(HERE, "..", "configs", "fashion_mnist_simplecnn.json")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def experiment(text, checkpoints, epochs):
    return {
        "model": {"layers": [
            {"type": "embedding", "vocab": "$vocab", "units": 32},
            {"type": "positional_encoding", "kind": "learned", "weights_initializer": "small_normal"},
            {"type": "add", "paths": [[{"type": "layer_norm"},
                                       {"type": "multi_head_attention", "heads": 2, "causal": True}], []]},
            {"type": "add", "paths": [[{"type": "layer_norm"}, {"type": "fc", "units": 64, "flatten": False},
                                       {"type": "gelu", "approximate": "tanh"},
                                       {"type": "fc", "units": 32, "flatten": False}], []]},
            {"type": "layer_norm"}, {"type": "fc", "units": "$classes", "flatten": False},
            {"type": "log_softmax"}]},
        "dataset": {"name": "text", "path": text, "context": 16},
        "training": {"batch_size": 16, "epochs": epochs, "seed": 2},
        "optimizer": {"name": "adam", "learning_rate": 0.003},
        "loss": "nll", "metrics": ["token_accuracy", "perplexity"],
        "output": {"progress": "none", "checkpoint_dir": checkpoints},
    }


def reverser(checkpoints):
    block = lambda attention: {"type": "add", "paths": [[{"type": "layer_norm"}, attention], []]}
    feed_forward = {"type": "add", "paths": [[{"type": "layer_norm"},
                                              {"type": "fc", "units": 128, "flatten": False},
                                              {"type": "relu"},
                                              {"type": "fc", "units": 64, "flatten": False}], []]}
    embed = [{"type": "embedding", "vocab": "$vocab", "units": 64, "padding_id": 0},
             {"type": "positional_encoding", "kind": "sinusoidal"}]
    return {
        "model": {"layers": [{"type": "encoder_decoder", "source_length": "$source_length",
                              "encoder": embed + [block({"type": "multi_head_attention", "heads": 4}),
                                                  feed_forward] * 2 + [{"type": "layer_norm"}],
                              "decoder": embed + [
                                  block({"type": "multi_head_attention", "heads": 4, "causal": True}),
                                  block({"type": "multi_head_attention", "heads": 4, "cross": True}),
                                  feed_forward] * 2 + [
                                  {"type": "layer_norm"},
                                  {"type": "fc", "units": "$classes", "flatten": False},
                                  {"type": "log_softmax"}]}]},
        "dataset": {"name": "seq2seq", "task": "reverse", "symbols": 8, "max_length": 8,
                    "train_samples": 6000, "test_samples": 500},
        "training": {"batch_size": 32, "epochs": 12, "seed": 2},  # test_seq2seq.cpp: why 12
        "optimizer": {"name": "adam", "learning_rate": 0.002},
        "loss": "nll", "metrics": ["token_accuracy"],
        "output": {"progress": "none", "checkpoint_dir": checkpoints},
    }


def seq2seq_checks(dtnn, tmp):
    config = os.path.join(tmp, "reverse.json")
    checkpoints = os.path.join(tmp, "ck_reverse")
    json.dump(reverser(checkpoints), open(config, "w"))
    done = run([dtnn, "run", config, "--history", os.path.join(tmp, "hr.json")])
    check(done.returncode == 0, "dtnn run trains the encoder-decoder: " + done.stderr[-400:])
    if done.returncode != 0:
        return
    accuracy = json.load(open(os.path.join(tmp, "hr.json")))["test"]["token_accuracy"]
    check(accuracy >= 0.99, "reverse: test token accuracy %.4f >= 0.99" % accuracy)
    reversed_ = run([dtnn, "generate", config, "--weights", checkpoints, "--prompt", "3 1 4 1 5 7",
                     "--temperature", "0"])
    check(reversed_.returncode == 0 and reversed_.stdout == "7 5 1 4 1 3\n",
          "generate decodes the reversed source until </s>: %r" % reversed_.stdout)
    too_long = run([dtnn, "generate", config, "--weights", checkpoints, "--prompt", "1 2 3 4 5 6 7 0 1",
                    "--temperature", "0"])
    check(too_long.returncode == 2 and "--prompt: 9 tokens; the model's source holds 8" in too_long.stderr,
          "a source longer than the model's: exit %d, %r" % (too_long.returncode, too_long.stderr.strip()))
    bad = run([dtnn, "generate", config, "--weights", checkpoints, "--prompt", "3 9", "--temperature", "0"])
    check(bad.returncode == 1 and "'9' is not a symbol: expected numbers 0 to 7" in bad.stderr,
          "a symbol the task does not have: exit %d, %r" % (bad.returncode, bad.stderr.strip()))


def main():
    dtnn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="dtnn-seq-")
    try:
        checks(dtnn, tmp)
        seq2seq_checks(dtnn, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def checks(dtnn, tmp):
    text = os.path.join(tmp, "digits.txt")
    with open(text, "w") as f:
        f.write("0123456789\n" * 400)

    # Train; the history's test token accuracy.
    straight = os.path.join(tmp, "straight.json")
    json.dump(experiment(text, os.path.join(tmp, "ck_straight"), 4), open(straight, "w"))
    done = run([dtnn, "run", straight, "--history", os.path.join(tmp, "h.json"),
                "--set", 'output.weights_npz="%s"' % os.path.join(tmp, "straight.npz")])
    check(done.returncode == 0, "dtnn run trains the language model: " + done.stderr[-400:])
    if done.returncode != 0:
        return
    history = json.load(open(os.path.join(tmp, "h.json")))
    accuracy = history["test"]["token_accuracy"]
    check(accuracy > 0.97, "test token accuracy %.4f > 0.97 on a text it can predict" % accuracy)

    # Greedy generation continues the pattern; sampling at a low temperature does too.
    gen = run([dtnn, "generate", straight, "--weights", os.path.join(tmp, "ck_straight"),
               "--prompt", "345", "--tokens", "16", "--temperature", "0"])
    check(gen.returncode == 0 and gen.stdout == "3456789\n0123456789\n\n",
          "greedy generation continues the text: %r" % gen.stdout)
    check("tokens/s" in gen.stderr, "generate reports its rate: " + gen.stderr.strip())
    from_npz = run([dtnn, "generate", straight, "--weights", os.path.join(tmp, "straight.npz"),
                    "--prompt", "345", "--tokens", "16", "--temperature", "0"])
    check(from_npz.returncode == 0 and from_npz.stdout == gen.stdout,
          "the PyDTNN-format weights (.npz) generate the same: %r" % from_npz.stdout)
    sampled = run([dtnn, "generate", straight, "--weights", os.path.join(tmp, "ck_straight"),
                   "--prompt", "0", "--tokens", "10", "--temperature", "0.5", "--top-k", "3",
                   "--seed", "7"])
    again = run([dtnn, "generate", straight, "--weights", os.path.join(tmp, "ck_straight"),
                 "--prompt", "0", "--tokens", "10", "--temperature", "0.5", "--top-k", "3",
                 "--seed", "7"])
    check(sampled.returncode == 0 and sampled.stdout == again.stdout,
          "sampling is a function of the seed: %r, %r" % (sampled.stdout, again.stdout))

    # Resume: 2 epochs, then 2 more from the checkpoint, end with the straight run's weights.
    first = os.path.join(tmp, "first.json")
    json.dump(experiment(text, os.path.join(tmp, "ck_resumed"), 2), open(first, "w"))
    a = run([dtnn, "run", first])
    b = run([dtnn, "run", first, "--set", "training.epochs=4",
             "--set", 'training.resume="%s"' % os.path.join(tmp, "ck_resumed"),
             "--set", 'output.weights_npz="%s"' % os.path.join(tmp, "resumed.npz")])
    check(a.returncode == 0 and b.returncode == 0, "a run resumes: " + (a.stderr + b.stderr)[-400:])
    if b.returncode == 0:
        same = open(os.path.join(tmp, "straight.npz"), "rb").read() == \
            open(os.path.join(tmp, "resumed.npz"), "rb").read()
        check(same, "the resumed run's weights are the uninterrupted run's, byte for byte")

    # Errors: each one line naming the problem, a non-zero exit.
    cases = [
        ([dtnn, "generate", straight, "--prompt", "1"], 2, "give the trained weights"),
        ([dtnn, "generate", straight, "--weights", os.path.join(tmp, "ck_straight"), "--prompt", "12x"],
         1, "the character 'x' (U+0078) is not in the vocabulary of 11 characters"),
        ([dtnn, "generate", straight, "--weights", os.path.join(tmp, "ck_straight"), "--prompt", "1",
          "--temperature", "-1"], 2, "--temperature: expected a number >= 0"),
        ([dtnn, "generate", IMAGES, "--weights", os.path.join(tmp, "ck_straight"), "--prompt", "1"],
         1, "is not a token dataset"),
    ]
    for cmd, code, message in cases:
        r = run(cmd)
        check(r.returncode == code and message in r.stderr,
              "%s: exit %d, %r" % (" ".join(cmd[1:3] + cmd[3:][-2:]), r.returncode, r.stderr.strip()[-200:]))


main()
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")
