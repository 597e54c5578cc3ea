#!/usr/bin/env python3
"""ctest's entry to the Python module's tests: pytest over tests/python, run by the interpreter the
module was built for, with the build's package on the path. Exit 77 (skipped) where that
interpreter lacks pytest or numpy (Debian: python3-pytest, python3-numpy).

    run_tests.py BUILD_PYTHON_DIR [pytest arguments]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    try:
        import numpy  # noqa: F401
        import pytest
    except ImportError as e:
        print(f"skipped: {e} (install python3-pytest and python3-numpy for {sys.executable})")
        sys.exit(77)
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", HERE] + sys.argv[2:]))
