"""Which stack frame is the user's code: the line a fact belongs to. No TensorFlow here."""
from __future__ import annotations

import linecache
import os
import re
import sys
import sysconfig

_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tfperf_lsp
_STDLIB = tuple(p for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p)

USER, TF, LIB = "user", "tf", "lib"
_KIND: dict[str, str] = {}


def classify(filename: str) -> str:
    """user: the program's own files; tf: TensorFlow, autograph output and tfperf itself (frames
    to look through); lib: any other library or the standard library."""
    kind = _KIND.get(filename)
    if kind is None:
        kind = _classify(filename)
        _KIND[filename] = kind
    return kind


def _classify(filename: str) -> str:
    if "__autograph_generated_file" in filename:
        return TF
    if filename.startswith("<"):
        return LIB if filename.startswith("<frozen") else USER
    path = os.path.abspath(filename)
    kind = _classify_path(path)
    if kind == USER:
        # A package reached through a symlink or a directory on sys.path that is not called
        # site-packages (a .pth file, PYTHONPATH, pip install --target): where it really is, and
        # the imported TensorFlow/Keras packages' own folders.
        real = os.path.realpath(path)
        kind = _classify_path(real) if real != path else kind
        if kind == USER:
            kind = _package_kind(path) or _package_kind(real) or USER
    return kind


def _classify_path(path: str) -> str:
    if path.startswith(_OWN + os.sep):
        return TF
    parts = path.split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            top = parts[parts.index(marker) + 1] if parts.index(marker) + 1 < len(parts) else ""
            return TF if top in _TF_PACKAGES else LIB
    if path.startswith(_STDLIB):
        return LIB
    return USER


_TF_PACKAGES = ("tensorflow", "tensorflow_core", "tf_keras")


def _package_kind(path: str) -> str | None:
    """TF or LIB when ``path`` lies in the folder of an imported TensorFlow or Keras package."""
    for name in (*_TF_PACKAGES, "keras"):
        module_file = getattr(sys.modules.get(name), "__file__", None)
        if module_file:
            root = os.path.dirname(os.path.abspath(module_file))
            if path.startswith(root + os.sep):
                return TF if name in _TF_PACKAGES else LIB
    return None


def user_site(frame, max_depth: int = 80) -> tuple[str, int] | None:
    """The innermost user frame at or above ``frame`` (through any library), as (file, line)."""
    depth = 0
    while frame is not None and depth < max_depth:
        filename = frame.f_code.co_filename
        if classify(filename) == USER:
            path = _ABSOLUTE.get(filename)
            if path is None:
                path = _ABSOLUTE[filename] = filename if filename.startswith("<") else os.path.abspath(filename)
            return (path, frame.f_lineno)
        frame = frame.f_back
        depth += 1
    return None


_ABSOLUTE: dict[str, str] = {}  # a code object's file name -> absolute path (the cwd does not change it
                                # for a program already loaded)


# Library methods that only convert a value (keras.Variable.numpy()): looked through, since the
# conversion is what the user's line asked for.
CONVERSIONS = frozenset({"numpy", "__float__", "__int__", "__bool__", "__index__", "__array__", "item", "tolist"})


def direct_user_site(frame, max_depth: int = 30) -> tuple[str, int] | None:
    """The user frame that called into TensorFlow directly: TensorFlow frames and library
    conversion methods are looked through; any other library frame (Keras' own bookkeeping in
    fit) means the call is not the user's."""
    depth = 0
    while frame is not None and depth < max_depth:
        kind = classify(frame.f_code.co_filename)
        if kind == USER:
            return user_site(frame, 1)
        if kind == LIB and frame.f_code.co_name not in CONVERSIONS:
            return None
        frame = frame.f_back
        depth += 1
    return None


_BRANCH = re.compile(r"\s*(if|elif|while|assert)\b")
_TERNARY = re.compile(r"\bif\b.*\belse\b")
_BRANCHES: dict[tuple[str, int], str | None] = {}


def branch_kind(site: tuple[str, int]) -> str | None:
    """"if", "while", "assert" or "conditional expression" when the source line at ``site``
    decides a Python branch, else None (cached per line: the file is read once)."""
    kind = _BRANCHES.get(site, False)
    if kind is False:
        text = linecache.getline(site[0], site[1])
        match = _BRANCH.match(text)
        if match:
            kind = "if" if match.group(1) == "elif" else match.group(1)
        elif _TERNARY.search(text.split("#", 1)[0]):
            kind = "conditional expression"
        else:
            kind = None
        _BRANCHES[site] = kind
    return kind


def caller(depth: int = 2):
    return sys._getframe(depth)
