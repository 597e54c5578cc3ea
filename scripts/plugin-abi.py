#!/usr/bin/env python3
"""The plugin ABI's fingerprint, tied to kPluginAbiVersion (core/include/dtnn/plugin.hpp).

The ABI is every core header a plugin compiles against: those that plugins/ and examples/ include
("dtnn/..."), and what they include in turn. Their text, without comments and with whitespace
collapsed, is hashed (SHA-256); core/plugin_abi.txt records the version and the hash it was
checked at. The build runs `check` (CMake's plugin_abi_check target): when the headers changed
and the record did not, it fails, so a change that alters what plugins see cannot land without a
decision: bump kPluginAbiVersion when old plugins would break, then `update`.

    scripts/plugin-abi.py check     exit 1 with what to do when the record is stale
    scripts/plugin-abi.py update    record the headers as they are, with the current version
    scripts/plugin-abi.py list      the headers that make the ABI
"""
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "core" / "include"
RECORD = ROOT / "core" / "plugin_abi.txt"
DTNN_INCLUDE = re.compile(r'#include\s+"(dtnn/[^"]+)"')


def abi_headers():
    """The core headers reachable from the plugins' and examples' sources, sorted."""
    todo, seen = [], set()
    for folder in ("plugins", "examples"):
        for f in (ROOT / folder).rglob("*"):
            if f.suffix in (".cpp", ".hpp", ".cu", ".cuh", ".h"):
                todo += DTNN_INCLUDE.findall(f.read_text(errors="replace"))
    while todo:
        name = todo.pop()
        header = INCLUDE / name
        if name in seen or not header.exists():  # generated headers (core_export.hpp) are not ABI text
            continue
        seen.add(name)
        todo += DTNN_INCLUDE.findall(header.read_text())
    return sorted(seen)


def normalized(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # block comments
    text = re.sub(r"//[^\n]*", " ", text)                # line comments
    return " ".join(text.split())


def fingerprint():
    h = hashlib.sha256()
    for name in abi_headers():
        h.update(name.encode() + b"\0" + normalized((INCLUDE / name).read_text()).encode() + b"\0")
    return h.hexdigest()


def version():
    text = (INCLUDE / "dtnn" / "plugin.hpp").read_text()
    return int(re.search(r"kPluginAbiVersion\s*=\s*(\d+)", text).group(1))


def main(argv):
    command = argv[1] if len(argv) > 1 else "check"
    if command == "list":
        print("\n".join(abi_headers()))
        return 0
    now = f"{version()} {fingerprint()}"
    if command == "update":
        RECORD.write_text(now + "\n")
        print(f"plugin-abi: recorded {now}")
        return 0
    recorded = RECORD.read_text().strip() if RECORD.exists() else "(none)"
    if recorded == now:
        return 0
    was_version = recorded.split()[0] if recorded != "(none)" else "?"
    print(f"plugin-abi: the headers plugins compile against changed (core/plugin_abi.txt records\n"
          f"  {recorded}\n  now {now}).\n"
          f"  If the change alters what an already-built plugin sees (a type's layout, a virtual\n"
          f"  function, a signature), bump kPluginAbiVersion in core/include/dtnn/plugin.hpp (now\n"
          f"  {version()}, recorded {was_version}); then run scripts/plugin-abi.py update and commit\n"
          f"  core/plugin_abi.txt. (`scripts/plugin-abi.py list` names the headers.)",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
