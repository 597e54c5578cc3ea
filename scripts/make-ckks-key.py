#!/usr/bin/env python3
"""Makes a CKKS key for the ckks codec (docs/federated.md), a TenSEAL context with its secret key:

    scripts/make-ckks-key.py FILE [--slots 13] [--scale 40]

Every rank of a run is given the same FILE as parallel.codec.key_file (--encryption-key), copied
to each machine by a channel the run's other parties cannot read: whoever holds it decrypts what
the ranks send. The file is written readable by its owner only, and an existing file is not
replaced. --slots S: 2^S values per ciphertext (ring degree 2^(S+1)); --scale B: values go as
value x 2^B, in a data prime of B + 20 bits beside a special prime as large (as the codec makes
keys itself). Needs Python's tenseal (scripts/install-deps.sh installs it).
"""
import argparse
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--slots", type=int, default=13, help="log2 of the values per ciphertext (10-14)")
    parser.add_argument("--scale", type=int, default=40, help="log2 of the scale (25-40)")
    args = parser.parse_args()
    if not 10 <= args.slots <= 14:
        parser.error(f"--slots {args.slots}: expected 10 to 14")
    if not 25 <= args.scale <= 40:
        parser.error(f"--scale {args.scale}: expected 25 to 40")
    try:
        import tenseal as ts
    except ImportError as e:
        print(f"make-ckks-key: cannot import tenseal ({e}); scripts/install-deps.sh installs it",
              file=sys.stderr)
        return 1
    prime = args.scale + 20
    degree = 2 << args.slots
    limit = {2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}[degree]
    if 2 * prime > limit:  # the Homomorphic Encryption Standard's bound for 128-bit security
        parser.error(f"--scale {args.scale} at --slots {args.slots}: {2 * prime} modulus bits, "
                     f"more than the {limit} that 128-bit security allows at degree {degree}")
    context = ts.context(ts.SCHEME_TYPE.CKKS, poly_modulus_degree=degree,
                         coeff_mod_bit_sizes=[prime, prime], n_threads=1)
    context.global_scale = 2.0 ** args.scale
    data = context.serialize(save_public_key=True, save_secret_key=True,
                             save_galois_keys=False, save_relin_keys=False)
    try:
        fd = os.open(args.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        print(f"make-ckks-key: {args.file}: {e.strerror} (an existing key is never replaced)",
              file=sys.stderr)
        return 1
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    print(f"make-ckks-key: {args.file}: degree {degree}, scale 2^{args.scale}, "
          f"{len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
