"""On-disk cache of benchmark Results, so a hover survives a server restart.

Key = sha256 of what determines a measurement: the code (prelude, variants), the content of the
workspace modules the code imports (workspace_imports), the inputs description, the timing
settings, the device identity and the TensorFlow version. Any change gives a new key, so there
is no staleness check; old entries are only removed by clear(). The directory is private (0700,
ours): results are read back into hovers, so nobody else may plant them.
Layout: <root>/<sha of the file uri, or "_">/<key>.json, so clearing one file is one rmtree.
Pure Python; writes are atomic (temp file + rename); unreadable files count as misses.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import stat
import time
from pathlib import Path

from tfperf_lsp.files import write_json_atomically

from .protocol import SCHEMA, Device, Job, ProtocolError, Result

# Raised when what a stored result means changes: 2, max_rel_err is measured against the floor
# the output check uses (bench/outputs.py), so results of 1 are measured again.
FORMAT = 2


def default_cache_dir() -> Path:
    """$TFPERF_CACHE_DIR, else $XDG_CACHE_HOME/tfperf/bench, else ~/.cache/tfperf/bench."""
    explicit = os.environ.get("TFPERF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfperf" / "bench"


MAX_IMPORTED_FILES = 200
_HASHES: dict[str, tuple[float, int, str]] = {}  # path -> (mtime, size, sha256): edits re-hash


def _file_hash(path: str) -> str | None:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        known = _HASHES.get(path)
        if known and known[:2] == (st.st_mtime, st.st_size):
            return known[2]
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read(16 << 20)).hexdigest()
    except OSError:
        return None
    _HASHES[path] = (st.st_mtime, st.st_size, digest)
    return digest


def _imported_names(source: str) -> list[tuple[int, str]]:
    """(level, dotted name) of every import in the code; relative imports keep their level."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names.append((node.level, base))
            names += [(node.level, f"{base}.{a.name}" if base else a.name) for a in node.names]
    return names


def _module_files(folder: str, dotted: str) -> list[str]:
    """The files of `dotted` under folder: each package __init__ on the way, and the module."""
    files, here = [], folder
    for part in dotted.split("."):
        if not part:
            break
        package = os.path.join(here, part)
        if os.path.isfile(os.path.join(package, "__init__.py")):
            files.append(os.path.join(package, "__init__.py"))
            here = package
            continue
        if os.path.isfile(package + ".py"):
            files.append(package + ".py")
        break
    return files


def workspace_imports(job: Job, folder: str | None) -> dict[str, str]:
    """{path: sha256} of the modules next to the analysed file that the job imports, directly
    or through each other, so a changed helpers.py gives a new key (and no stale result)."""
    if not folder or not os.path.isdir(folder):
        return {}
    folder = os.path.abspath(folder)
    todo = [(folder, source) for source in [job.prelude] + [v.source for v in job.variants]]
    found: dict[str, str] = {}
    while todo and len(found) < MAX_IMPORTED_FILES:
        where, source = todo.pop()
        for level, dotted in _imported_names(source):
            base = folder if level == 0 else where
            for _ in range(max(0, level - 1)):
                base = os.path.dirname(base)
            for path in _module_files(base, dotted):
                if path in found:
                    continue
                digest = _file_hash(path)
                if digest is None:
                    continue
                found[path] = digest
                try:
                    with open(path, "rb") as handle:
                        text = handle.read(16 << 20).decode("utf-8", "replace")
                except OSError:
                    continue
                todo.append((os.path.dirname(path), text))
    return found


def cache_key(job: Job, device: Device | dict | None, tf_version: str | None,
              imports: dict[str, str] | None = None) -> str:
    ident = device.identity() if isinstance(device, Device) else device
    material = {
        "format": FORMAT, "schema": SCHEMA,
        "prelude": job.prelude,
        "variants": [[v.name, v.source] for v in job.variants],
        "inputs": job.inputs,
        "settings": [job.budget_s, job.min_sample_s, job.max_pairs, job.device, job.seed, job.compare],
        "device": ident, "tf": tf_version,
    }
    if imports:
        material["imports"] = sorted(imports.items())
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _uri_dir(uri: str | None) -> str:
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16] if uri else "_"


class ResultCache:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()
        self.problem: str | None = None  # why the cache is not used (a foreign directory)

    key = staticmethod(cache_key)

    def usable(self, create: bool = False) -> bool:
        """Whether the directory is ours and private (created 0700 when `create`)."""
        try:
            if create:
                self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.lstat(self.root)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            self.problem = f"{self.root} is not a directory"
        elif hasattr(os, "getuid") and st.st_uid != os.getuid():
            self.problem = f"{self.root} belongs to another user: benchmark results are not cached"
        elif st.st_mode & 0o022:
            self.problem = f"{self.root} is writable by other users: benchmark results are not cached"
        else:
            if st.st_mode & 0o077:  # an older tfperf made it 0755: results are private
                try:
                    os.chmod(self.root, 0o700)
                except OSError:
                    pass
            self.problem = None
            return True
        return False

    def _find(self, key: str) -> list[Path]:
        if not self.usable():
            return []
        return [p for p in self.root.glob(f"*/{key}.json") if p.is_file()]

    def get(self, key: str) -> Result | None:
        """The cached Result, or None (missing, corrupt, or from another format version)."""
        for path in self._find(key):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if data.get("format") != FORMAT or data.get("key") != key:
                    raise ValueError("format or key mismatch")
                return Result.from_dict(data["result"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError, ProtocolError):
                try:  # corrupt or foreign: drop it so it is not read again
                    path.unlink()
                except OSError:
                    pass
        return None

    def put(self, key: str, result: Result, uri: str | None = None) -> bool:
        """Store a result; errors are not stored (a crash or a timeout may not repeat)."""
        if result.verdict == "error" or not self.usable(create=True):
            return False
        folder = self.root / _uri_dir(uri)
        folder.mkdir(mode=0o700, exist_ok=True)
        data = {"format": FORMAT, "key": key, "uri": uri, "stored": time.time(),
                "result": result.to_dict()}
        write_json_atomically(folder / f"{key}.json", data)
        return True

    def has(self, uri: str) -> bool:
        """Whether any result was stored for this file (one directory check: cheap on every edit)."""
        folder = self.root / _uri_dir(uri)
        return self.usable() and folder.is_dir() and any(not p.name.startswith(".") for p in folder.glob("*.json"))

    def clear(self, uri: str | None = None) -> int:
        """Forget every result (uri None) or those stored for one file. Returns how many."""
        if not self.root.is_dir():
            return 0
        folders = [self.root / _uri_dir(uri)] if uri else [p for p in self.root.iterdir() if p.is_dir()]
        count = 0
        for folder in folders:
            if folder.is_dir():
                count += sum(1 for p in folder.glob("*.json") if not p.name.startswith("."))
                shutil.rmtree(folder, ignore_errors=True)
        return count

    def __len__(self) -> int:
        if not self.root.is_dir():
            return 0
        return sum(1 for p in self.root.glob("*/*.json") if not p.name.startswith("."))
