"""examples/input_pipeline.py after every TFP7xx fix (safe and unsafe): valid Python, the answer
key's pipelines rewritten, and under TensorFlow the same elements as the original."""
import importlib.util
import pathlib

import pytest

from tests.rules.helpers import fixed

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "input_pipeline.py"
CODES = {"TFP701", "TFP702", "TFP703", "TFP704", "TFP705"}


def fixed_text():
    return fixed(EXAMPLE.read_text(encoding="utf-8"), CODES)


def test_fixed_example_is_valid_and_rewritten():
    text = fixed_text()
    compile(text, str(EXAMPLE), "exec")
    assert "ds = ds.map(decode_and_normalize).cache()" in text  # D4 (tf.data parallelises the map itself)
    # D2: only the pipeline whose options turn prefetch injection off gets one
    assert text.count(".prefetch(tf.data.AUTOTUNE)") == EXAMPLE.read_text(encoding="utf-8").count(".prefetch(tf.data.AUTOTUNE)") + 1
    assert "ds = tf.data.Dataset.from_tensor_slices((images, labels))\n    ds = ds.batch(BATCH_SIZE)" in text  # D5
    assert "ds = ds.map(augment)\n" in text  # random: no D1/D3/D4 rewrite


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _elements(dataset):
    images, labels = zip(*[(x.numpy(), y.numpy()) for x, y in dataset])
    import numpy as np

    return np.concatenate(images), np.concatenate(labels)


@pytest.mark.tf
def test_fixed_pipelines_give_the_same_elements(tmp_path):
    import numpy as np

    path = tmp_path / "input_pipeline_fixed.py"
    path.write_text(fixed_text(), encoding="utf-8")
    before, after = _load(EXAMPLE, "_ip_before"), _load(path, "_ip_after")
    for make in ("make_eval_dataset_slow", "make_generator_dataset"):
        x1, y1 = _elements(getattr(before, make)())
        x2, y2 = _elements(getattr(after, make)())
        np.testing.assert_array_equal(y1, y2)
        np.testing.assert_allclose(x1, x2, rtol=1e-6, atol=1e-6)  # tolerance: float32 resize, same kernels
    # the cached eval pipeline gives the same checksum over 3 epochs
    assert np.isclose(before.evaluate_every_epoch(before.make_eval_dataset_slow()),
                      after.evaluate_every_epoch(after.make_eval_dataset_slow()), rtol=1e-6)
