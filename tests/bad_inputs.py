#!/usr/bin/env python3
"""Malformed inputs, each answered by one clear error: `dtnn run` must exit 1 or 2 (never a signal,
never a hang) with a `dtnn: error:` line that matches the case's pattern (the file, key or offset at
fault and what was expected), and never the bare text of a library's exception.

    bad_inputs.py DTNN [CASE-SUBSTRING]

The cases are grouped by the class of defect they stand for (issues 24 and 34): unchecked size and
offset arithmetic, unbounded model files, bare exceptions, values accepted that should not be;
outputs that would replace what is not a regular file, data read from outside its folder or waited
on for ever, sizes an option turns into memory, values that are not finite, messages that named the
wrong thing. Each writes its files (a named pipe, a link or a device among them) into a fresh
folder; a checkpoint case first trains one epoch to get a valid checkpoint, then damages a copy of
it. Then the behaviours: runs that must succeed and what they must leave (a device still a device,
a link still a link, a checkpoint inside its folder, a warning given).
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


def poison_first_parameter(raw):
    """The checkpoint with its first tensor's (a parameter's) first value NaN, checksum valid."""
    meta_size = struct.unpack_from("<Q", raw, 12)[0]
    meta = json.loads(raw[20:20 + meta_size])
    at = 20 + meta_size + meta["tensors"][0]["offset"]
    body = raw[:at] + struct.pack("<f", float("nan")) + raw[at + 4:-8]
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


def fifo(path):
    os.mkfifo(path)


def link_to(target):
    def make(path):
        os.symlink(target, path)
    return make


def gzip_truncated(text):
    import gzip
    data = gzip.compress(text)
    return data[:len(data) // 2]


def png_image():
    """A 2x2 grey PNG."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"\0\x10\x20\0\x30\x40"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def cifar_archive(members):
    """A .tar.gz of {path: bytes}."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


CIFAR_RECORD = bytes([3]) + bytes(3072)


def profile(**changes):
    p = {"layers": [{"layer": 1, "type": "fc", "forward_ms": 0.5, "backward_ms": 1.0}],
         "batch_size": 4, "data_wait_ms": 0.1, "loss_ms": 0.1, "optimizer_ms": 0.1}
    p.update(changes)
    return json.dumps({"profile": p})


IMAGE_LABELS = {"name": "image_labels", "path": "chest", "size": 2, "channels": 1,
                "test_every": 2}
TEXT_VOCAB = dict(TEXT, tokens="vocab", vocabulary="v.txt")
TEXT_MODEL = {"layers": [{"type": "embedding", "vocab": "$vocab", "units": 4},
                         {"type": "fc", "units": "$vocab", "flatten": False},
                         {"type": "log_softmax"}]}
# A model for image_labels' 2x2 grey images: two labels, sigmoid outputs.
LABELS_MODEL = {"layers": [{"type": "flatten"}, {"type": "fc", "units": "$classes"},
                           {"type": "sigmoid"}]}


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
    # The tcp communicator's start-up: a server, a rank, files it cannot use.
    ("tcp server without a port", {},
     ["run", "e.json", "--communicator", "tcp", "--rank", "1", "--world-size", "2",
      "--server", "10.0.0.1"],
     r"parallel\.communicator\.server: expected host:port \(e\.g\. 10\.0\.0\.1:29500"),
    ("tcp server port out of range", {},
     ["run", "e.json", "--communicator", "tcp", "--rank", "1", "--world-size", "2",
      "--server", "localhost:70000"], r"server: the port of \"localhost:70000\" is not a number"),
    ("tcp rank beyond the world", {},
     ["run", "e.json", "--communicator", "tcp", "--rank", "2", "--world-size", "2",
      "--server", "127.0.0.1:1"],
     r"parallel\.communicator\.rank: expected a rank from 0 to world_size - 1 = 1, got 2"),
    ("tcp without a rank", {},
     ["run", "e.json", "--communicator", "tcp", "--world-size", "2", "--server", "127.0.0.1:1"],
     r"parallel\.communicator\.rank: expected an integer \(or the environment's RANK or PYMPI_RANK\)"),
    ("tcp certificate that is not PEM", {"cert.pem": "not a certificate"},
     ["run", "e.json", "--communicator", "tcp", "--rank", "0", "--world-size", "2",
      "--server", "127.0.0.1:1", "--tls-ca", "cert.pem", "--tls-cert", "cert.pem",
      "--tls-key", "cert.pem"],
     r"parallel\.communicator\.tls_ca: cert\.pem: cannot read the certificate authority \(PEM expected\)"),
    ("tcp TLS with a key missing", {},
     ["run", "e.json", "--communicator", "tcp", "--rank", "0", "--world-size", "2",
      "--server", "127.0.0.1:1", "--tls-ca", "ca.pem", "--tls-cert", "c.pem"],
     r"parallel\.communicator\.tls_key: expected a PEM file \(TLS takes tls_ca, tls_cert and tls_key together"),
    ("mqtt topic with a wildcard", {},
     ["run", "e.json", "--communicator", "mqtt", "--rank", "0", "--world-size", "2",
      "--broker", "127.0.0.1:1", "--set", 'parallel.communicator.topic="runs/#"'],
     r"parallel\.communicator\.topic: expected an MQTT topic prefix without wildcards"),
    ("mqtt without a broker", {},
     ["run", "e.json", "--communicator", "mqtt", "--rank", "0", "--world-size", "2"],
     r"parallel\.communicator\.broker: expected host:port \(or the environment's DTNN_MQTT_HOST and DTNN_MQTT_PORT\)"),
    ("mqtt broker that is not host:port", {},
     ["run", "e.json", "--communicator", "mqtt", "--rank", "0", "--world-size", "2",
      "--broker", "localhost"],
     r"parallel\.communicator\.broker: expected host:port"),
    ("parameters for the local communicator", {},
     ["run", "e.json", "--set", 'parallel.communicator={"name": "local", "rank": 1}'],
     r"parallel\.communicator: \"local\" takes no parameters"),
    ("communicator that is a number", {}, ["run", "e.json", "--set", "parallel.communicator=5"],
     r"parallel\.communicator: expected a plugin name, or \{\"name\": \.\.\., parameters\.\.\.\}, got 5"),
    # What goes over the wire.
    ("codec that is not a plugin", {}, ["run", "e.json", "--set", 'parallel.codec="fp61"'],
     r"parallel\.codec.*'fp61'.*did you mean 'fp16'"),
    ("topk density out of range", {},
     ["run", "e.json", "--set", 'parallel.codec={"name": "topk", "density": 1.5}'],
     r"parallel\.codec\.density: expected a fraction in \(0, 1\], got 1\.5"),
    ("codec on a float64 model", {},
     ["run", "e.json", "--set", 'parallel.codec="fp16"', "--set", 'training.dtype="float64"'],
     r"parallel\.codec: codecs carry float32 models on the cpu; this model is float64 on cpu"),
    ("pipelined exchange with model averaging", {},
     ["run", "e.json", "--parallel-pipeline", "--model-sync-freq", "5"],
     r"parallel\.pipeline: pipelines the gradient exchange \(model_sync_freq 0\); with model "
     r"averaging every 5 steps it has nothing to overlap"),
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
    # Round three (issue 34). Outputs that would destroy what they name.
    ("history that is a folder, refused before training", {"h.json/x": ""},
     ["run", "e.json", "--history", "h.json"], r"output\.history: h\.json: is a directory"),
    ("trace that is a folder, refused before training", {"t.json/x": ""},
     ["run", "e.json", "--trace", "t.json"], r"output\.trace: t\.json: is a directory"),
    ("Paraver trace whose .pcf is a folder, refused before training", {"t.pcf/x": ""},
     ["run", "e.json", "--trace", "t.prv"], r"output\.trace: t\.pcf: is a directory"),
    ("history in a folder that does not exist", {},
     ["run", "e.json", "--history", "nope/h.json"], r"output\.history: nope/h\.json: its folder nope does not exist"),
    ("history to a named pipe that no one reads", {"h.json": fifo},
     ["run", "e.json", "--history", "h.json"], r"h\.json: cannot write \(a named pipe that no one reads\)"),
    # Data read from where it should not be, or waited on for ever.
    ("text dataset path that is a named pipe", {"t.txt": fifo, "x.json": experiment(**{"dataset": TEXT})},
     ["run", "x.json"], r"t\.txt: is a named pipe, expected a regular file"),
    ("truncated .gz text", {"t.txt.gz": gzip_truncated(b"some text to read\n" * 500),
                            "x.json": experiment(**{"dataset": dict(TEXT, path="t.txt.gz")})},
     ["run", "x.json"], r"t\.txt\.gz: corrupt or truncated gzip data after [0-9]+ decompressed bytes"),
    ("image_labels image that links out of the dataset folder",
     {"outside.png": png_image(), "chest/images/a.png": png_image(),
      "chest/images/b.png": link_to("../../outside.png"),
      "chest/Data_Entry_2017_v2020.csv": "Image Index,Finding Labels\na.png,x\nb.png,y\n",
      "x.json": experiment(**{"dataset": IMAGE_LABELS})},
     ["run", "x.json"], r"chest/images/b\.png: a symbolic link to .*outside\.png, outside the dataset folder"),
    ("CIFAR archive whose test file is in another folder",
     {"c.tar.gz": cifar_archive({**{f"cifar-10-batches-bin/data_batch_{i}.bin": CIFAR_RECORD
                                    for i in range(1, 6)},
                                 "evil/test_batch.bin": CIFAR_RECORD}),
      "x.json": experiment(**{"dataset": {"name": "cifar10", "path": "c.tar.gz"}})},
     ["run", "x.json"], r"c\.tar\.gz: the archive holds no cifar-10-batches-bin/test_batch\.bin"),
    # Sizes an option turns into memory, and errors inside parallel loops.
    ("--augment-blur-size 1e9", {}, ["run", "e.json", "--augment-blur", "1", "--augment-blur-size", "1e9"],
     r"dataset\.augment_blur_size.*\[0, 1000\]"),
    ("--augment-blur-size 1e300", {}, ["run", "e.json", "--augment-blur", "1", "--augment-blur-size", "1e300"],
     r"dataset\.augment_blur_size.*\[0, 1000\]"),
    ("conv padding 2^40",
     {"x.json": experiment(model=dict(MODEL, layers=[{"type": "conv2d", "filters": 2, "kernel": 3,
                                                       "padding": 1 << 40}, {"type": "flatten"},
                                                      {"type": "fc", "units": 3}, {"type": "softmax"}]))},
     ["run", "x.json"], r"x\.json.*(padding|more than|too large)"),
    ("image dataset threads 100000",
     {"chest/images/a.png": png_image(),
      "chest/Data_Entry_2017_v2020.csv": "Image Index,Finding Labels\na.png,x\n",
      "x.json": experiment(**{"dataset": dict(IMAGE_LABELS, threads=100000)})},
     ["run", "x.json"], r"dataset\.threads: expected a number of decoding threads from 1 to 1024"),
    ("corrupt image met while a batch decodes in parallel",
     {**{f"chest/images/{i}.png": png_image() for i in range(7)},
      "chest/images/7.png": png_image()[:40],
      "chest/Data_Entry_2017_v2020.csv": "Image Index,Finding Labels\n" +
                                         "".join(f"{i}.png,x|y\n" for i in range(8)),
      "x.json": experiment(**{"dataset": dict(IMAGE_LABELS, test_every=100)},
                           **{"training.batch_size": 8}, model=LABELS_MODEL,
                           loss="binary_cross_entropy", metrics=[])},
     ["run", "x.json"], r"chest/images/7\.png"),
    ("image_labels whose labels are all empty",
     {"chest/images/a.png": png_image(),
      "chest/Data_Entry_2017_v2020.csv": "Image Index,Finding Labels\na.png,\n",
      "x.json": experiment(**{"dataset": IMAGE_LABELS})},
     ["run", "x.json"], r"Data_Entry_2017_v2020\.csv: every row's 'Finding Labels' is empty"),
    ("folder dataset without images",
     {"imgs/train/cat/readme.txt": "no images here",
      "x.json": experiment(**{"dataset": {"name": "folder", "path": "imgs", "size": 2}})},
     ["run", "x.json"], r"imgs/train: no images in its class folders"),
    # Values read without a check.
    ("csv with a NaN", {"d.csv": "a,b\n1,2\n3,nan\n",
                        "x.json": experiment(**{"dataset": {"name": "csv", "path": "d.csv"}})},
     ["run", "x.json"], r"d\.csv: line 3, column 2: 'nan' is not finite"),
    ("checkpoint whose parameter is NaN", {"c.dtnn": "CHECKPOINT:nan"},
     ["run", "e.json", "--resume", "c.dtnn"], r"c\.dtnn: parameter '.*' holds a value that is not finite"),
    ("npz input that is infinite",
     {"d.npz": dataset_npz(npy("<f4", (2, 4, 4, 1), struct.pack("<32f", *([1.0] * 31 + [float("inf")]))))},
     ["run", "e.json"], r"d\.npz: x_train: sample 1, element 15 is inf"),
    ("weights with a NaN",
     {"w.npz": npz({"2_FC_weights.npy": npy("<f4", (16, 3), struct.pack("<48f", *([0.5] * 47 + [float("nan")]))),
                    "2_FC_biases.npy": npy("<f4", (3,), struct.pack("<3f", 0, 0, 0))})},
     ["run", "e.json", "--set", "training.weights_and_bias_filename=w.npz"],
     r"w\.npz: .* not finite"),
    ("npy of complex numbers", {"d.npz": dataset_npz(npy("<c8", (2, 4, 4, 1)))},
     ["run", "e.json"], r"d\.npz: x_train(\.npy)?: an array of dtype '<c8'"),
    ("seq2seq with 2^63-1 symbols",
     {"x.json": experiment(**{"dataset": {"name": "seq2seq", "task": "copy", "symbols": (1 << 63) - 1}})},
     ["run", "x.json"], r"dataset\.symbols: expected a number of symbols from 1 to"),
    # Messages that named nothing or the wrong thing.
    ("--evaluate maybe", {}, ["run", "e.json", "--evaluate", "maybe"],
     r"--evaluate: expected true or false, got 'maybe'"),
    ("unknown --conv-variant on a model without convolutions", {},
     ["run", "e.json", "--conv-variant", "i2cc"], r"conv\.algorithm: no conv plugin named 'i2cc' \(did you mean 'i2c'\?\)"),
    ("predict profile whose batch_size is 0", {"p.json": profile(batch_size=0)},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: profile\.batch_size: expected a batch size >= 1, got 0"),
    ("predict profile with a negative time", {"p.json": profile(loss_ms=-3)},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: profile\.loss_ms: expected a time in milliseconds, >= 0, got -3"),
    ("predict profile whose layers are not a list", {"p.json": profile(layers=7)},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: profile\.layers: expected an array"),
    ("predict profile row without its type",
     {"p.json": profile(layers=[{"layer": 1, "forward_ms": 1, "backward_ms": 1}])},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: profile\.layers\[0\]\.type: expected"),
    ("predict profile with a string time", {"p.json": profile(optimizer_ms="fast")},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: profile\.optimizer_ms: expected a time"),
    ("predict profile that is not JSON", {"p.json": "{profile"},
     ["predict", "e.json", "--profile", "p.json"], r"p\.json: not JSON"),
    ("plot of its own output", {"h.png": json.dumps({"epochs": [{"epoch": 1, "loss": 1.0}]})},
     ["plot", "h.png"], r"h\.png: the picture would overwrite its own input"),
    ("plot of a history whose epochs are not a list", {"h.json": json.dumps({"epochs": 3})},
     ["plot", "h.json"], r"h\.json: \"epochs\": expected a non-empty list"),
    ("plot of a history with a string loss",
     {"h.json": json.dumps({"epochs": [{"epoch": 1, "loss": "low"}]})},
     ["plot", "h.json"], r"h\.json: epochs\[0\]\.loss: expected a finite number"),
    ("plot of a history epoch that is not an object", {"h.json": json.dumps({"epochs": [1, 2]})},
     ["plot", "h.json"], r"h\.json: epochs\[0\]: expected an object"),
    ("plot of a prediction with 0 ranks",
     {"p.json": json.dumps({"points": [{"ranks": 0, "speedup": 1, "efficiency": 1}]})},
     ["plot", "p.json"], r"p\.json: points\[0\]\.ranks: expected a number > 0"),
    ("plot of a prediction whose points lack a speedup",
     {"p.json": json.dumps({"points": [{"ranks": 1, "efficiency": 1}]})},
     ["plot", "p.json"], r"p\.json: points\[0\]\.speedup: expected a finite number"),
    ("plot of a prediction with a bad network", {"p.json": json.dumps(
        {"points": [{"ranks": 1, "speedup": 1, "efficiency": 1}], "network": "fast"})},
     ["plot", "p.json"], r"p\.json: \"network\": expected"),
    ("plot of a file that is not UTF-8", {"h.json": b"\xff\xfe{"},
     ["plot", "h.json"], r"h\.json: not a JSON file"),
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
                elif content == "CHECKPOINT:nan":
                    content = poison_first_parameter(raw)
                else:
                    content = edit_checkpoint(raw, CHECKPOINT_EDITS[content.split(":")[1]])
            if callable(content):  # a special file: a pipe, a link, a device
                content(path)
                continue
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
        if "Traceback" in err:
            return f"a Python traceback: {err[-2000:]}"
        lines = [line for line in err.splitlines() if re.search(r"dtnn( plot)?: error:", line)]
        if len(lines) != 1:
            return f"expected one 'dtnn: error:' line, got {len(lines)}: {err[-2000:]}"
        if BARE.search(lines[0]):
            return f"a library's bare text: {lines[0]}"
        if not re.search(pattern, lines[0]):
            return f"the error does not match /{pattern}/: {lines[0]}"
        return None


# --- behaviours: runs that must succeed, and what they must leave -------------------------------
# Each takes a fresh folder holding e.json (the tiny experiment) and returns None or the problem.

def run(folder, *args):
    try:
        r = subprocess.run([DTNN] + list(args), cwd=folder, capture_output=True, text=True,
                           errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, "", f"still running after {TIMEOUT_S} s"
    return r.returncode, r.stdout, r.stderr


def history_to_devices(folder):
    """A history written to character devices is streamed, and the devices stay devices. Device
    nodes of the case's own (mknod, as root): a regression replaces them, not the system's."""
    if os.geteuid() != 0:
        return None  # mknod needs root; CI runs as root
    import stat
    null, full = os.path.join(folder, "null"), os.path.join(folder, "full")
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    code, _, err = run(folder, "run", "e.json", "--history", "null")
    if code != 0:
        return f"--history to a null device failed ({code}): {err[-1000:]}"
    if not stat.S_ISCHR(os.lstat(null).st_mode):
        return "--history replaced the null device with a regular file"
    code, _, err = run(folder, "run", "e.json", "--history", "full")
    if code != 1 or "full: write failed after 0 bytes (No space left on device)" not in err:
        return f"--history to a full device: exit {code}: {err[-1000:]}"
    if not stat.S_ISCHR(os.lstat(full).st_mode):
        return "--history replaced the full device with a regular file"
    return None


def history_through_a_link(folder):
    """A history path that is a symbolic link keeps its link; the target gets the history."""
    os.mkdir(os.path.join(folder, "real"))
    os.symlink("real/h.json", os.path.join(folder, "h.json"))
    code, _, err = run(folder, "run", "e.json", "--history", "h.json")
    if code != 0:
        return f"exit {code}: {err[-1000:]}"
    if not os.path.islink(os.path.join(folder, "h.json")):
        return "the link was replaced by a file"
    with open(os.path.join(folder, "real", "h.json")) as f:
        if "epochs" not in json.load(f):
            return "the link's target holds no history"
    return None


def history_of_upper_case_json(folder):
    """--history-file h.JSON writes JSON: the extension is read in any case."""
    code, _, err = run(folder, "run", "e.json", "--history-file", "h.JSON")
    if code != 0:
        return f"exit {code}: {err[-1000:]}"
    try:
        with open(os.path.join(folder, "h.JSON")) as f:
            json.load(f)
    except ValueError:
        return "h.JSON is not JSON"
    return None


def model_name_that_climbs(folder):
    """A model named x/../../../../y saves model_checkpoint's file inside the checkpoint folder."""
    model = dict(MODEL, name="x/../../../../escaped")
    with open(os.path.join(folder, "x.json"), "w") as f:
        f.write(experiment(model=model, schedulers=[{"name": "model_checkpoint",
                                                      "metric": "loss", "save_freq": 1}],
                           **{"training.epochs": 2, "output.checkpoint_dir": "deep/er/ck"}))
    code, _, err = run(folder, "run", "x.json")
    if code != 0:
        return f"exit {code}: {err[-1000:]}"
    outside = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
               if "escaped" in f and not os.path.join(d, f).startswith(
                   os.path.join(folder, "deep", "er", "ck") + os.sep)]
    if outside:
        return f"files outside the checkpoint folder: {outside}"
    inside = os.listdir(os.path.join(folder, "deep", "er", "ck"))
    if not any(f.startswith("model-x_.._.._.._.._escaped-epoch-") for f in inside):
        return f"no sanitised checkpoint in the folder: {inside}"
    return None


