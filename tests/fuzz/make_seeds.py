#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora under tests/fuzz/corpus/<target>/ (committed; rerun when
a format changes). Small valid inputs of each kind, from which the fuzzers mutate.

    make_seeds.py DTNN     (the dtnn binary: it writes the checkpoint, int8 model and PyDTNN weights
                            seeds)

The JPEG seed (corpus/image/small.jpg, 20x12) was written with libjpeg; it is kept as it is.
"""
import gzip
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
import zlib

import numpy as np

DTNN = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))


def out(target, name, data):
    path = os.path.join(HERE, "corpus", target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npz_bytes(compressed, **arrays):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


# npz: stored and deflated, floats and integers.
out("npz", "stored.npz", npz_bytes(False, a=np.arange(6, dtype=np.float32).reshape(2, 3),
                                   b=np.array([1, 2], dtype=np.int64)))
out("npz", "deflated.npz", npz_bytes(True, x=np.ones((2, 2, 1), dtype=np.float64),
                                     y=np.array([3], dtype=np.uint8)))

# checkpoint and PyDTNN weights: the fuzz targets' tiny model (flatten, fc 3, softmax on 2x2x1),
# SGD with momentum.
with tempfile.TemporaryDirectory() as d:
    exp = {"model": {"name": "tiny", "layers": [{"type": "flatten"}, {"type": "fc", "units": 3},
                                                 {"type": "softmax"}]},
           "dataset": {"name": "synthetic", "input_shape": [2, 2, 1], "classes": 3,
                       "train_samples": 8, "test_samples": 4},
           "training": {"epochs": 1, "batch_size": 4},
           "optimizer": {"name": "sgd", "learning_rate": 0.1, "momentum": 0.9},
           "output": {"progress": "none", "checkpoint_dir": os.path.join(d, "ck"),
                      "weights_npz": os.path.join(d, "w.npz")}}
    with open(os.path.join(d, "e.json"), "w") as f:
        json.dump(exp, f)
    subprocess.run([DTNN, "run", os.path.join(d, "e.json")], check=True, capture_output=True)
    ck = os.path.join(d, "ck", sorted(os.listdir(os.path.join(d, "ck")))[-1])
    out("checkpoint", "tiny.dtnn", open(ck, "rb").read())
    int8 = os.path.join(d, "tiny.int8")
    subprocess.run([DTNN, "quantize", os.path.join(d, "e.json"), "--weights", ck,
                    "--calibration-batches", "1", "--no-evaluate", "--output", int8],
                   check=True, capture_output=True)
    out("int8_model", "tiny.int8", open(int8, "rb").read())
    out("pydtnn_weights", "tiny.npz", open(os.path.join(d, "w.npz"), "rb").read())

# Model files (numbers of at most 64: the target skips larger ones).
models = {
    "conv.json": {"layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
                             {"type": "batchnorm"}, {"type": "relu"}, {"type": "maxpool2d", "pool": 2},
                             {"type": "flatten"}, {"type": "fc", "units": 8}, {"type": "dropout", "rate": 0.5},
                             {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "blocks.json": {"layers": [
        {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
        {"repeat": 2, "layers": [{"type": "add", "paths": [
            [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}, {"type": "relu"}], []]}]},
        {"type": "concat", "paths": [[{"type": "avgpool2d", "pool": 2}], [{"type": "maxpool2d", "pool": 2}]]},
        {"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "pointwise.json": {"layers": [{"type": "pointwise_conv2d", "filters": 2},
                                  {"type": "depthwise_conv2d", "kernel": 3},
                                  {"type": "leaky_relu"}, {"type": "flatten"}, {"type": "fc", "units": 2},
                                  {"type": "sigmoid"}]},
}
for name, m in models.items():
    out("model_json", name, json.dumps(m, indent=1))

# Experiment files, the last one with a --set line.
base = {"model": "simplecnn", "dataset": {"name": "synthetic", "input_shape": [28, 28, 1]},
        "training": {"batch_size": 32, "epochs": 2, "on_nonfinite": "skip_batch"},
        "optimizer": {"name": "adam", "learning_rate": 0.001},
        "schedulers": [{"name": "early_stopping", "patience": 2}],
        "output": {"checkpoint_dir": "ck", "checkpoint_keep": 2}}
out("experiment_json", "synthetic.json", json.dumps(base, indent=1))
out("experiment_json", "with_set.json", json.dumps({"model": "simplemlp"}) +
    "\n// a comment\ntraining.epochs=3")

# IDX: the first byte picks the file (0 train images, 1 train labels, 2 test images, 3 labels).
def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload

out("idx", "train_images", b"\0" + idx(0x803, [2, 28, 28], bytes(range(256)) * 6 + bytes(32)))
out("idx", "train_labels", b"\1" + idx(0x801, [2], b"\x03\x07"))
out("idx", "test_images_gz", b"\2" + gzip.compress(idx(0x803, [2, 28, 28], bytes(2 * 784))))

# CIFAR-10: first byte even: the archive read in place; odd: test_batch.bin.
record = bytes([4]) + bytes(range(256)) * 12
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as tar:
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
        info.size = len(record)
        tar.addfile(info, io.BytesIO(record))
out("cifar10", "archive", b"\0" + buf.getvalue())
out("cifar10", "test_batch", b"\1" + record * 2)

# PNG: 5x3 RGB, written by hand (zlib).
def png(width, height):
    raw = b"".join(b"\0" + bytes((x * 40 + y * 9) % 256 for x in range(width * 3))
                   for y in range(height))
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

out("image", "small.png", png(5, 3))

# best_of's tuning cache: the key a run looks up on the first line, then the file.
KEY = ("AMD EPYC | BLIS zen3 | 2 threads | i2c@0123abcd,gemm@4567ef01 | "
       "N64 28x28x1 -> 4 k3x3 s1 p0 d1")
cache = {"entries": {KEY: {"choice": "gemm", "median_ms": {"i2c": 0.41, "gemm": 0.32}},
                     KEY + "/other": {"choice": "i2c", "median_ms": {"i2c": 1.0}}}}
out("tuning_cache", "hit", KEY + "\n" + json.dumps(cache, indent=1))
out("tuning_cache", "mistyped_entries", KEY + "\n" + json.dumps(
    {"entries": {KEY: {"choice": 3}, KEY + "/other": ["i2c"], "x": None}}))
out("tuning_cache", "empty", "k\n{\"entries\": {}}")

# Word pieces: a vocabulary, a NUL, a text (ASCII, punctuation, CJK, a word of more than 100 letters).
VOCAB = "[UNK]\nthe\ncat\n##s\nsat\n.\n\u732b\n"
out("tokenizer", "english", VOCAB + "\0The cats sat. the cat sat.")
out("tokenizer", "cjk_and_long", VOCAB + "\0\u732b\u72d7\u732b cat " + "a" * 150 + " cats")

# CSV tables: a header, a byte-order mark, CRLF lines, a number that underflows.
out("csv", "header", "x1,x2,y\n1,2,3\n4.5, -6e-3 ,7\n")
out("csv", "bom_crlf", "\ufeffa,b\r\n1,2\r\n\r\n3,1e-400\r\n")

# Profiles: a history holding one, and the profile object alone.
PROFILE = {"layers": [{"layer": 1, "type": "fc", "forward_ms": 0.5, "backward_ms": 1.0},
                      {"layer": 2, "type": "softmax", "forward_ms": 0.1, "backward_ms": 0.1}],
           "batch_size": 64, "data_wait_ms": 0.2, "loss_ms": 0.05, "optimizer_ms": 0.3}
out("profile", "history", json.dumps({"epochs": [], "profile": PROFILE}))
out("profile", "profile", json.dumps(PROFILE))


# The tcp communicator's frames (plugins/communicators/tcp/frame.hpp): a hello, and a data frame
# of the shape the fuzz target expects.
def frame(kind, seq, payload):
    return b"DTNN" + bytes([1, kind, 0, 0]) + struct.pack("<QQ", seq, len(payload)) + payload


out("tcp_frame", "hello", frame(1, 0, struct.pack("<II", 1, 4)))
out("tcp_frame", "data", frame(4, 3, bytes(4096)))
out("tcp_frame", "refusal", frame(3, 0, b"rank 5 is not among 1..3"))


# The grpc communicator's frames (plugins/communicators/grpc/star.proto), protobuf's encoding by
# hand: type (field 1), seq (field 2), payload (field 3).
def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def grpc_frame(kind, seq, payload):
    return (b"\x08" + varint(kind) + (b"\x10" + varint(seq) if seq else b"") +
            b"\x1a" + varint(len(payload)) + payload)


out("grpc_frame", "hello", grpc_frame(1, 0, struct.pack("<II", 1, 4)))
out("grpc_frame", "data", grpc_frame(4, 3, bytes(4096)))
out("grpc_frame", "refusal", grpc_frame(3, 0, b"rank 5 is not among 1..3"))


# The mqtt communicator's messages (plugins/communicators/mqtt/message.hpp): an announcement, a
# hello, a refusal, and chunks of a data transfer.
def message(kind, sender, to, seq, total, offset, payload):
    return (b"DTMQ" + bytes([1, kind, 0, 0]) + struct.pack("<II", sender, to) + bytes(range(16)) +
            struct.pack("<QQQ", seq, total, offset) + payload)


out("mqtt_message", "session", message(1, 0, 0xffffffff, 0, 12, 0, struct.pack("<IQ", 4, 0)))
out("mqtt_message", "hello", message(2, 2, 0, 0, 12, 0, struct.pack("<IQ", 4, 77)))
out("mqtt_message", "refusal", message(4, 0, 2, 0, 20, 0, struct.pack("<Q", 77) + b"rank 2 taken"))
out("mqtt_message", "data_chunk", message(5, 1, 0, 9, 4096, 1024, bytes(1024)))
print("seeds written under", os.path.join(HERE, "corpus"))
