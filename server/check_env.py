"""Prints one JSON object describing this interpreter, for the editor extension.

Never imports TensorFlow (seconds, hundreds of MB): it only asks importlib what is installed.
Output format: docs/contract.md, section "Launch".
"""
import importlib.metadata
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_DEPS = ("pygls", "lsprotocol", "jedi", "libcst")


def _version(dist: str):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def describe() -> dict:
    python_ok = sys.version_info >= (3, 10)
    tfperf = _version("tfperf")
    source = "environment" if tfperf else None
    if tfperf is None:
        for candidate in (os.path.dirname(HERE), os.path.join(HERE, "libs")):
            if os.path.isdir(os.path.join(candidate, "tfperf_lsp")):
                sys.path.append(candidate)
                source = "bundled"
                tfperf = "bundled"
                break
    missing = [name for name in SERVER_DEPS if importlib.util.find_spec(name) is None]
    tensorflow = _version("tensorflow") or _version("tensorflow-cpu") or _version("tensorflow-macos")
    if tensorflow is None and importlib.util.find_spec("tensorflow") is not None:
        tensorflow = "unknown"
    return {
        "python": "%d.%d.%d" % sys.version_info[:3],
        "python_ok": python_ok,
        "executable": sys.executable,
        "tfperf": tfperf,
        "tfperf_source": source,
        "missing": missing,
        "tensorflow": tensorflow,
        "keras": _version("keras") or _version("tf-keras"),
    }


if __name__ == "__main__":
    print(json.dumps(describe()))
