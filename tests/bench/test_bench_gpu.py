"""The GPU paths: device sync, peak memory, device name and compute capability, gpu:N selection.
Skipped, with the reason, where there is no GPU (the development machine has none)."""
import os
import shutil

import pytest

from tfperf_lsp.bench import Job, Variant, WorkerPool, hover_lines, probe_device

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def gpus():
    if shutil.which("nvidia-smi") is None and not os.path.exists("/dev/nvidia0"):
        pytest.skip("no GPU on this machine (no nvidia-smi, no /dev/nvidia0): the GPU paths "
                    "(sync, peak memory, TF32 tolerance, gpu:N) are not exercised here")
    device = probe_device()
    if not device.gpus:
        pytest.skip("TensorFlow sees no GPU (CPU-only TensorFlow or no driver)")
    return device.gpus


def matmul_job(device):
    prelude = "import tensorflow as tf\nx = tf.random.uniform([512, 512])\n"
    body = "def __tfperf_run__():\n    return tf.matmul(x, x)\n"
    graph = "g = tf.function(lambda a: tf.matmul(a, a))\ndef __tfperf_run__():\n    return g(x)\n"
    return Job(prelude=prelude, variants=[Variant("original", body), Variant("rewritten", graph)],
               budget_s=1.0, device=device)


def test_a_gpu_job_reports_its_device_peak_memory_and_placement(gpus):
    with WorkerPool(keep_spare=False, timeout_s=300) as pool:
        result = pool.run_job(matmul_job("gpu:0"))
    assert result.verdict != "error", result.summary
    assert result.placement == "gpu:0" and result.device.kind == "gpu"
    assert result.device.compute_capability
    assert all(v.peak_memory_bytes for v in result.variants)
    assert all(d.startswith("GPU") for v in result.variants for d in v.output_devices)
    assert any(line.startswith("peak device memory:") for line in hover_lines(result))
    if float(result.device.compute_capability) >= 8.0:  # TF32: float32 compared more loosely
        assert "TF32" in (result.comparisons[0].tolerance_note or "")


def test_a_missing_gpu_index_falls_back_to_the_cpu_and_says_so(gpus):
    with WorkerPool(keep_spare=False, timeout_s=300) as pool:
        result = pool.run_job(matmul_job(f"gpu:{len(gpus)}"))
    assert result.placement == "cpu"
    assert any("soft placement" in w for w in result.warnings)
