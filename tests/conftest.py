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


def _heavy(item) -> bool:
    return "tf" in item.keywords or "slow" in item.keywords


def _heaviest_files_first(items) -> None:
    """Files with the most TensorFlow / slow tests first, each file's tests in their order.

    scripts/test hands whole files to its pytest processes in this order (--dist loadfile
    --no-loadscope-reorder): the long files (a module's worker pool, the example runs) start at once
    and the many quick ones fill the end, instead of a long file starting last and running alone.
    """
    def file_of(item) -> str:
        return item.nodeid.split("::", 1)[0]

    weight: dict[str, int] = {}  # in collection order
    for item in items:
        weight[file_of(item)] = weight.get(file_of(item), 0) + _heavy(item)
    position = {path: i for i, path in enumerate(weight)}
    items.sort(key=lambda item: (-weight[file_of(item)], position[file_of(item)]))


@pytest.hookimpl(trylast=True)  # after pytest's own reordering (which it keeps within each file)
def pytest_collection_modifyitems(config, items):
    _heaviest_files_first(items)
    if HAS_TF:
        return
    skip = pytest.mark.skip(reason="TensorFlow is not installed (pip install -e .[dev])")
    for item in items:
        if "tf" in item.keywords:
            item.add_marker(skip)


_CONFIG = None


def pytest_configure(config):
    global _CONFIG
    _CONFIG = config


def pytest_runtest_logreport(report):
    """A failure is printed when it happens, not only in the summary at the end: a run that is
    stopped by its time limit (CI's) then still says which tests failed and why."""
    if not report.failed or os.environ.get("PYTEST_XDIST_WORKER") or _CONFIG is None:
        return
    terminal = _CONFIG.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return
    crash = getattr(report.longrepr, "reprcrash", None)
    reason = crash.message if crash is not None else (str(report.longrepr).strip().splitlines() or [""])[-1]
    reason = " ".join(reason.split())[:400]
    terminal.write_line("")
    terminal.write_line(f"FAILED {report.nodeid} ({report.when}): {reason}", red=True)
