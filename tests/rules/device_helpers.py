"""Shared by the xla and precision rule tests: analyse, apply one rule's fixes, run under TF."""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import tempfile
import textwrap

from tfperf_lsp.config import Settings
from tests.rules.helpers import fixed as apply_fixes
from tfperf_lsp.engine import analyze

GPU = {"device": {"gpu": True, "compute_capability": "8.6"}}
CPU = {"device": {"gpu": False, "cpu_features": []}}


def settings(options=None) -> Settings:
    return Settings().with_overrides(options) if options else Settings()


def own(code, source, options=None):
    """(analysis, findings of rule ``code``) for dedented ``source``."""
    analysis = analyze(textwrap.dedent(source).lstrip("\n"), settings=settings(options))
    assert not analysis.rule_errors, analysis.rule_errors
    return analysis, [f for f in analysis.findings if f.code == code]


def fixed(code, source, options=None):
    """The source after applying every fix of ``code`` (one at a time, re-analysing)."""
    return apply_fixes(source, {code}, settings(options))


def run(source):
    """Run ``source`` as a real file (AutoGraph reads sources) and return its module namespace.
    Resets the global state our rules touch (Keras policy, XLA JIT level) afterwards."""
    import keras
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    try:
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "example.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(textwrap.dedent(source).lstrip("\n"))
            with contextlib.redirect_stdout(io.StringIO()):
                return runpy.run_path(path, run_name="__tfperf_test__")
    finally:
        keras.mixed_precision.set_global_policy("float32")
        tf.config.optimizer.set_jit(False)


def tensors(namespace):
    import numpy as np
    import tensorflow as tf

    return {
        name: np.asarray(value) for name, value in namespace.items()
        if not name.startswith("_") and isinstance(value, (tf.Tensor, tf.Variable, np.ndarray))
    }
