"""`python3 -m dtnn ...` and, after `pip install .`, the `dtnn` command: the dtnn program that
came with this package (bin/dtnn inside it once installed by pip, <build>/bin/dtnn beside the
build tree's package), with the same arguments.

Where a plugin folder (DTNN_PLUGIN_PATH's, --plugin-path's, the package's) holds plugins written
in Python (.py files), the command runs in this process instead (`dtnn._dtnn.command`), after
`import dtnn` has registered them, so that an experiment names them like any plugin; the dtnn
program hands itself over to this for the same reason (DTNN_IN_PYTHON set).

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


def plugin_path_arguments(args):
    """The folders --plugin-path names ("--plugin-path X", "--plugin-path=X", or with "_")."""
    out = []
    for i, a in enumerate(args):
        for flag in ("--plugin-path", "--plugin_path"):
            if a == flag and i + 1 < len(args):
                out.append(args[i + 1])
            elif a.startswith(flag + "="):
                out.append(a[len(flag) + 1:])
    return out


def python_plugin_files(folders):
    return [f for folder in folders if pathlib.Path(folder).is_dir()
            for f in sorted(pathlib.Path(folder).glob("*.py"))]


def default_plugin_folders():
    """DTNN_PLUGIN_PATH's folders and the package's (without importing the module)."""
    here = pathlib.Path(__file__).resolve().parent
    folders = [f for f in os.environ.get("DTNN_PLUGIN_PATH", "").split(":") if f]
    return folders + [str(here / "lib" / "dtnn" / "plugins"),
                      str(here.parent.parent / "lib" / "dtnn" / "plugins")]


def command_here(args) -> int:
    """The dtnn command in this process, with the plugins written in Python registered."""
    import warnings
    import dtnn  # registers the .py files of the default plugin folders
    from dtnn.plugin_files import load_plugins
    for f in python_plugin_files(plugin_path_arguments(args)):
        try:
            load_plugins(f)
        except Exception as e:  # noqa: BLE001 - as a plugin file that fails to load: a warning
            warnings.warn(f"dtnn: {f}: not loaded: {type(e).__name__}: {e}", RuntimeWarning,
                          stacklevel=2)
    sys.stdout.flush()
    return dtnn._dtnn.command(list(args))


def main() -> None:
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "check-plugin" and args[1].endswith(".py"):
        sys.exit(check_python_plugins(args[1]))
    if os.environ.get("DTNN_IN_PYTHON") or python_plugin_files(
            plugin_path_arguments(args) + default_plugin_folders()):
        sys.exit(command_here(args))
    exe = program()
    os.execv(exe, [str(exe), *args])


if __name__ == "__main__":
    main()
