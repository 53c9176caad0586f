"""Prints one JSON object describing this interpreter, for the editor extension.

Never imports TensorFlow (seconds, hundreds of MB): it only asks importlib what is installed.
Written to run on any Python (even 2.7): an old interpreter must get a clear "too old" answer,
not a crash. Output format: docs/contract.md, section "Launch".
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_DEPS = ("pygls", "lsprotocol", "jedi", "libcst")


def _old_python():
    return {
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "python_ok": False,
        "executable": sys.executable,
        "tfperf": None,
        "tfperf_source": None,
        "missing": [],
        "tensorflow": None,
        "keras": None,
    }


def _inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def describe():
    if sys.version_info < (3, 10):
        return _old_python()
    import importlib.metadata
    import importlib.util

    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    # Installed metadata alone is not enough: the package must also be importable here.
    spec = importlib.util.find_spec("tfperf_lsp")
    tfperf = version("tfperf") if spec is not None else None
    source = "environment" if tfperf else None
    # tfperf.importStrategy "useBundled": the extension puts its bundled/libs first on PYTHONPATH.
    bundled_libs = os.environ.get("TFPERF_BUNDLED_LIBS")
    if tfperf and bundled_libs and spec.origin and _inside(spec.origin, bundled_libs):
        source = "bundled"
    if tfperf is None:
        for candidate in (os.path.dirname(HERE), os.path.join(HERE, "libs")):
            if os.path.isdir(os.path.join(candidate, "tfperf_lsp")):
                sys.path.append(candidate)
                source = "bundled"
                tfperf = "bundled"
                break
    missing = [name for name in SERVER_DEPS if importlib.util.find_spec(name) is None]
    tensorflow = version("tensorflow") or version("tensorflow-cpu") or version("tensorflow-macos")
    if tensorflow is None and importlib.util.find_spec("tensorflow") is not None:
        tensorflow = "unknown"
    return {
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "python_ok": True,
        "executable": sys.executable,
        "tfperf": tfperf,
        "tfperf_source": source,
        "missing": missing,
        "tensorflow": tensorflow,
        "keras": version("keras") or version("tf-keras"),
    }


if __name__ == "__main__":
    print(json.dumps(describe()))
