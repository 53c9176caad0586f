"""``tfperf check`` over many files: a process pool over every core, and a content-hash cache.

Each file is analysed in a worker process with its own workspace index; the parent keeps the
files' order, so the output is the same as one file after the other. A result is cached in
``.tfperf_cache/`` (in the current folder, like ``.ruff_cache``) under a key made of the file's
path and content, tfperf's code, the settings, and the environment facts rules read; it is used
again only while the other workspace files its analysis consulted (cross-file lookups) have the
same content. Fixing (``--fix``/``--diff``) runs in this process, one file after the other and
uncached, because a fixed file changes what the next file sees.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, is_dataclass
from enum import Enum
from typing import Iterator

from tfperf_lsp import __version__
from tfperf_lsp.files import FileProblem, read_source

# A cache folder of another tfperf version written this recently may belong to a run in progress.
_ACTIVE_S = 60.0

CACHE_DIR = ".tfperf_cache"
MIN_FILES_FOR_POOL = 4  # below this, starting processes costs more than it saves

_index = None  # the worker process's WorkspaceIndex


def check_all(files: list[str], options: dict, roots: list[str], fix: bool = False, unsafe: bool = False,
              device: dict | None = None, fixes: bool = False, cache: bool = True,
              jobs: int | None = None) -> Iterator[tuple[str, "str | FileProblem", object]]:
    """(path, text or the problem reading it, FileResult or None) for each file, in order.

    ``fixes``: build each finding's fix (JSON output shows them); LibCST is loaded only then.
    """
    if fix:
        from tfperf_lsp.analysis.workspace import WorkspaceIndex
        from tfperf_lsp.checker import check_file

        index = WorkspaceIndex(roots)
        for path in files:
            text = read_source(path)
            yield path, text, None if isinstance(text, FileProblem) else check_file(
                path, text, options, index, fix=True, unsafe=unsafe, device=device)
        return
    store = ResultCache(os.path.join(os.getcwd(), CACHE_DIR)) if cache else None
    texts = [read_source(path) for path in files]
    keys: list[str | None] = [None] * len(files)
    results: list[object] = [None] * len(files)
    todo = []
    for i, (path, text) in enumerate(zip(files, texts)):
        if isinstance(text, FileProblem):
            continue
        if store is not None:
            keys[i] = store.key(path, text, options, device, fixes)
            results[i] = store.get(keys[i])
        if results[i] is None:
            todo.append(i)
    jobs = jobs or os.cpu_count() or 1
    items = [(files[i], texts[i], options, device, fixes) for i in todo]
    if jobs > 1 and len(items) >= MIN_FILES_FOR_POOL:
        computed = _in_pool(items, roots, jobs)
    elif items:
        _init_worker(roots)
        computed = map(_check_one, items)
    else:
        computed = iter(())  # all from the cache: no analysis module is even imported
    for i, (result, consulted) in zip(todo, computed):
        results[i] = result
        if store is not None and result.problem is None:
            store.put(keys[i], result, consulted)
    for path, text, result in zip(files, texts, results):
        yield path, text, result


def _in_pool(items: list[tuple], roots: list[str], jobs: int) -> list:
    # Not fork: a forked worker inherits jedi's helper process, its pipes and any lock a thread
    # held at that moment (a pool forked after jedi ran in this process hung). forkserver
    # workers start clean from a small server process; spawn where there is no forkserver.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    chunk = max(1, min(16, len(items) // (jobs * 8)))
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context,
                                 initializer=_init_worker, initargs=(roots,)) as pool:
            return list(pool.map(_check_one, items, chunksize=chunk))
    except Exception as exc:  # noqa: BLE001 - a worker that died (memory, a crash): go on in process
        print(f"tfperf: parallel check failed ({type(exc).__name__}: {exc}); checking one file at a time", file=sys.stderr)
        _init_worker(roots)
        return [_check_one(item) for item in items]


def _init_worker(roots: list[str]) -> None:
    global _index
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    _index = WorkspaceIndex(roots)


def _check_one(item: tuple) -> tuple[object, list[str]]:
    """Analyse one file; return a result that needs no syntax tree, and the files it consulted."""
    from tfperf_lsp.checker import check_file, detach

    path, text, options, device, fixes = item
    _index.consulted.pop(path, None)
    result = check_file(path, text, options, _index, device=device)
    return detach(result, fixes), sorted(_index.consulted.pop(path, ()))


class ResultCache:
    """One pickled result per key under ``root/<version>/``; unreadable entries are misses."""

    def __init__(self, root: str):
        self.root = root
        self.dir = os.path.join(root, __version__ + "-" + _code_fingerprint())
        self.writable = True
        self._stamps: dict[str, str | None] = {}
        self._contexts: dict[tuple, str] = {}
        self._settings_json: dict[str, str] = {}

    def key(self, path: str, text: str, options: dict, device: dict | None, fixes: bool) -> str:
        from tfperf_lsp.config import settings_for

        path = os.path.abspath(path)
        # Settings are per file (per-file ignores); the rest of the key is the same for the run.
        settings = settings_for(path, options).with_probe(device, source="flag")
        memo = (id(options), id(device), fixes)
        common = self._contexts.get(memo)
        if common is None:
            common = self._contexts[memo] = json.dumps([_canonical(options), _canonical(device), fixes, _environment()],
                                                       sort_keys=True, default=str)
        # Most files share their settings: canonicalise each distinct one once (repr is a
        # cheap in-process name for it; the key itself is made of the canonical form).
        canonical = self._settings_json.get(repr(settings))
        if canonical is None:
            canonical = self._settings_json[repr(settings)] = json.dumps(_canonical(settings), sort_keys=True, default=str)
        context = common + canonical
        digest = hashlib.sha256(f"{context}\n{path}\n".encode("utf-8", "surrogatepass"))
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def get(self, key: str):
        try:
            with open(os.path.join(self.dir, key[:2], key), "rb") as handle:
                stamps, result = pickle.load(handle)
        except Exception:  # noqa: BLE001 - missing, truncated or from another Python: a miss
            return None
        if any(self.stamp(path) != stamp for path, stamp in stamps):
            return None
        return result

    def put(self, key: str, result, consulted: list[str]) -> None:
        if not self.writable:
            return
        stamps = [(path, self.stamp(path)) for path in consulted]
        try:
            folder = os.path.join(self.dir, key[:2])
            if not os.path.isdir(folder):
                self._create_root()
                if not os.path.isdir(self.dir):
                    self._prune_other_versions()
                os.makedirs(folder, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder)
            with os.fdopen(fd, "wb") as handle:
                pickle.dump((stamps, result), handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, os.path.join(folder, key))  # atomic: a parallel run reads old or new
        except OSError:
            self.writable = False  # a read-only folder: check without a cache, silently

    def stamp(self, path: str) -> str | None:
        """A consulted file's content hash (a folder's: its listing), None if it does not exist."""
        if path not in self._stamps:
            try:
                if os.path.isdir(path):
                    data = "\n".join(sorted(os.listdir(path))).encode()
                else:
                    with open(path, "rb") as handle:
                        data = handle.read()
                self._stamps[path] = hashlib.sha256(data).hexdigest()
            except OSError:
                self._stamps[path] = None
        return self._stamps[path]

    def _prune_other_versions(self) -> None:
        """Results of another tfperf (an upgrade, or an edited checkout) are never read again:
        remove them when this one starts its folder, so the cache does not grow with every
        version (12 GB after a day of edits). A folder written in the last minute is left
        alone: another version may be running on this tree right now."""
        now = time.time()
        mine = os.path.basename(self.dir)
        for name in os.listdir(self.root):
            path = os.path.join(self.root, name)
            if name == mine or not os.path.isdir(path):
                continue
            try:
                # a new result changes its two-letter folder's time, not the version folder's
                latest = max([os.path.getmtime(path)] + [entry.stat().st_mtime for entry in os.scandir(path)])
            except OSError:
                continue
            if now - latest > _ACTIVE_S:
                shutil.rmtree(path, ignore_errors=True)

    def _create_root(self) -> None:
        os.makedirs(self.root, exist_ok=True)
        tag = os.path.join(self.root, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            with open(tag, "w") as handle:
                handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# tfperf's cache; safe to delete.\n")
            with open(os.path.join(self.root, ".gitignore"), "w") as handle:
                handle.write("*\n")


def _canonical(value):
    """JSON-able and order-independent (sets sorted), so equal settings give equal keys."""
    if is_dataclass(value) and not isinstance(value, type):
        return _canonical(asdict(value))
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted(_canonical(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


def _environment() -> list:
    """What rules read from the environment rather than the file (analysis/environment.py)."""
    from tfperf_lsp.analysis import environment as env

    return [
        sys.version, env.installed_version(*env.TENSORFLOW_DISTRIBUTIONS), env.installed_version("keras"),
        env.installed_version("tf-keras", "tf_keras"), os.environ.get("TF_USE_LEGACY_KERAS", ""),
    ]


def _code_fingerprint() -> str:
    """tfperf's own code (sizes and times of its modules): a development checkout changes
    without its version number changing."""
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for directory, subdirs, names in os.walk(package):
        subdirs.sort()
        for name in sorted(n for n in names if n.endswith(".py")):
            stat = os.stat(os.path.join(directory, name))
            digest.update(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]

