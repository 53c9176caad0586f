"""What the benchmark scripts share: the corpora, a timer, peers, and a small stdio LSP client.

The corpora are real, parseable TensorFlow code: the shipped examples (the 2,076-line file the
issue measures) and the shared real-world checkout (``/tmp/realworld`` or ``$TFPERF_REALWORLD``).
"""
from __future__ import annotations

import ast
import glob
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALWORLD = os.environ.get("TFPERF_REALWORLD", "/tmp/realworld")
SERVER = [sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")]


def examples_corpus(min_lines: int = 2000) -> str:
    """The shipped examples (whole modules, so the result parses), repeated until long enough."""
    parts, lines = [], 0
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    while lines < min_lines:
        for path in examples:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            parts.append(text)
            lines += text.count("\n")
            if lines >= min_lines:
                break
    text = "\n".join(parts)
    ast.parse(text)
    return text


def realworld_files(limit: int | None = None) -> list[str]:
    """Parseable .py files of the real-world corpus, in a stable order."""
    found = []
    for path in sorted(glob.glob(os.path.join(REALWORLD, "**", "*.py"), recursive=True)):
        try:
            with open(path, encoding="utf-8") as handle:
                ast.parse(handle.read())
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        found.append(path)
        if limit is not None and len(found) >= limit:
            break
    return found


def copy_tree(paths: list[str], target: str) -> list[str]:
    """Copy files keeping their package layout (so cross-file imports still resolve)."""
    copied = []
    for path in paths:
        dest = os.path.join(target, os.path.relpath(path, REALWORLD))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(path, dest)
        copied.append(dest)
    return copied


def child_env() -> dict[str, str]:
    """The environment for the processes we time: with bytecode caching (in a folder of its own,
    not the checkout), as an installed tool has, even where PYTHONDONTWRITEBYTECODE is set."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "tfperf-bench-pycache")
    return env


def median_ms(fn, repeat: int) -> float:
    return statistics.median(samples_ms(fn, repeat))


def samples_ms(fn, repeat: int) -> list[float]:
    """Milliseconds of ``repeat`` runs of ``fn``, sorted, after one untimed run."""
    fn()  # warm caches (imports, regexes)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return sorted(samples)


def peer(name: str) -> list[str] | None:
    """The command of a peer tool in this environment, or None (the caller says it is skipped)."""
    if name == "ruff":
        exe = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
        return [exe] if exe else None
    if name == "pyflakes":
        try:
            import pyflakes  # noqa: F401
        except ImportError:
            return None
        return [sys.executable, "-m", "pyflakes"]
    raise ValueError(name)


def skipped(name: str) -> str:
    return f"  ({name} is not installed: its column is skipped; pip install -e '.[dev]')"


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class LspClient:
    """Just enough of an LSP client to time a server: requests, notifications, diagnostics."""

    def __init__(self, command: list[str], root: str):
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root, env=child_env())
        self.messages: queue.Queue = queue.Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": "file://" + root,
            "workspaceFolders": [{"uri": "file://" + root, "name": "bench"}],
            "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        })
        self.notify("initialized", {})

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            self.messages.put((time.perf_counter(), message))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params, timeout: float = 60):
        self._id += 1
        self._send({"id": self._id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self._id and "method" not in m, timeout)[1]

    def wait(self, predicate, timeout: float = 60) -> tuple[float, dict]:
        deadline = time.perf_counter() + timeout
        while True:
            item = self.messages.get(timeout=max(0.01, deadline - time.perf_counter()))
            if item is None:
                raise RuntimeError("server exited")
            stamp, message = item
            if "method" in message and "id" in message:  # a request from the server: answer it
                params = message.get("params") or {}
                result = [None] * len(params.get("items", [])) if message["method"] == "workspace/configuration" else None
                self._send({"id": message["id"], "result": result})
                continue
            if predicate(message):
                return stamp, message

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 60) -> float:
        def match(m):
            if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
                return False
            return version is None or m["params"].get("version") in (version, None)
        return self.wait(match, timeout)[0]

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a benchmark must not hang on a stuck server
            self.proc.kill()
            self.proc.wait()
