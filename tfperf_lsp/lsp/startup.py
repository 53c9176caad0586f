"""Import the language server quickly: the start-up an editor waits for before the first findings.

Two thirds of a start is importing ``lsprotocol.types``: attrs builds its 550 classes and, for
each, writes the source of ``__init__``, ``__eq__``, ``__repr__`` ... and compiles it (0.09 s of
``compile`` alone on a 2-core machine). The same sources come out on every start, so their code
objects are kept in a cache file, keyed by a digest of the generated source and its file name:
a source that differs (another attrs or lsprotocol version, or a source with a per-process value
in it) misses and is compiled as before, so the classes are exactly what attrs would build.

The cyclic garbage collector also runs its older generations again and again over the growing
heap while those classes are made, finding little to free. During the imports only its youngest
generation runs, less often (0.02 s less; pausing it altogether saved 0.03 s more but kept 10 MiB
of garbage for the life of the server).

The cache lives in ``$TFPERF_CACHE_DIR-startup`` or ``$XDG_CACHE_HOME/tfperf/startup``, one file
per Python bytecode version. It is read only from a directory that this user owns and nobody
else can write to: it holds code that the server runs. Without it, or with any error reading it,
the server starts exactly as before, only slower.
"""
from __future__ import annotations

import gc
import hashlib
import importlib
import importlib.util
import marshal
import os
import stat
from contextlib import contextmanager
from types import CodeType
from typing import Iterator

# The collector's thresholds during the imports: the youngest generation every 5,000 allocations,
# the older ones (almost) never. Measured on the server's imports: 0.19 s, 45 MiB, against
# 0.21 s and 45 MiB with the default (700, 10, 10).
IMPORT_GC_THRESHOLDS = (5000, 1000, 10)

# A cache file is rewritten only when this many sources missed (a new attrs or lsprotocol); the
# few sources that differ on every start (a hash seed baked into one cattrs class) are compiled.
REWRITE_AFTER_MISSES = 16


def cache_path() -> str:
    explicit = os.environ.get("TFPERF_CACHE_DIR")
    if explicit:
        directory = explicit.rstrip("/\\") + "-startup"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "tfperf", "startup")
    return os.path.join(directory, f"attrs-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal")


class CompiledSources:
    """Code objects of generated sources, by digest: the ones this start used are written back."""

    def __init__(self, path: str):
        self.path = path
        self.known: dict[bytes, CodeType] = _read(path)
        self.used: dict[bytes, CodeType] = {}
        self.misses = 0

    def compile(self, script: str, filename: str) -> CodeType:
        key = hashlib.blake2b(f"{filename}\0{script}".encode(), digest_size=20).digest()
        code = self.known.get(key)
        if code is None:
            code = compile(script, filename, "exec")
            self.misses += 1
        self.used[key] = code
        return code

    def save(self) -> None:
        if self.misses < REWRITE_AFTER_MISSES or not _private_directory(os.path.dirname(self.path)):
            return
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as handle:
                marshal.dump(self.used, handle)
            os.replace(temporary, self.path)
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass


@contextmanager
def quick_imports(path: str | None = None) -> Iterator[CompiledSources | None]:
    """Within this block, attrs compiles through the cache and the garbage collector runs less."""
    thresholds = gc.get_threshold()
    gc.set_threshold(*IMPORT_GC_THRESHOLDS)
    sources = None
    try:
        import attr._make as attrs_make
    except ImportError:
        attrs_make = None
    original = getattr(attrs_make, "_compile_and_eval", None)
    if original is not None:
        sources = CompiledSources(path or cache_path())

        def _compile_and_eval(script, globs, locs=None, filename=""):
            eval(sources.compile(script, filename), globs, locs)

        attrs_make._compile_and_eval = _compile_and_eval
    try:
        yield sources
    finally:
        if original is not None:
            attrs_make._compile_and_eval = original
            sources.save()
        gc.set_threshold(*thresholds)
        gc.freeze()


def import_server():
    """The server module, imported as fast as this machine allows (once: the launcher imports it
    early, to fail with a clear message, and the command line asks again)."""
    import sys

    server = sys.modules.get("tfperf_lsp.lsp.server")
    if server is None:
        with quick_imports():
            server = importlib.import_module("tfperf_lsp.lsp.server")
    return server


def _read(path: str) -> dict[bytes, CodeType]:
    if not _private_directory(os.path.dirname(path)):
        return {}
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            if not _ours(os.fstat(handle.fileno())):
                return {}
            loaded = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return {}  # absent, unreadable or from a broken write: compile as usual
    if not isinstance(loaded, dict):
        return {}
    return {key: code for key, code in loaded.items() if isinstance(key, bytes) and isinstance(code, CodeType)}


def _private_directory(directory: str) -> bool:
    """The directory, created if need be, is ours and writable by nobody else."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        return _ours(os.lstat(directory), directory=True)
    except OSError:
        return False


def _ours(st: os.stat_result, directory: bool = False) -> bool:
    kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return kind_ok and owner_ok and not st.st_mode & 0o022