def zoo_name_beside_a_file(folder):
    """--model simplemlp with a file simplemlp in the working folder: the zoo's, and a warning."""
    with open(os.path.join(folder, "simplemlp"), "w") as f:
        f.write("not a model")
    code, out, err = run(folder, "summary", "--model", "simplemlp", "--dataset", "synthetic")
    if code != 0:
        return f"exit {code}: {err[-1000:]}"
    if "is the zoo's model" not in err or "./simplemlp" not in err:
        return f"no warning names the file that was not taken: {err[-1000:]}"
    return None


def key_given_twice(folder):
    """A JSON key given twice is warned of, naming the file and the key."""
    with open(os.path.join(folder, "x.json"), "w") as f:
        f.write(experiment().replace('"training": {', '"training": {"epochs": 3, '))
    code, _, err = run(folder, "run", "x.json")
    if code != 0:
        return f"exit {code}: {err[-1000:]}"
    if 'x.json: the key "epochs" is given twice in one object' not in err:
        return f"no warning: {err[-1000:]}"
    return None


def vocabulary_of_one_token(folder):
    """A vocabulary of one token trains to loss 0: a warning says that nothing is learnt."""
    with open(os.path.join(folder, "t.txt"), "w") as f:
        f.write("aaaa " * 40 + "\n")
    with open(os.path.join(folder, "v.txt"), "w") as f:
        f.write("[UNK]\n")
    with open(os.path.join(folder, "x.json"), "w") as f:
        f.write(experiment(model=TEXT_MODEL, dataset=dict(TEXT_VOCAB, test_every=0),
                           loss="nll", metrics=["token_accuracy"]))
    code, _, err = run(folder, "run", "x.json")
    if "a vocabulary of one token" not in err:
        return f"no warning (exit {code}): {err[-1000:]}"
    return None


