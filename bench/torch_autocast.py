#!/usr/bin/python3
"""The PyTorch peer (../shared/peers/torch_peer.py) in mixed precision: its whole run inside
torch.autocast("cpu", dtype=...), PyTorch's own mixed precision on a CPU (convolutions and linear
layers in the low precision, float32 master weights), as dtnn's training.precision compares with.

  torch_autocast.py --dtype bfloat16 PEER.py [the peer's arguments...]

bench/compare_torch.py --precision bf16 runs it."""
import runpy, sys

import torch


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "--dtype":
        sys.exit("usage: torch_autocast.py --dtype bfloat16|float16 PEER.py [peer arguments...]")
    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(sys.argv[2])
    if dtype is None:
        sys.exit(f"torch_autocast.py: --dtype '{sys.argv[2]}'; expected bfloat16 or float16")
    peer = sys.argv[3]
    sys.argv = [peer, *sys.argv[4:]]
    with torch.autocast("cpu", dtype=dtype):
        runpy.run_path(peer, run_name="__main__")


if __name__ == "__main__":
    main()
