"""`python3 -m dtnn ...` and, after `pip install .`, the `dtnn` command: the dtnn program that
came with this package (bin/dtnn inside it once installed by pip, <build>/bin/dtnn beside the
build tree's package), with the same arguments.

`python3 -m dtnn check-plugin FILE.py` (and `dtnn check-plugin FILE.py`, which comes here) checks
plugins written in Python instead: every class of the file with `kind` and `name` attributes is
registered and put through its kind's conformance checks, as `dtnn check-plugin` does a `.so`."""
import os
import pathlib
import sys


def program() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent
    for candidate in (here / "bin" / "dtnn", here.parent.parent / "bin" / "dtnn"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit(f"dtnn: no dtnn program beside the package in {here}")


def check_python_plugins(file: str) -> int:
    import dtnn
    from dtnn.plugin_files import import_file, plugin_classes
    path = pathlib.Path(file).resolve()
    if not path.is_file():
        print(f"dtnn check-plugin: {file}: no such file", file=sys.stderr)
        return 2
    plugins = plugin_classes(import_file(path))
    if not plugins:
        print(f"dtnn check-plugin: {file}: no class with `kind` and `name` attributes",
              file=sys.stderr)
        return 2
    failed_any = False
    for cls in plugins:
        name = dtnn.register(cls)
        print(f"{path}: {cls.kind} plugin '{name}' (Python) loads")
        checks = dtnn.check_plugin(cls.kind, name)
        supported = [c for c in checks if c["supported"]]
        failed = [c for c in supported if not c["passed"]]
        for c in failed:
            print(f"FAIL {c['what']} at {c['setting']}: {c['detail']}")
        print(f"conformance of {cls.kind} '{name}': {len(supported) - len(failed)} passed, "
              f"{len(failed)} failed, {len(checks) - len(supported)} not supported")
        failed_any |= bool(failed)
    return 1 if failed_any else 0


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "check-plugin" and sys.argv[2].endswith(".py"):
        sys.exit(check_python_plugins(sys.argv[2]))
    exe = program()
    os.execv(exe, [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