def long_words_tokenize_in_linear_time(folder):
    """A 30,000-letter word and 12,000 CJK characters in a line: word pieces in linear time (the
    search was cubic: over 60 s), the word [UNK] (over BERT's 100 characters), each ideograph a
    word of its own."""
    with open(os.path.join(folder, "t.txt"), "w") as f:
        f.write("a" * 30000 + " cat\n" + "\u732b" * 12000 + "\n")
    with open(os.path.join(folder, "v.txt"), "w") as f:
        f.write("[UNK]\ncat\n\u732b\na\n##a\n")
    with open(os.path.join(folder, "x.json"), "w") as f:
        f.write(experiment(model=TEXT_MODEL, dataset=TEXT_VOCAB, loss="nll",
                           metrics=["token_accuracy"]))
    code, _, err = run(folder, "run", "x.json")
    return None if code == 0 else f"exit {code}: {err[-1000:]}"


BEHAVIOURS = [history_to_devices, history_through_a_link, history_of_upper_case_json,
              model_name_that_climbs, zoo_name_beside_a_file, key_given_twice,
              vocabulary_of_one_token, long_words_tokenize_in_linear_time]


def main():
    failed = total = 0
    for name, files, args, pattern in CASES:
        if ONLY not in name:
            continue
        problem = run_case(name, files, args, pattern)
        print(("FAIL " if problem else "ok   ") + name + (": " + problem if problem else ""),
              flush=True)
        failed += problem is not None
        total += 1
    for behaviour in BEHAVIOURS:
        name = behaviour.__name__.replace("_", " ")
        if ONLY not in name:
            continue
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "e.json"), "w") as f:
                f.write(experiment())
            problem = behaviour(folder)
        print(("FAIL " if problem else "ok   ") + name + (": " + problem if problem else ""),
              flush=True)
        failed += problem is not None
        total += 1
    print(f"{failed} of {total} cases failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
