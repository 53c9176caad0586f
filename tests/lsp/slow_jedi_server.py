"""The real server with jedi gated: a cross-file lookup waits until the workspace holds a file
named ``release-jedi`` (at most 60 s), so a test can show what is published before it answers."""
import os
import sys
import time

from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.cli import lsp_main

original = WorkspaceIndex._jedi_definition


def gated(self, lookup):
    gate = os.path.join(self.roots[0], "release-jedi") if self.roots else None
    deadline = time.monotonic() + 60
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.02)
    return original(self, lookup)


WorkspaceIndex._jedi_definition = gated
sys.exit(lsp_main([]))
