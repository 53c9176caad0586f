"""The worker shipped over standard input, so a remote machine needs only Python and TensorFlow.

With a ``workerCommand`` (``ssh gpu-box python3``) the server starts
``<command> -c <BOOTSTRAP> [--memory-limit-mb N]`` and first writes, on the worker's stdin, one
line with a byte count and then that many bytes: a self-contained script holding the worker's
modules as source text. The bootstrap runs it; it installs an import hook serving those modules
(nothing is written to the remote disk) and runs ``tfperf_lsp.bench.worker``'s main.
The protocol then continues on the same stdin. (``python3 -`` itself cannot be used: Python reads
a script from stdin up to EOF before running it, and stdin is also the protocol channel.)
"""
from __future__ import annotations

import functools
import os
import shlex

# The worker's modules: everything `python -m tfperf_lsp.bench.worker` imports from tfperf.
MODULES = ("jsonshape", "protocol", "device", "stats", "measure", "outputs", "report", "safety",
           "tfjob", "worker")
BOOTSTRAP = ("import sys;n=int(sys.stdin.buffer.readline());"
             "exec(compile(sys.stdin.buffer.read(n),'<tfperf-worker>','exec'))")
_HERE = os.path.dirname(os.path.abspath(__file__))

_LOADER = '''
import importlib, importlib.abc, importlib.util, sys

class _TfperfWorkerModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the shipped modules (and their two packages) from memory."""

    def find_spec(self, name, path=None, target=None):
        if name in _SOURCES or name in _PACKAGES:
            return importlib.util.spec_from_loader(name, self, is_package=name in _PACKAGES)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ in _PACKAGES:
            module.__path__ = []
            return
        code = compile(_SOURCES[module.__name__], "<tfperf>/" + module.__name__, "exec")
        exec(code, module.__dict__)

sys.meta_path.insert(0, _TfperfWorkerModules())
_worker = importlib.import_module("tfperf_lsp.bench.worker")
_worker._exit_now(_worker.main())  # as `python -m tfperf_lsp.bench.worker` does
'''


@functools.lru_cache(maxsize=1)
def payload() -> bytes:
    """The self-contained worker script (UTF-8)."""
    sources = {}
    for name in MODULES:
        with open(os.path.join(_HERE, f"{name}.py"), encoding="utf-8") as handle:
            sources[f"tfperf_lsp.bench.{name}"] = handle.read()
    script = (f"_SOURCES = {sources!r}\n_PACKAGES = {{'tfperf_lsp', 'tfperf_lsp.bench'}}\n" + _LOADER)
    return script.encode("utf-8")


def framed_payload() -> bytes:
    """What the server writes first on the worker's stdin: the length line, then the script."""
    data = payload()
    return f"{len(data)}\n".encode("ascii") + data


def parse_command(command) -> list[str]:
    """``workerCommand`` as a list (kept as is) or a string (split the way a shell would)."""
    if not command:
        return []
    if isinstance(command, str):
        return shlex.split(command)
    return [str(part) for part in command]


def ships(command: list[str]) -> bool:
    """Whether a workerCommand gets the shipped worker: yes for an interpreter (``python3``,
    ``ssh gpu python3``), no for a command that ends in a script (a worker of its own)."""
    return bool(command) and not command[-1].endswith(".py")


def through_shell(command: list[str]) -> bool:
    """Whether the command hands its arguments to a remote shell (ssh joins and re-parses them)."""
    return bool(command) and os.path.basename(command[0]) in ("ssh", "ssh.exe")


def shipped_argv(command: list[str], memory_limit_mb: int | None) -> list[str]:
    """``command -c BOOTSTRAP [--memory-limit-mb N]``, quoted once more for a remote shell."""
    args = ["-c", BOOTSTRAP]
    if memory_limit_mb:
        args += ["--memory-limit-mb", str(int(memory_limit_mb))]
    if through_shell(command):
        args = [shlex.quote(a) for a in args]
    return list(command) + args
