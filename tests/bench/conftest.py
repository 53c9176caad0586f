"""Shared fixtures and helpers of the benchmark tests."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # the package is used from the checkout, not installed
    sys.path.insert(0, ROOT)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_procs import children_of  # noqa: E402

HAVE_TF = importlib.util.find_spec("tensorflow") is not None


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="TensorFlow is not installed")
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if "tf" in item.keywords and not HAVE_TF and str(item.path).startswith(here):
            item.add_marker(skip)


@pytest.fixture
def no_leaks():
    """Fails the test if it leaves a child process of the test runner behind."""
    before = set(children_of(os.getpid()))
    yield
    leaked = set(children_of(os.getpid())) - before
    assert not leaked, f"child processes left behind: {sorted(leaked)}"
