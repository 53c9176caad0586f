"""Fixtures for tests/examples (registers no markers: `tf` and `slow` live in pyproject.toml)."""
import importlib.util
import itertools
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # so `import examples_answer_key` works under any --import-mode
    sys.path.insert(0, str(HERE))

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
_counter = itertools.count()


@pytest.fixture
def load_example():
    """Import examples/<name>.py as a fresh module (new tf.function objects, empty trace caches)."""

    def _load(name):
        path = EXAMPLES / f"{name}.py"
        module_name = f"_tfperf_example_{name}_{next(_counter)}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module

    return _load


@pytest.fixture
def retrace_warnings():
    """Collect TensorFlow's "triggered tf.function retracing" warnings (catalog check W)."""
    import logging

    tf = pytest.importorskip("tensorflow")
    messages = []

    class _Handler(logging.Handler):
        def emit(self, record):
            text = record.getMessage()
            if "triggered tf.function retracing" in text:
                messages.append(text)

    handler = _Handler()
    logger = tf.get_logger()
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)

