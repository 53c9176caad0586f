"""Finding Python files (excludes, .gitignore) and reading them safely: encodings, huge files,
unreadable paths."""
from __future__ import annotations

import functools
import io
import json
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass


from tfperf_lsp import settings_schema

MAX_BYTES = 5_000_000  # larger files are generated code or data; analysing them helps nobody
SOURCE_SUFFIXES = tuple(settings_schema.default("include"))  # `include` in [tool.tfperf] replaces it
# Folders and files skipped by default, as ruff's default `exclude`. `exclude` in [tool.tfperf]
# or on the command line replaces this list; `extend-exclude` adds to it.
DEFAULT_EXCLUDE = tuple(settings_schema.default("exclude"))


@dataclass(frozen=True)
class FileProblem:
    path: str
    message: str
    row: int | None = None  # 1-based, when the problem has a place (a syntax error)
    col: int | None = None

    def line(self) -> str:
        """``path:row:col: message``, the shape editors' and CI problem matchers read."""
        where = f"{self.path}:{self.row}:{self.col}:" if self.row is not None else f"{self.path}:"
        return f"{where} {self.message}"


@dataclass(frozen=True)
class FileSelection:
    """Which files a directory walk keeps; see ``selection_from``."""

    # (root, glob): a glob with a slash is relative to its root (the pyproject's folder, or the
    # current folder for the command line's); one without matches a name anywhere.
    exclude: tuple[tuple[str, str], ...] = tuple((".", g) for g in DEFAULT_EXCLUDE)
    respect_gitignore: bool = settings_schema.default("respectGitignore")
    force_exclude: bool = settings_schema.default("forceExclude")  # also exclude files named on the command line
    include: tuple[str, ...] = SOURCE_SUFFIXES  # extensions a directory walk reads

    @functools.cached_property
    def _specs(self):
        # Plain names (the defaults) are a set lookup; only real globs go through pathspec.
        names: set[str] = set()
        roots: dict[str, list[str]] = {}
        for root, pattern in self.exclude:
            if _PLAIN.fullmatch(pattern):
                names.add(pattern)
            else:
                roots.setdefault(os.path.abspath(root), []).append(pattern)
        return names, [(root, _spec(tuple(patterns))) for root, patterns in roots.items()]

    def excluded(self, path: str, is_dir: bool | None = None) -> bool:
        names, specs = self._specs
        if os.path.basename(os.path.normpath(path)) in names:
            return True
        return any(_matches(spec, path, root, is_dir) for root, spec in specs)

    def excluded_or_inside_excluded(self, path: str) -> bool:
        """For paths named on the command line (--force-exclude): the path or a folder above it,
        up to the current folder (a project that lives in ~/build/ is not excluded)."""
        full, stop = os.path.abspath(path), os.getcwd()
        while full != stop and full.startswith(stop + os.sep):
            if self.excluded(full):
                return True
            full = os.path.dirname(full)
        return full != stop and self.excluded(full)


_PLAIN = re.compile(r"[^/*?\[\]!\\]+")


def selection_from(layers: list[tuple[dict, str]]) -> FileSelection:
    """Apply ``exclude`` (replaces), ``extend-exclude`` (adds), ``respect-gitignore`` and
    ``force-exclude`` of each (options, root) layer in turn: [tool.tfperf], then the command line."""
    exclude = [(".", g) for g in DEFAULT_EXCLUDE]
    respect, force = settings_schema.default("respectGitignore"), settings_schema.default("forceExclude")
    include = SOURCE_SUFFIXES
    for options, root in layers:
        wanted = options.get("include")
        if isinstance(wanted, list) and wanted and all(isinstance(w, str) for w in wanted):
            include = tuple("." + w.lstrip("*.") for w in wanted)  # ".ipynb" or "*.ipynb"
        if options.get("exclude") is not None:
            exclude = [(root, g) for g in options["exclude"]]
        exclude += [(root, g) for g in options.get("extend-exclude") or []]
        if options.get("respect-gitignore") is not None:
            respect = bool(options["respect-gitignore"])
        if options.get("force-exclude") is not None:
            force = bool(options["force-exclude"])
    return FileSelection(tuple(exclude), respect, force, include)


def selection_for(paths: list[str], cli: dict | None = None) -> FileSelection:
    """[tool.tfperf] of the pyproject above the first path (globs relative to its folder), then
    the command line's options (globs relative to the current folder, as ruff's)."""
    from tfperf_lsp.config import find_pyproject, project_options

    start = os.path.abspath(paths[0] if paths else ".")
    pyproject = find_pyproject(start)
    project, _ = project_options(start)
    root = os.path.dirname(pyproject) if pyproject else os.getcwd()
    return selection_from([(project, root), (cli or {}, os.getcwd())])


def discover(paths: list[str], selection: FileSelection | None = None) -> tuple[list[str], list[FileProblem]]:
    """Python files under ``paths``. Files named explicitly are kept unless ``force_exclude``."""
    selection = selection or FileSelection()
    files: list[str] = []
    problems: list[FileProblem] = []
    ignores = _GitIgnores() if selection.respect_gitignore else None
    for path in paths:
        if os.path.isdir(path):
            if selection.force_exclude and selection.excluded_or_inside_excluded(path):
                continue
            for directory, subdirs, names in os.walk(path):
                kept = []
                for d in sorted(subdirs):
                    full = os.path.join(directory, d)
                    if not selection.excluded(full, True) and not (ignores and ignores.ignored(full, True)):
                        kept.append(d)
                subdirs[:] = kept
                for name in sorted(names):
                    full = os.path.join(directory, name)
                    if name.endswith(selection.include) and not selection.excluded(full, False) and not (ignores and ignores.ignored(full, False)):
                        files.append(full)
        elif os.path.exists(path):  # a FIFO or a device too: read_source says why it is skipped
            if not (selection.force_exclude and selection.excluded_or_inside_excluded(path)):
                files.append(path)
        else:
            problems.append(FileProblem(path, "no such file or directory"))
    return files, problems


