import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

HAS_TF = importlib.util.find_spec("tensorflow") is not None

# Benchmark results and the remembered device live in the user's cache; tests must neither read
# them (a remembered GPU or bf16 CPU changes device-dependent findings) nor write them.
if "TFPERF_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["TFPERF_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfperf-test-cache-")


def pytest_collection_modifyitems(config, items):
    if HAS_TF:
        return
    skip = pytest.mark.skip(reason="TensorFlow is not installed (pip install -e .[dev])")
    for item in items:
        if "tf" in item.keywords:
            item.add_marker(skip)
