"""One module per LSP feature; ``register_all`` wires them onto the server."""
from __future__ import annotations


def register_all(server) -> None:
    from tfperf_lsp.lsp.features import benchmark, code_actions, commands, diagnostics, hover, inlay_hints, lifecycle, observe
    from tfperf_lsp.lsp import notebooks

    for module in (lifecycle, diagnostics, hover, inlay_hints, code_actions, commands, benchmark, observe, notebooks):
        module.register(server)
