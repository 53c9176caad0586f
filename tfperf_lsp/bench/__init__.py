"""On-device micro-benchmarks of original vs rewritten TensorFlow code.

Server side (never imports TensorFlow): `WorkerPool` runs `Job`s in worker processes and returns
`Result`s; `ResultCache` keeps them across restarts; `report` turns them into text. The worker
(`python -m tfperf_lsp.bench.worker`) is the only process that imports TensorFlow.
Protocol and shapes: docs/contract.md section 2 and tfperf_lsp/bench/README.md.

The names below are imported when first used (PEP 562): `tfperf observe` needs only
`bench.procs`, and importing the pool (asyncio) and the cache with it cost every observed run.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "ResultCache": "cache", "default_cache_dir": "cache",
    "WorkerInfo": "pool", "WorkerPool": "pool", "WorkerStartError": "pool", "probe_device": "pool",
    "probe_worker": "pool",
    "Comparison": "protocol", "Device": "protocol", "ErrorInfo": "protocol", "Job": "protocol",
    "JobError": "protocol", "ProtocolError": "protocol", "Result": "protocol", "Variant": "protocol",
    "VariantStats": "protocol",
    "hover_lines": "report", "summarize": "report",
}

__all__ = [
    "Comparison", "Device", "ErrorInfo", "Job", "JobError", "ProtocolError", "Result",
    "ResultCache", "Variant", "VariantStats", "WorkerInfo", "WorkerPool", "WorkerStartError",
    "default_cache_dir", "hover_lines", "probe_device", "probe_worker", "summarize",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_EXPORTS})
