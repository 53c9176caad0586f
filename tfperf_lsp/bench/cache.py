"""On-disk cache of benchmark Results, so a hover survives a server restart.

Key = sha256 of what determines a measurement: the code (prelude, variants), the inputs
description, the timing settings, the device identity and the TensorFlow version. Any change
gives a new key, so there is no staleness check; old entries are only removed by clear().
Layout: <root>/<sha of the file uri, or "_">/<key>.json, so clearing one file is one rmtree.
Pure Python; writes are atomic (temp file + rename); unreadable files count as misses.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .protocol import SCHEMA, Device, Job, ProtocolError, Result

FORMAT = 1


def default_cache_dir() -> Path:
    """$TFPERF_CACHE_DIR, else $XDG_CACHE_HOME/tfperf/bench, else ~/.cache/tfperf/bench."""
    explicit = os.environ.get("TFPERF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfperf" / "bench"


def cache_key(job: Job, device: Device | dict | None, tf_version: str | None) -> str:
    ident = device.identity() if isinstance(device, Device) else device
    material = {
        "format": FORMAT, "schema": SCHEMA,
        "prelude": job.prelude,
        "variants": [[v.name, v.source] for v in job.variants],
        "inputs": job.inputs,
        "settings": [job.budget_s, job.min_sample_s, job.max_pairs, job.device, job.seed, job.compare],
        "device": ident, "tf": tf_version,
    }
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _uri_dir(uri: str | None) -> str:
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16] if uri else "_"


class ResultCache:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    key = staticmethod(cache_key)

    def _find(self, key: str) -> list[Path]:
        if not self.root.is_dir():
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
        if result.verdict == "error":
            return False
        folder = self.root / _uri_dir(uri)
        folder.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "key": key, "uri": uri, "stored": time.time(),
                "result": result.to_dict()}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(tmp, folder / f"{key}.json")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True

    def has(self, uri: str) -> bool:
        """Whether any result was stored for this file (one directory check: cheap on every edit)."""
        folder = self.root / _uri_dir(uri)
        return folder.is_dir() and any(not p.name.startswith(".") for p in folder.glob("*.json"))

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
