#!/usr/bin/env python3
"""No executable or shared object of the build or of an install has a RUNPATH (or RPATH) element
that names the current folder: an empty element (glibc reads "" as ".", so a trailing ':' loads
any library dropped where a user runs dtnn) or a relative one. Every element must be absolute or
start at $ORIGIN.

    runpath.py BUILD_DIR [--install]

--install also installs BUILD_DIR into a temporary prefix (cmake --install) and checks that tree.
"""
import os
import subprocess
import sys
import tempfile

ELF_MAGIC = b"\x7fELF"


def elf_files(root):
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) == ELF_MAGIC:
                    yield path


def search_paths(path):
    """The RUNPATH and RPATH strings of an ELF file, from readelf -d."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    found = []
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            found.append(line[line.index("[") + 1:line.rindex("]")])
    return found


def bad_elements(value):
    bad = []
    for element in value.split(":"):
        if element == "":
            bad.append("an empty element (the current folder)")
        elif not (element.startswith("/") or element.startswith("$ORIGIN")
                  or element.startswith("${ORIGIN}")):
            bad.append(f"'{element}', relative to the current folder")
    return bad


def check_tree(root):
    problems, checked = [], 0
    for path in elf_files(root):
        checked += 1
        for value in search_paths(path):
            for why in bad_elements(value):
                problems.append(f"{os.path.relpath(path, root)}: RUNPATH [{value}] has {why}")
    return problems, checked


def main():
    build = sys.argv[1]
    roots = [os.path.join(build, d) for d in ("bin", "lib", "python")
             if os.path.isdir(os.path.join(build, d))]
    problems, checked = [], 0
    for root in roots:
        p, n = check_tree(root)
        problems += p
        checked += n
    with tempfile.TemporaryDirectory() as prefix:
        if "--install" in sys.argv[2:]:
            subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                           capture_output=True)
            p, n = check_tree(prefix)
            problems += p
            checked += n
        for p in problems:
            print("FAIL " + p)
        print(f"{checked} ELF files checked, {len(problems)} with an unsafe RUNPATH element")
        if checked == 0:
            print("FAIL no ELF file found: wrong build folder?")
            return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
