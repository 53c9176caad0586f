"""The TensorFlow a project pins: the newest release its requirements allow, read from the files
next to the code (never from what is installed here, which says nothing about the code's own).

Advice about an API that came in a later release is wrong for such code: ``reduce_retracing``
(TF 2.9) does not exist on a project pinned to ``tensorflow==2.3.1``, and there
``tensorflow.python.keras`` *is* ``tf.keras`` (Keras left TensorFlow in 2.6).

Where the pin is read:
- a notebook's own ``!pip install tensorflow-gpu==2.0.0`` (kept in its mask, ``notebook.py``);
- otherwise the dependency files of the file's folder and the folders above it, up to the
  repository's root (the folder holding ``.git``) or a workspace root: ``requirements*.txt``,
  ``environment*.yml``, ``setup.py``, ``setup.cfg``, ``pyproject.toml``, ``Pipfile``. The nearest
  folder whose files name TensorFlow decides.

Only an upper bound counts (``==2.3.1``, ``<2.6``, ``~=2.4.0``, conda's ``=2.3``): ``>=2.4`` or a
bare ``tensorflow`` pins nothing. Where the files name TensorFlow more than once, the loosest
requirement wins: one unpinned mention means no pin.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache

Version = tuple[int, int]  # (major, minor)

# The files that list a project's dependencies (a glob's prefix and suffix, or an exact name).
_EXACT = {"setup.py", "setup.cfg", "pyproject.toml", "Pipfile"}
_PATTERNS = (("requirements", ".txt"), ("requirements", ".in"), ("environment", ".yml"), ("environment", ".yaml"),
             ("conda", ".yml"), ("conda", ".yaml"))
# How many folders above the file are read at most (a script in ``project/src/models/``).
_MAX_LEVELS = 4
_MAX_BYTES = 200_000  # a dependency file is small; anything bigger is not one

_DISTRIBUTION = r"(?<![\w.-])tensorflow(?:[-_](?:gpu|cpu|macos|intel))?(?![\w.-])"
_SPECIFIER = r"(?:===|==|~=|<=|>=|!=|<|>|=)\s*[0-9][0-9a-zA-Z.*+!-]*"
# ``tensorflow-gpu==2.0.0``, ``tensorflow >=2.4, <2.6``, ``tensorflow[and-cuda]==2.15``, conda's ``tensorflow=2.3``.
_REQUIREMENT = re.compile(rf"{_DISTRIBUTION}\s*(?:\[[^\]]*\])?\s*(?P<spec>{_SPECIFIER}(?:\s*,\s*{_SPECIFIER})*)?",
                          re.IGNORECASE)
_ONE_SPECIFIER = re.compile(r"(===|==|~=|<=|>=|!=|<|>|=)\s*([0-9][0-9a-zA-Z.*+!-]*)")
# A notebook's install line, as its mask keeps it: ``pip install -q tensorflow-gpu==2.0.0-alpha0``.
_PIP_INSTALL = re.compile(r"pip3?[ \t]+install\b(?P<args>[^\n]*)")  # a literal first: a fast search
_UNBOUNDED = (10**6, 10**6)  # no upper bound


def newest_pinned(text: str, path: str | None, roots: tuple[str, ...] = ()) -> Version | None:
    """The newest (major, minor) of TensorFlow the code's project allows, or None when nothing
    bounds its minor release (``tensorflow>=2.4``, ``tensorflow<3``). ``text``: the file's text
    (a notebook's ``pip install`` lines are read from it)."""
    if "install" in text:
        in_text = _loosest(_requirements_in_installs(text))
        if in_text is not None:
            return _known(in_text)
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(_MAX_LEVELS + 1):
        found = _folder_pin(folder, _stamps(folder))
        if found is not None:
            return _known(found)
        parent = os.path.dirname(folder)
        if parent == folder or folder in roots or os.path.isdir(os.path.join(folder, ".git")):
            break
        folder = parent
    return None


def pinned_below(version: Version, text: str, path: str | None, roots: tuple[str, ...] = ()) -> bool:
    """Whether the project's TensorFlow is pinned to releases older than ``version``."""
    newest = newest_pinned(text, path, roots)
    return newest is not None and newest < version


def _known(newest: Version) -> Version | None:
    return None if newest[1] >= _UNBOUNDED[0] else newest


def _requirements_in_installs(text: str) -> list[str]:
    found: list[str] = []
    for install in _PIP_INSTALL.finditer(text):  # a search of the text, not a pass over its lines
        if "tensorflow" in install.group("args").lower():
            found.extend(m.group(0) for m in _REQUIREMENT.finditer(install.group("args")))
    return found


def _stamps(folder: str) -> tuple[tuple[str, int, int], ...]:
    """The folder's dependency files with their sizes and times: the cache key of what they pin."""
    stamps = []
    for name in _dependency_files(folder):
        try:
            stat = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        stamps.append((name, stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


def _dependency_files(folder: str) -> tuple[str, ...]:
    """The names of the folder's dependency files, listed again only when the folder changes (its
    time moves when a file is added or removed): a keystroke reads a few stats, not ``/tmp``."""
    try:
        changed = os.stat(folder).st_mtime_ns
    except OSError:
        return ()
    return _listed(folder, changed)


@lru_cache(maxsize=256)
def _listed(folder: str, changed: int) -> tuple[str, ...]:
    try:
        names = os.listdir(folder)
    except OSError:
        return ()
    return tuple(sorted(name for name in names if name in _EXACT
                        or any(name.startswith(prefix) and name.endswith(suffix) for prefix, suffix in _PATTERNS)))


@lru_cache(maxsize=256)
def _folder_pin(folder: str, stamps: tuple[tuple[str, int, int], ...]) -> Version | None:
    """What the folder's dependency files pin: a version, _UNBOUNDED when they name TensorFlow
    without an upper bound, None when they do not name it."""
    requirements: list[str] = []
    for name, size, _ in stamps:
        if size > _MAX_BYTES:
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        lines = (line.split("#", 1)[0] if not name.endswith(".py") else line for line in text.split("\n"))
        requirements.extend(m.group(0) for line in lines for m in _REQUIREMENT.finditer(line))
    return _loosest(requirements)


def _loosest(requirements: list[str]) -> Version | None:
    """The newest version the loosest of ``requirements`` allows (_UNBOUNDED for none), or None
    when there are none."""
    if not requirements:
        return None
    return max(_upper_bound(requirement) for requirement in requirements)


def _upper_bound(requirement: str) -> Version:
    """The newest (major, minor) one requirement allows: ``==2.3.1`` -> (2, 3), ``<2.6`` ->
    (2, 5), ``<2.6.1`` -> (2, 6), ``~=2.4.0`` -> (2, 4), ``~=2.4`` -> any 2.x."""
    bound = _UNBOUNDED
    for operator, version in _ONE_SPECIFIER.findall(requirement):
        parts = _numbers(version)
        newest = _newest_allowed(operator, parts) if parts else None
        if newest is not None:
            bound = min(bound, newest)
    return bound


def _newest_allowed(operator: str, parts: list[int]) -> Version | None:
    """The newest (major, minor) ``operator`` with release numbers ``parts`` allows; None for
    the operators that set no upper bound (``>=``, ``>``, ``!=``)."""
    major, any_minor = parts[0], _UNBOUNDED[1]
    if operator in ("==", "===", "=", "<="):
        return (major, parts[1]) if len(parts) > 1 else (major, any_minor)
    if operator == "<":
        if len(parts) > 2 and any(parts[2:]):
            return major, parts[1]  # <2.6.1: 2.6.0 is allowed
        minor = parts[1] if len(parts) > 1 else 0
        return (major, minor - 1) if minor > 0 else (major - 1, any_minor)
    if operator == "~=":
        return (major, parts[1]) if len(parts) > 2 else (major, any_minor)
    return None


def _numbers(version: str) -> list[int]:
    """The release numbers of a version: ``2.0.0-alpha0`` -> [2, 0, 0], ``2.3.*`` -> [2, 3]."""
    numbers = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group(0)))
        if digits.group(0) != part:
            break  # ``0-alpha0``, ``0rc1``: the release numbers end here
    return numbers
