"""The server side of bench/ must not import TensorFlow (seconds, hundreds of MB) or numpy."""
import subprocess
import sys

from bench_procs import ROOT

SERVER_SIDE = ["tfperf_lsp.bench", "tfperf_lsp.bench.pool", "tfperf_lsp.bench.procs",
               "tfperf_lsp.bench.cache", "tfperf_lsp.bench.stats", "tfperf_lsp.bench.protocol",
               "tfperf_lsp.bench.report", "tfperf_lsp.bench.measure", "tfperf_lsp.bench.device"]


def loaded_after_import(modules):
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules) +
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'numpy', 'keras'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return out.stdout.split()


def test_server_side_modules_import_neither_tensorflow_nor_numpy():
    assert loaded_after_import(SERVER_SIDE) == []


def test_worker_helpers_do_not_import_tensorflow_themselves():
    # tfjob/outputs get `tf` from worker.py; numpy is fine there
    loaded = loaded_after_import(["tfperf_lsp.bench.tfjob", "tfperf_lsp.bench.outputs"])
    assert not any(m.startswith(("tensorflow", "keras")) for m in loaded)
