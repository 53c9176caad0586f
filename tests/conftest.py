import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

HAS_TF = importlib.util.find_spec("tensorflow") is not None


def pytest_collection_modifyitems(config, items):
    if HAS_TF:
        return
    skip = pytest.mark.skip(reason="TensorFlow is not installed (pip install -e .[dev])")
    for item in items:
        if "tf" in item.keywords:
            item.add_marker(skip)
