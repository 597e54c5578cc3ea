#!/usr/bin/env python3
"""Writes the first N samples of an IDX file (MNIST's format, gzip or not) as a gzip IDX file:
the header's count becomes N. scripts/gpu-bundle.sh packs Fashion-MNIST's first 20000 training
samples this way, to fit the device tool's carry limit.

  scripts/idx_subset.py IN OUT.gz N
"""
import gzip, struct, sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as f:
        magic = f.read(4)
        if len(magic) != 4 or magic[0] != 0 or magic[1] != 0 or magic[2] != 8:
            sys.exit(f"{src}: not an IDX file of unsigned bytes (magic {magic.hex()})")
        dims = [struct.unpack(">I", f.read(4))[0] for _ in range(magic[3])]
        if n > dims[0]:
            sys.exit(f"{src}: {dims[0]} samples, fewer than {n}")
        per_sample = 1
        for d in dims[1:]:
            per_sample *= d
        body = f.read(n * per_sample)
    with gzip.open(dst, "wb") as out:
        out.write(magic)
        out.write(struct.pack(">I", n))
        for d in dims[1:]:
            out.write(struct.pack(">I", d))
        out.write(body)


if __name__ == "__main__":
    main()
