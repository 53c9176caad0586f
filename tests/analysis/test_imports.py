import ast

import pytest

from tfperf_lsp.analysis.imports import ImportMap


def resolve(code: str, expr: str) -> str | None:
    tree = ast.parse(code + "\n" + expr)
    return ImportMap(tree).qualname(tree.body[-1].value)


@pytest.mark.parametrize(
    "code,expr,expected",
    [
        ("import tensorflow as tf", "tf.function", "tensorflow.function"),
        ("import tensorflow as tfl", "tfl.function", "tensorflow.function"),
        ("import tensorflow", "tensorflow.function", "tensorflow.function"),
        ("from tensorflow import function as f", "f", "tensorflow.function"),
        ("import tensorflow.compat.v2 as tf", "tf.function", "tensorflow.function"),
        ("import tensorflow as tf", "tf.keras.layers.Dense", "keras.layers.Dense"),
        ("from tensorflow import keras", "keras.Model", "keras.Model"),
        ("import keras", "keras.Model", "keras.Model"),
        ("import tf_keras as keras", "keras.Sequential", "keras.Sequential"),
        ("from tensorflow.keras.layers import Dense", "Dense", "keras.layers.Dense"),
        ("from tensorflow.python.keras.layers import Dense", "Dense", "tensorflow.python.keras.layers.Dense"),
        ("import numpy as np", "np.random.uniform", "numpy.random.uniform"),
        ("import tensorflow as tf", "tensorflow.function", None),  # not bound in this file
        ("", "tf.function", None),
    ],
)
def test_import_forms_resolve(code, expr, expected):
    assert resolve(code, expr) == expected


def test_keras_flavour_is_remembered():
    tree = ast.parse("import tensorflow as tf\nfrom tensorflow.python.keras import layers\nimport keras\n")
    assert ImportMap(tree).keras_sources == {"tensorflow.python.keras", "keras"}


def test_alias_for_finds_the_local_spelling():
    tree = ast.parse("import tensorflow as tfl\n")
    imports = ImportMap(tree)
    assert imports.alias_for("tensorflow") == "tfl"
    assert imports.alias_for("numpy") is None


@pytest.mark.parametrize("code,expr,expected", [
    # a star import of Keras layers or applications: the names tfperf knows come from it
    ("from tensorflow.keras.layers import *", "GRU", "keras.layers.GRU"),
    ("from keras.layers import *", "Dense", "keras.layers.Dense"),
    ("from tensorflow.keras.applications.inception_v3 import *", "InceptionV3",
     "keras.applications.inception_v3.InceptionV3"),
    # a name tfperf does not know, or one the module defines itself, is not guessed
    ("from tensorflow.keras.layers import *", "MyBlock", None),
    ("from tensorflow.keras.layers import *\nclass Attention: pass", "Attention", None),
    ("from numpy import *", "Dense", None),
])
def test_star_imports_of_keras(code, expr, expected):
    assert resolve(code, expr) == expected
