#!/usr/bin/env python3
"""Malformed inputs, each answered by one clear error: `dtnn run` must exit 1 or 2 (never a signal,
never a hang) with a `dtnn: error:` line that matches the case's pattern (the file, key or offset at
fault and what was expected), and never the bare text of a library's exception.

    bad_inputs.py DTNN [CASE-SUBSTRING]

The cases are grouped by the class of defect they stand for (issue 24): unchecked size and offset
arithmetic, unbounded model files, bare exceptions, values accepted that should not be. Each writes
its files into a fresh folder; a checkpoint case first trains one epoch to get a valid checkpoint,
then damages a copy of it.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

DTNN = sys.argv[1]
ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
TIMEOUT_S = 60

# A model and dataset small enough that a valid run takes well under a second.
MODEL = {"name": "tiny", "input_shape": [4, 4, 1],
         "layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]}
DATASET = {"name": "synthetic", "input_shape": [4, 4, 1], "classes": 3, "train_samples": 16,
           "test_samples": 8}


# A text dataset of a file t.txt in the case's folder (the model is the tiny one: its shape is
# refused later, after the data has been read).
TEXT = {"name": "text", "path": "t.txt", "context": 4}


def experiment(**changes):
    """The tiny experiment with dotted keys replaced, e.g. experiment(**{"training.threads": 8})."""
    e = {"model": MODEL, "dataset": dict(DATASET), "training": {"epochs": 1, "batch_size": 4},
         "output": {"progress": "none"}}
    for key, value in changes.items():
        node = e
        *parents, last = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return json.dumps(e)


# --- file builders -------------------------------------------------------------------------------

def npy(descr="<f4", shape=(2, 2), data=None, shape_text=None):
    shape_text = shape_text if shape_text is not None else (
        "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    if data is None:
        count = 1
        for d in shape:
            count *= d
        data = b"\0" * (count * int(descr[2:]) if count < 1 << 20 else 16)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def npz(members, name_length=None):
    """A stored zip of {name: bytes}; name_length overrides the central directory's name length."""
    out, central = b"", b""
    for name, data in members.items():
        n = name.encode()
        crc = zlib.crc32(data)
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(data),
                           len(data), len(n), 0) + n + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, crc,
                               len(data), len(data),
                               name_length if name_length is not None else len(n), 0, 0, 0, 0, 0,
                               offset) + n
    at = len(out)
    return out + central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                                       len(central), at, 0)


def dataset_npz(x_train):
    y = npy("<i8", (2,))
    x = npy("<f4", (2, 4, 4, 1))
    return npz({"x_train.npy": x_train, "y_train.npy": y, "x_test.npy": x, "y_test.npy": y})


FNV_START, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a(data):
    h = FNV_START
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def edit_checkpoint(raw, edit):
    """The checkpoint with its JSON metadata changed by edit(meta), the checksum made valid again."""
    meta_size = struct.unpack_from("<Q", raw, 12)[0]
    meta = json.loads(raw[20:20 + meta_size])
    edit(meta)
    text = json.dumps(meta).encode()
    body = raw[:12] + struct.pack("<Q", len(text)) + text + raw[20 + meta_size:-8]
    return body + struct.pack("<Q", fnv1a(body))


def set_tensor_field(index, key, value):
    def edit(meta):
        meta["tensors"][index][key] = value
    return edit


def set_field(key, value):
    def edit(meta):
        meta[key] = value
    return edit


def nested_adds(depth):
    """A model whose single layer is `add` blocks nested `depth` deep, as text (no recursion)."""
    return ('{"name": "deep", "input_shape": [4, 4, 1], "layers": [' +
            '{"type": "add", "paths": [[' * depth + ']]}' * depth + ']}')


def nested_repeats(counts):
    inner = [{"type": "relu"}]
    for c in counts:
        inner = [{"repeat": c, "layers": inner}]
    return json.dumps({"name": "wide", "input_shape": [4, 4, 1], "layers": inner})


# --- the cases -----------------------------------------------------------------------------------
# (name, files {name: bytes or str}, dtnn arguments, regex the error must match). A file named
# "CHECKPOINT:<edit>" is a damaged copy of a valid checkpoint.

