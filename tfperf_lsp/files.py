"""Finding Python files and reading them safely: encodings, huge files, unreadable paths."""
from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass

MAX_BYTES = 5_000_000  # larger files are generated code or data; analysing them helps nobody
SKIPPED_DIRS = {".git", ".hg", ".venv", "venv", "env", "__pycache__", "node_modules", "site-packages", "build", "dist", ".tox", ".mypy_cache", ".pytest_cache"}


@dataclass(frozen=True)
class FileProblem:
    path: str
    message: str


def discover(paths: list[str]) -> tuple[list[str], list[FileProblem]]:
    files: list[str] = []
    problems: list[FileProblem] = []
    for path in paths:
        if os.path.isdir(path):
            for directory, subdirs, names in os.walk(path):
                subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith("."))
                files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith((".py", ".pyi")))
        elif os.path.isfile(path):
            files.append(path)
        else:
            problems.append(FileProblem(path, "no such file or directory"))
    return files, problems


def read_source(path: str) -> str | FileProblem:
    """The file's text, decoded as Python does (PEP 263 coding cookie, UTF-8 by default)."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            return FileProblem(path, f"skipped: {size / 1e6:.1f} MB is larger than the {MAX_BYTES / 1e6:.0f} MB limit")
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileProblem(path, f"cannot read: {exc.strerror or exc}")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return FileProblem(path, f"cannot decode: {exc}; tfperf reads UTF-8 or the encoding declared in a coding comment")
    return text[1:] if text.startswith("\ufeff") else text
