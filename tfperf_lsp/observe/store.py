"""Observed facts on disk, keyed by the content of the file they are about, so they disappear
when the code changes (as benchmark results do). Pure Python; atomic writes.
Layout: <root>/<sha256 of the file's bytes>.json with {format, path, run: {command, date,
status}, facts: [...]}; a newer run over the same content replaces the older one."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

FORMAT = 1


def default_store_dir() -> Path:
    """$TFPERF_OBSERVE_DIR; else next to the benchmark cache ($TFPERF_CACHE_DIR-observe, or
    $XDG_CACHE_HOME/tfperf/observe, or ~/.cache/tfperf/observe)."""
    explicit = os.environ.get("TFPERF_OBSERVE_DIR")
    if explicit:
        return Path(explicit)
    bench = os.environ.get("TFPERF_CACHE_DIR")
    if bench:
        return Path(bench.rstrip("/\\") + "-observe")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfperf" / "observe"


def content_key(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class ObservationStore:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_store_dir()

    def put_run(self, run: dict, facts: list[dict], command: list[str], date: str) -> int:
        """Store each observed file's facts under its content hash. Returns how many files."""
        by_file: dict[str, list[dict]] = {}
        for fact in facts:
            by_file.setdefault(fact["file"], []).append(fact)
        stored = 0
        for path, sha in run.get("files", {}).items():
            if not sha or path not in by_file:
                continue
            self._write(sha, {"format": FORMAT, "path": path, "stored": time.time(),
                              "run": {"command": command, "date": date, "status": run.get("status")},
                              "facts": by_file[path]})
            stored += 1
        return stored

    def get(self, key: str) -> dict | None:
        path = self.root / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or not isinstance(data.get("facts"), list):
                raise ValueError("format")
            return data
        except FileNotFoundError:
            return None
        except (OSError, ValueError, AttributeError):
            try:
                path.unlink()
            except OSError:
                pass
            return None

    def for_text(self, text: str) -> dict | None:
        return self.get(content_key(text))

    def clear(self) -> int:
        count = len(list(self.root.glob("*.json"))) if self.root.is_dir() else 0
        shutil.rmtree(self.root, ignore_errors=True)
        return count

    def _write(self, key: str, data: dict) -> None:
        # Imported here: `files` brings the settings schema, which `tfperf observe` needs only now.
        from tfperf_lsp.files import write_json_atomically

        self.root.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.root / f"{key}.json", data)
