"""How many steps a visible ``fit`` runs, and which fits train a compiled model."""
import ast
import textwrap

import pytest

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.fits import fit_steps_at_most, fit_uses, literal_rows
from tfperf_lsp.analysis.source import SourceText


def facts_of(code: str) -> ModuleFacts:
    source = SourceText(textwrap.dedent(code))
    return ModuleFacts(source.parse(), source)


def last_call(facts: ModuleFacts, attr: str) -> ast.Call:
    return [c for c in facts.calls if isinstance(c.func, ast.Attribute) and c.func.attr == attr][-1]


@pytest.mark.parametrize("data, rows", [
    ("np.random.randn(1, 20).astype(np.float32)", 1),
    ("np.zeros((8, 4))", 8),
    ("np.ones([300, 2])", 300),
    ("np.random.normal(size=(50, 3))", 50),
    ("tf.random.uniform([64, 8])", 64),
    ("[np.zeros((5, 2)), np.zeros((5, 3))]", 5),
    ("np.load('x.npy')", None),
    ("np.zeros((n, 4))", None),
])
def test_literal_rows(data, rows):
    facts = facts_of(f"import numpy as np\nimport tensorflow as tf\nx = {data}\nuse(x)\n")
    use = facts.calls[-1]
    assert literal_rows(facts, use.args[0]) == rows


@pytest.mark.parametrize("fit, steps", [
    ("model.fit(x, y)", 1),  # 1 row, batch 32, 1 epoch
    ("model.fit(x, y, epochs=3)", 3),
    ("model.fit(big, y, batch_size=100, epochs=2)", 20),
    ("model.fit(big, y, 100, 2)", 20),
    ("model.fit(big, y, epochs=10, initial_epoch=8)", 64),
    ("model.fit(ds, epochs=5, steps_per_epoch=7)", 35),
    ("model.fit(ds, epochs=5)", None),  # a dataset: its length is not written down
    ("model.fit(big, y, epochs=n)", None),
    ("model.fit(**options)", None),
])
def test_fit_steps_at_most(fit, steps):
    facts = facts_of(f"import numpy as np\nx = np.random.randn(1, 20)\nbig = np.zeros((1000, 20))\n{fit}\n")
    assert fit_steps_at_most(facts, last_call(facts, "fit")) == steps


def test_fit_uses_stop_at_the_next_model_of_the_same_name():
    facts = facts_of("""
        model = build()
        model.compile("sgd", "mse")
        model.fit(x, y)
        model = build()
        model.fit(x, y, epochs=2)
        """)
    compile_call = last_call(facts, "compile")
    assert [use.lineno for use in fit_uses(facts, compile_call, "model")] == [4]


@pytest.mark.parametrize("code, rows", [
    ("xs = np.array([1.0, 2.0, 3.0])\nfit(xs)", 3),
    ("(x_train, y_train), (x_test, y_test) = keras.datasets.boston_housing.load_data()\nfit(x_train)", 404),
    ("(x_train, y_train), (x_test, y_test) = keras.datasets.boston_housing.load_data()\nfit(x_test)", 102),
    ("X, y = load_iris(return_X_y=True)\nfit(X)", 150),
    ("(x_train, y_train), _ = keras.datasets.mnist.load_data()\nfit(x_train)", 60000),
    ("(x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()\nfit(x_test)", 10000),
    ("x = np.load('x.npy').reshape(60000, 784)\nfit(x)", 60000),  # the rows written down
    ("x = np.load('x.npy').reshape(-1, 784)\nfit(x)", None),  # rows of an unknown array
    ("(x_train, y_train), _ = keras.datasets.reuters_large.load_data()\nfit(x_train)", None),  # unknown dataset
])
def test_rows_of_literal_arrays_and_small_built_in_datasets(code, rows):
    text = "import numpy as np\nfrom tensorflow import keras\nfrom sklearn.datasets import load_iris\n" + code + "\n"
    facts = facts_of(text)
    fit = next(c for c in facts.calls if getattr(c.func, "id", "") == "fit")
    assert literal_rows(facts, fit.args[0]) == rows


def test_rows_of_a_scaled_and_flattened_slice():
    facts = facts_of(
        """\
        (train_images, train_labels), _ = load()
        train_images = train_images[:1000].reshape(-1, 28 * 28) / 255.0
        model.fit(train_images, train_labels[:1000], epochs=10)
        """
    )
    assert fit_steps_at_most(facts, last_call(facts, "fit")) == 32 * 10  # 1000 rows at most, batches of 32


@pytest.mark.parametrize("data", ["x[:1000].reshape(1000 * 784, 1)", "x[:1000].reshape(-1)", "x[-5:1000]", "x[:n]",
                                  "(x - m).reshape(-1)"])
def test_rows_not_told_when_a_reshape_or_slice_may_change_them(data):
    facts = facts_of(f"model.fit({data}, y, epochs=10)\n")
    assert fit_steps_at_most(facts, last_call(facts, "fit")) is None


@pytest.mark.parametrize("data, rows", [
    ("x[5:1000]", 995),  # a literal start and stop: at most that many rows
    ("x_train", 160),  # unpacked from a tuple of slices
    ("(x_train - mean) / std", 160),  # arithmetic with per-column statistics keeps the rows
    ("x_train.reshape(x_train.shape[0], 4, 1)", 160),  # its own rows first
    ("x_train.reshape(n, 4, 1)", 160),  # the same, through a name
])
def test_rows_through_slices_unpacking_and_arithmetic(data, rows):
    facts = facts_of(f"x_train, y_train = x[0:160], y[0:160]\nn = x_train.shape[0]\nmodel.fit({data}, y)\n")
    assert literal_rows(facts, last_call(facts, "fit").args[0]) == rows


def test_rows_of_a_keras_dataset_through_a_module_alias():
    facts = facts_of(
        """\
        import tensorflow as tf
        boston_housing = tf.keras.datasets.boston_housing
        (train_data, train_labels), (test_data, test_labels) = boston_housing.load_data()
        model.fit(train_data, train_labels)
        """
    )
    assert literal_rows(facts, last_call(facts, "fit").args[0]) == 404


def test_rows_of_a_literal_list_of_numbers():
    facts = facts_of("model.fit([1, 2, 3], [0.0, 0.0, 1.0])\n")
    assert fit_steps_at_most(facts, last_call(facts, "fit")) == 1  # three samples, one batch of 32