BIG = 1 << 40
CASES = [
    # Unchecked size and offset arithmetic.
    ("npy shape whose byte count overflows", {"d.npz": dataset_npz(npy("<f4", (BIG, BIG, 4, 1)))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: shape \(1099511627776, 1099511627776, 4, 1\)"),
    ("npy shape larger than the file", {"d.npz": dataset_npz(npy("<f4", (1 << 20, 4, 4, 1), b""))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: shape .*needs 67108864 data bytes, the array holds 0"),
    ("npy negative dimension", {"d.npz": dataset_npz(npy("<f4", shape_text="(-2, 4, 4, 1)"))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: .*shape \(-2, 4, 4, 1\) has '-2': expected a dimension >= 0"),
    ("npz central directory name length 0xFFFF",
     {"d.npz": npz({"x_train.npy": npy()}, name_length=0xFFFF)},
     ["run", "e.json"], r"d\.npz: .*central directory entry .*(name|runs past)"),
    ("fc layer with 2^62 units",
     {"x.json": experiment(model=dict(MODEL, layers=[{"type": "flatten"},
                                                      {"type": "fc", "units": 1 << 62},
                                                      {"type": "softmax"}]))},
     ["run", "x.json"], r"x\.json.*fc.*(more than|too large)"),
    ("synthetic data of [2^31, 2^31, 1]",
     {"x.json": experiment(**{"model": {k: v for k, v in MODEL.items() if k != "input_shape"},
                              "dataset.input_shape": [1 << 31, 1 << 31, 1]})},
     ["run", "x.json"], r"x\.json: dataset 'synthetic': .*\(2147483648, 2147483648, 1\).*more than"),
    ("training.threads 100000", {}, ["run", "e.json", "--set", "training.threads=100000"],
     r"training\.threads: .*100000"),
    ("checkpoint tensor offset that wraps",
     {"c.dtnn": "CHECKPOINT:offset"}, ["run", "e.json", "--resume", "c.dtnn"],
     r"c\.dtnn: .*offset"),
    ("checkpoint metadata size that wraps", {"c.dtnn": "CHECKPOINT:meta_size"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*metadata"),
    # Unbounded model files.
    ("add blocks nested 50,000 deep", {"m.json": nested_adds(50000)},
     ["run", "e.json", "--set", "model=m.json"], r"m\.json.*nest.*deep"),
    ("repeat of 1000 x 1000 x 1000", {"m.json": nested_repeats([1000, 1000, 1000])},
     ["run", "e.json", "--set", "model=m.json"], r"m\.json.*repeat.*more than [0-9,]+ layers"),
    # Bare exceptions: the error names the file or key.
    ("weights file that is a directory", {"w.npz/x": ""},
     ["run", "e.json", "--set", "training.weights_and_bias_filename=w.npz"], r"w\.npz: .*directory"),
    ("checkpoint that is a directory", {"c.dtnn/x": ""},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn.*(directory|no checkpoint)"),
    ("experiment that is a directory", {"x.json/x": ""}, ["run", "x.json"], r"x\.json: .*directory"),
    ("PyDTNN 3.x model-state file (pickled objects)",
     {"w.npz": npz({"layers.npy": npy("|O", (1,), b"\x80\x04N.")})},
     ["run", "e.json", "--set", "training.weights_and_bias_filename=w.npz"],
     r"w\.npz: layers(\.npy)?: an array of Python objects \(dtype object, a pickle\): dtnn reads arrays of numbers only"),
    ("npz header with a non-numeric shape",
     {"d.npz": dataset_npz(npy("<f4", shape_text="(2, four, 4, 1)"))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: .*shape.*'four'"),
    ("npz header with an item size out of range",
     {"d.npz": dataset_npz(npy("<f99999999999999999999", (2, 4, 4, 1), b""))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: .*f99999999999999999999"),
    ("checkpoint whose header field has the wrong type", {"c.dtnn": "CHECKPOINT:epoch_type"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*epoch"),
    ("checkpoint whose tensor name has the wrong type", {"c.dtnn": "CHECKPOINT:name_type"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*name"),
    ("checkpoint whose seed is not a number", {"c.dtnn": "CHECKPOINT:seed"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*seed"),
    ("learning rate of 1e400", {}, ["run", "e.json", "--set", "optimizer.learning_rate=1e400"],
     r"optimizer\.learning_rate"),
    ("learning rate of 1e400 in the file", {"x.json": experiment().replace(
        '"training"', '"optimizer": {"learning_rate": 1e400}, "training"')},
     ["run", "x.json"], r"x\.json.*(1e400|number overflow|out of range)"),
    # Values accepted that should not be.
    ("checkpoint claiming epoch -5", {"c.dtnn": "CHECKPOINT:epoch_negative"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*epoch.*-5"),
    ("checkpoint claiming epoch 2^62", {"c.dtnn": "CHECKPOINT:epoch_huge"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*epoch.*4611686018427387904"),
    ("checkpoint with an unknown scheduler", {"c.dtnn": "CHECKPOINT:scheduler"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: .*scheduler.*'warp_drive'"),
    ("negative learning rate", {}, ["run", "e.json", "--set", "optimizer.learning_rate=-0.1"],
     r"learning_rate.*-0\.1"),
    ("--set training.epochs=abc", {}, ["run", "e.json", "--set", "training.epochs=abc"],
     r"training\.epochs.*integer.*abc"),
    # Sequence data and models.
    ("text file that is not UTF-8 in character mode",
     {"t.txt": b"first line\nsecond \xff line\n", "x.json": experiment(**{"dataset": TEXT})},
     ["run", "x.json"], r"t\.txt: line 2, byte 18: not UTF-8 \(byte 0xFF starts no valid sequence\)"),
    ("text dataset path that does not exist",
     {"x.json": experiment(**{"dataset": dict(TEXT, path="nope")})},
     ["run", "x.json"], r"dataset\.path: nope: no such file or folder"),
    ("$vocab in a model of an image dataset",
     {"x.json": experiment(model={"layers": [{"type": "flatten"},
                                             {"type": "embedding", "vocab": "$vocab", "units": 4}]})},
     ["run", "x.json"], r"layers\[1\]\.vocab: '\$vocab' is not a size this run's dataset gives"),
    ("pair file line without a tab",
     {"p.tsv": b"ab\tba\nabc cba\n",
      "x.json": experiment(**{"dataset": {"name": "seq2seq", "task": "pairs", "path": "p.tsv"}})},
     ["run", "x.json"], r"p\.tsv: line 2: no tab; expected source TAB target"),
    ("vocabulary file with a token twice",
     {"t.txt": b"the cat\n", "v.txt": b"[UNK]\nthe\ncat\nthe\n",
      "x.json": experiment(**{"dataset": dict(TEXT, tokens="vocab", vocabulary="v.txt")})},
     ["run", "x.json"], r"v\.txt: line 4: the token \"the\" again \(first on line 2\)"),
    ("cross-attention outside a decoder",
     {"t.txt": b"some text to read\n",
      "x.json": experiment(**{"dataset": TEXT},
                           model={"layers": [{"type": "embedding", "vocab": "$vocab", "units": 4},
                                             {"type": "multi_head_attention", "cross": True}]})},
     ["run", "x.json"], r"\"cross\": true attends to a decoder's memory"),
    ("--set training.batch_size=0", {}, ["run", "e.json", "--set", "training.batch_size=0"],
     r"training\.batch_size"),
]
CHECKPOINT_EDITS = {
    "offset": set_tensor_field(0, "offset", (1 << 64) - 8),
    "epoch_type": set_field("epoch", "five"),
    "name_type": set_tensor_field(0, "name", 7),
    "seed": set_field("seed", "x1"),
    "epoch_negative": set_field("epoch", -5),
    "epoch_huge": set_field("epoch", 1 << 62),
    "scheduler": set_field("schedulers", [{"name": "warp_drive", "state": []}]),
}
BARE = re.compile(r"stoi|stoll|stoull|stod|json\.exception|basic_filebuf|bad_alloc|"
                  r"internal check failed|vector::|basic_string")


def valid_checkpoint(folder):
    subprocess.run([DTNN, "run", os.path.join(folder, "e.json"), "--checkpoint-dir",
                    os.path.join(folder, "ck")], check=True, capture_output=True, timeout=TIMEOUT_S)
    files = sorted(os.listdir(os.path.join(folder, "ck")))
    with open(os.path.join(folder, "ck", files[-1]), "rb") as f:
        return f.read()


def run_case(name, files, args, pattern):
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "e.json"), "w") as f:
            f.write(experiment(dataset={"name": "npz", "path": "d.npz"})
                    if "d.npz" in files else experiment())
        for file, content in files.items():
            path = os.path.join(folder, file)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if isinstance(content, str) and content.startswith("CHECKPOINT:"):
                raw = valid_checkpoint(folder)
                if content == "CHECKPOINT:meta_size":
                    content = raw[:12] + struct.pack("<Q", (1 << 64) - 4) + raw[20:]
                else:
                    content = edit_checkpoint(raw, CHECKPOINT_EDITS[content.split(":")[1]])
            with open(path, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)
        try:
            r = subprocess.run([DTNN] + args, cwd=folder, capture_output=True, text=True,
                               errors="replace", timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"still running after {TIMEOUT_S} s"
        err = r.stderr.strip()
        if r.returncode < 0:
            return f"killed by signal {-r.returncode}: {err[-2000:]}"
        if r.returncode not in (1, 2):
            return f"exit code {r.returncode}, expected 1 or 2: {err[-2000:]}"
        lines = [line for line in err.splitlines() if "dtnn: error:" in line]
        if len(lines) != 1:
            return f"expected one 'dtnn: error:' line, got {len(lines)}: {err[-2000:]}"
        if BARE.search(lines[0]):
            return f"a library's bare text: {lines[0]}"
        if not re.search(pattern, lines[0]):
            return f"the error does not match /{pattern}/: {lines[0]}"
        return None


def main():
    failed = 0
    for name, files, args, pattern in CASES:
        if ONLY not in name:
            continue
        problem = run_case(name, files, args, pattern)
        print(("FAIL " if problem else "ok   ") + name + (": " + problem if problem else ""),
              flush=True)
        failed += problem is not None
    print(f"{failed} of {sum(ONLY in c[0] for c in CASES)} cases failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
