"""`python3 -m dtnn ...` and, after `pip install .`, the `dtnn` command: the dtnn program that
came with this package (bin/dtnn inside it once installed by pip, <build>/bin/dtnn beside the
build tree's package), with the same arguments."""
import os
import pathlib
import sys


def program() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent
    for candidate in (here / "bin" / "dtnn", here.parent.parent / "bin" / "dtnn"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit(f"dtnn: no dtnn program beside the package in {here}")


def main() -> None:
    exe = program()
    os.execv(exe, [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
