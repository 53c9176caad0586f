"""What the user's environment runs: TensorFlow and Keras versions, told without importing them.

Fixes differ between Keras 2 (``tf_keras``, ``tensorflow.python.keras``, ``tf.keras`` before
TF 2.16) and Keras 3 (``keras`` >= 3, ``tf.keras`` from TF 2.16 unless ``TF_USE_LEGACY_KERAS=1``).
The server runs with the user's interpreter (see server/), so installed metadata describes the
environment the code runs in. ``[tool.tfperf] kerasVersion = "2"`` overrides the guess.
"""
from __future__ import annotations

import os
from functools import lru_cache

TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tensorflow-intel", "tf-nightly")


@lru_cache(maxsize=None)
def installed_version(*distributions: str) -> str | None:
    import importlib.metadata  # 9 ms (email, zipfile ...): only when a rule asks

    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def major_minor(version: str | None) -> tuple[int, int] | None:
    if not version:
        return None
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    except ValueError:
        return None


def keras_major(facts, settings=None) -> int | None:
    """2 or 3 for the Keras this file uses, or None when it cannot be told."""
    configured = getattr(settings, "keras_version", None)
    if configured and str(configured)[0] in "23":
        return int(str(configured)[0])
    sources = facts.imports.keras_sources
    if "tf_keras" in sources or "tensorflow.python.keras" in sources:
        return 2
    if "keras" in sources:
        installed = major_minor(installed_version("keras"))
        return 3 if installed and installed[0] >= 3 else (2 if installed else None)
    if "tensorflow.keras" in sources or facts.imports.alias_for("tensorflow"):
        return tf_keras_major()
    return None


def tf_keras_major() -> int | None:
    """The Keras that ``tf.keras`` is in this environment."""
    tf_version = major_minor(installed_version(*TENSORFLOW_DISTRIBUTIONS))
    if tf_version is None:
        return None
    if tf_version < (2, 16):
        return 2
    legacy = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes")
    return 2 if legacy and installed_version("tf-keras", "tf_keras") else 3
