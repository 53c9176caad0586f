"""Run rule examples and fixture cases under TensorFlow (shared by the *_under_tensorflow tests)."""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import tempfile
import textwrap


def run(source: str, verify: str | None = None) -> dict:
    """Run ``source`` as a real file (AutoGraph reads the source of what it converts), then the
    ``verify`` statements in its namespace; the module's namespace."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)  # original and fixed code must draw the same numbers
    # A case may switch process-wide settings (TFP304's ``run_functions_eagerly(True)``): put them
    # back, or every later test in this worker would count no traces.
    eager_functions = tf.config.functions_run_eagerly()
    try:
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "example.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(source)
                if verify:
                    handle.write("\n" + textwrap.dedent(verify))
            with contextlib.redirect_stdout(io.StringIO()):
                return runpy.run_path(path, run_name="__tfperf_example__")
    finally:
        tf.config.run_functions_eagerly(eager_functions)


def module_values(namespace: dict) -> dict:
    """The module-level tensors, variables and arrays, as numpy arrays."""
    import numpy as np
    import tensorflow as tf

    values = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (tf.Tensor, tf.Variable, np.ndarray)):
            values[name] = np.asarray(value)
    return values


def assert_same_values(original: dict, rewritten: dict) -> None:
    import numpy as np

    assert set(original) == set(rewritten)
    for name, value in original.items():
        assert value.shape == rewritten[name].shape, name
        # Reordered float sums (vectorised reductions) differ in the last bits: 1e-5 relative.
        assert np.allclose(value, rewritten[name], rtol=1e-5, atol=1e-6), name


def trace_count(namespace: dict, traced: str | None, trace_counter: str | None) -> int:
    if trace_counter:
        return len(namespace[trace_counter])
    return namespace[traced].experimental_get_tracing_count()