def glob_matches(pattern: str, path: str, root: str) -> bool:
    """Does a ruff-style glob match ``path``? A pattern without a slash matches a file or folder
    name anywhere; one with a slash is relative to ``root`` (gitignore semantics)."""
    return _matches(_spec((pattern,)), path, root)


@functools.lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]):
    return _gitignore_spec(patterns)


def _gitignore_spec(lines):
    # Imported here, not at the top: the benchmark worker imports this module (through the result
    # cache) in the user's environment, which has tfperf_lsp on its path but not tfperf's
    # dependencies when the editor runs the bundled server (tfperf.importStrategy "useBundled").
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _matches(spec, path: str, root: str, is_dir: bool | None = None) -> bool:
    full = os.path.abspath(path)
    relative = os.path.relpath(full, root)
    if relative.startswith(".."):
        relative = os.path.basename(full)  # outside the project: match names only
    candidates = [relative.replace(os.sep, "/")]
    if is_dir if is_dir is not None else os.path.isdir(full):
        candidates.append(candidates[0] + "/")
    return any(spec.match_file(c) for c in candidates)


class _GitIgnores:
    """.gitignore files from the repository root down to each folder, and .git/info/exclude."""

    def __init__(self):
        self._by_dir: dict[str, list[tuple[str, object]]] = {}

    def ignored(self, path: str, is_dir: bool) -> bool:
        full = os.path.abspath(path)
        for base, spec in self._specs(os.path.dirname(full)):
            relative = os.path.relpath(full, base).replace(os.sep, "/")
            if spec.match_file(relative + ("/" if is_dir else "")):
                return True
        return False

    def _specs(self, directory: str) -> list[tuple[str, object]]:
        if directory in self._by_dir:
            return self._by_dir[directory]
        parent = os.path.dirname(directory)
        is_repo_root = os.path.exists(os.path.join(directory, ".git"))
        inherited = [] if is_repo_root or parent == directory else self._specs(parent)
        own = []
        sources = [os.path.join(directory, ".gitignore")]
        if is_repo_root:
            sources.append(os.path.join(directory, ".git", "info", "exclude"))
        for source in sources:
            try:
                with open(source, encoding="utf-8", errors="replace") as handle:
                    own.append((directory, _gitignore_spec(handle)))
            except OSError:
                pass
        self._by_dir[directory] = inherited + own
        return self._by_dir[directory]


class NotRegular(OSError):
    """A FIFO, a device, a socket: reading it could block forever or never end."""


class TooLarge(OSError):
    def __init__(self, size: int, limit: int):
        super().__init__(f"{size / 1e6:.1f} MB is larger than the {limit / 1e6:.0f} MB limit")
        self.size = size


def read_regular(path: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Opened non-blocking (a FIFO would
    block the open itself), checked on the open descriptor (a link to /dev/zero is not
    regular), and read with a bound (a file that grows while we read stops at the limit)."""
    limit = MAX_BYTES if limit is None else limit
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular("not a regular file")
        if st.st_size > limit:
            raise TooLarge(st.st_size, limit)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            data = handle.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise TooLarge(len(data), limit)
    return data


def read_source(path: str) -> str | FileProblem:
    """The file's text, decoded as Python does (PEP 263 coding cookie, UTF-8 by default).
    Only regular files up to MAX_BYTES (a FIFO named x.py must not hang `tfperf check`)."""
    try:
        data = read_regular(path)
    except TooLarge as exc:
        return FileProblem(path, f"skipped: {exc}")
    except NotRegular:
        return FileProblem(path, "skipped: not a regular file")
    except OSError as exc:
        return FileProblem(path, f"cannot read: {exc.strerror or exc}")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return FileProblem(path, f"cannot decode: {exc}; tfperf reads UTF-8 or the encoding declared in a coding comment")
    return text[1:] if text.startswith("\ufeff") else text


def write_source(path: str, text: str) -> FileProblem | None:
    """Write fixed text back in the encoding the file was read with: its coding declaration
    (latin-1 stays latin-1) and its UTF-8 byte-order mark, if it had one."""
    try:
        with open(path, "rb") as handle:
            encoding, _ = tokenize.detect_encoding(handle.readline)
    except (OSError, SyntaxError, LookupError):
        encoding = "utf-8"
    try:
        data = text.encode(encoding)  # "utf-8-sig" writes the mark back
    except (UnicodeEncodeError, LookupError) as exc:
        return FileProblem(path, f"not written: the fixed text cannot be encoded as {encoding}: {exc}")
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        return FileProblem(path, f"cannot write: {exc.strerror or exc}")
    return None


def write_json_atomically(path: str | os.PathLike, data: object) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file in the same folder and a
    rename: a reader (another editor window, a parallel run) sees the old file or the new one,
    never half of it."""
    folder = os.path.dirname(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
