"""``libcst`` imported on first use, not at load time.

LibCST takes a third of a second to import and only fixes need it, so the modules that build
fixes write ``from tfperf_lsp.rewrite.lazy import libcst as cst``: the server's first diagnostics
never pay for it (tests/lsp/test_startup_imports.py checks this).
"""
from __future__ import annotations

import importlib


class LazyModule:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


libcst = LazyModule("libcst")
metadata = LazyModule("libcst.metadata")
