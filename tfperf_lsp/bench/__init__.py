"""On-device micro-benchmarks of original vs rewritten TensorFlow code.

Server side (never imports TensorFlow): `WorkerPool` runs `Job`s in worker processes and returns
`Result`s; `ResultCache` keeps them across restarts; `report` turns them into text. The worker
(`python -m tfperf_lsp.bench.worker`) is the only process that imports TensorFlow.
Protocol and shapes: docs/contract.md section 2 and tfperf_lsp/bench/README.md.
"""
from .cache import ResultCache, default_cache_dir
from .pool import WorkerInfo, WorkerPool, WorkerStartError, probe_device, probe_worker
from .protocol import (Comparison, Device, ErrorInfo, Job, JobError, ProtocolError, Result,
                       Variant, VariantStats)
from .report import hover_lines, summarize

__all__ = [
    "Comparison", "Device", "ErrorInfo", "Job", "JobError", "ProtocolError", "Result",
    "ResultCache", "Variant", "VariantStats", "WorkerInfo", "WorkerPool", "WorkerStartError",
    "default_cache_dir", "hover_lines", "probe_device", "probe_worker", "summarize",
]
