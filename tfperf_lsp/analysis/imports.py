"""Resolve expressions to qualified names through any import form.

``import tensorflow as tfl; tfl.function`` and ``from tensorflow import function as f; f`` both
resolve to ``tensorflow.function``. Keras spellings are normalised to one namespace so rules match
once: ``tf.keras.X``, ``tensorflow.keras.X``, ``keras.X`` and ``tf_keras.X`` all become ``keras.X``.
The legacy private package ``tensorflow.python.keras`` is kept distinct (a rule flags it).
Which spelling the file used is remembered in ``keras_sources`` (Keras 2 vs 3 matters to fixes).
"""
from __future__ import annotations

import ast
import re

_PREFIX_ALIASES = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.", "keras."),
)


# TensorFlow 1 compat names that are the same object as the TF 2 name.
_SAME_IN_COMPAT_V1 = {"tensorflow.compat.v1.function": "tensorflow.function",
                      "tensorflow.compat.v1.GradientTape": "tensorflow.GradientTape"}


def canonical(qualname: str) -> str:
    if qualname in _SAME_IN_COMPAT_V1:
        return _SAME_IN_COMPAT_V1[qualname]
    dotted = qualname + "."
    for prefix, replacement in _PREFIX_ALIASES:
        if dotted.startswith(prefix):
            return (replacement + dotted[len(prefix) :])[:-1]
    return qualname


class ImportMap:
    """Local names bound by imports anywhere in the module (function-level imports included)."""

    def __init__(self, tree: ast.Module, import_nodes: list[ast.stmt] | None = None):
        self.bindings: dict[str, str] = {}
        self.import_nodes: dict[str, ast.stmt] = {}
        self.keras_sources: set[str] = set()  # "tensorflow.keras", "keras", "tf_keras", "tensorflow.python.keras"
        # node -> qualname: every rule asks about the same calls (keyed by the node itself, which
        # the dict keeps alive, so an id cannot be reused by a node made later)
        self._qualnames: dict[ast.AST, str | None] = {}
        # ``from tensorflow.keras.layers import *``: the module its layer names come from
        self._star_layers: str | None = None
        self._star_applications: str | None = None  # ``from keras.applications.inception_v3 import *``
        self._module_names: set[str] = set()
        if import_nodes is None:
            import_nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        # Source order, so a later import of the same name wins, as at run time.
        self.statements: list[ast.Import | ast.ImportFrom] = sorted(
            (n for n in import_nodes if isinstance(n, (ast.Import, ast.ImportFrom))), key=lambda n: (n.lineno, n.col_offset))
        for node in self.statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bind(alias.asname, alias.name, node)
                    else:
                        # ``import a.b.c`` binds ``a``; attribute access resolves the rest.
                        top = alias.name.split(".")[0]
                        self._bind(top, top, node)
                    self._note_keras(alias.name)
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                self._note_keras(module)
                for alias in node.names:
                    if alias.name == "*":
                        if canonical(module).endswith("keras.layers"):
                            self._star_layers = module
                        elif canonical(module).startswith("keras.applications"):
                            self._star_applications = module
                        continue
                    full = f"{module}.{alias.name}" if module and not module.endswith(".") else module + alias.name
                    self._bind(alias.asname or alias.name, full, node)
                    self._note_keras(full)
        if self._star_layers or self._star_applications:
            self._module_names = _module_level_names(tree)

    def resolves_like(self, other: ImportMap) -> bool:
        """Whether every name resolves here as in ``other`` (an earlier version of the file):
        its answers for the nodes both versions share can be taken as they are."""
        return (self.bindings == other.bindings and self._star_layers == other._star_layers
                and self._star_applications == other._star_applications and self._module_names == other._module_names)

    def reuse_answers(self, earlier: ImportMap, kept: int) -> None:
        """Start from ``earlier``'s answers (same bindings: ``resolves_like``), for the nodes of
        the statements a keystroke left as they were; the answers for the nodes it replaced
        stay until the cache grows past ``kept`` entries, and then it starts empty."""
        if len(earlier._qualnames) <= kept:
            self._qualnames = earlier._qualnames

    def reused_answers(self) -> dict[ast.AST, str | None]:
        """The answers cache (shared with the version ``reuse_answers`` took it from)."""
        return self._qualnames

    def _bind(self, local: str, qualname: str, node: ast.stmt) -> None:
        self.bindings[local] = qualname
        self.import_nodes[local] = node

    def _note_keras(self, module: str) -> None:
        for source in ("tensorflow.python.keras", "tensorflow.keras", "tf_keras", "keras"):
            if module == source or module.startswith(source + "."):
                self.keras_sources.add(source)
                return
        if module == "tensorflow.python" or module.startswith("tensorflow.python."):
            return

    def raw_qualname(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            found = self.bindings.get(node.id)
            if found is None and node.id not in self._module_names:
                if self._star_layers and node.id in KERAS_LAYER_NAMES:
                    return f"{self._star_layers}.{node.id}"  # ``GRU(units)`` after ``from keras.layers import *``
                if self._star_applications and _APPLICATION.match(node.id):
                    return f"{self._star_applications}.{node.id}"  # ``InceptionV3(weights="imagenet")``
            return found
        if isinstance(node, ast.Attribute):
            base = self.raw_qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def qualname(self, node: ast.AST) -> str | None:
        """Canonical qualified name of a Name/Attribute chain rooted in an import, else None."""
        try:
            return self._qualnames[node]
        except KeyError:
            raw = self.raw_qualname(node)
            result = self._qualnames[node] = canonical(raw) if raw else None
            return result

    def alias_for(self, module: str) -> str | None:
        """The local name under which ``module`` is imported (``tf`` for tensorflow), if any."""
        for local, qualname in self.bindings.items():
            if qualname == module:
                return local
        return None

    def is_tensorflow(self, qualname: str | None) -> bool:
        return qualname is not None and (qualname == "tensorflow" or qualname.startswith("tensorflow."))

    def is_keras(self, qualname: str | None) -> bool:
        return qualname is not None and (qualname == "keras" or qualname.startswith("keras."))


# Keras layer classes a ``from keras.layers import *`` brings in, by name (tfperf never imports
# Keras to list the module): the ones the rules size or recognise.
KERAS_LAYER_NAMES = frozenset({
    "Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
    "SeparableConv1D", "SeparableConv2D", "DepthwiseConv2D", "LSTM", "GRU", "SimpleRNN", "RNN", "LSTMCell",
    "GRUCell", "Bidirectional", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "CuDNNLSTM", "CuDNNGRU", "Embedding",
    "Dropout", "SpatialDropout1D", "SpatialDropout2D", "GaussianNoise", "BatchNormalization",
    "LayerNormalization", "Flatten", "Reshape", "Permute", "RepeatVector", "Input", "InputLayer",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    "Activation", "LeakyReLU", "ReLU", "PReLU", "ELU", "Softmax", "Concatenate", "Add", "Subtract", "Multiply",
    "Average", "Maximum", "Lambda", "TimeDistributed", "Attention", "AdditiveAttention", "MultiHeadAttention",
    "UpSampling1D", "UpSampling2D", "ZeroPadding1D", "ZeroPadding2D", "Cropping2D", "Masking",
})


# The pretrained networks of ``keras.applications``, by name.
_APPLICATION = re.compile(r"^(VGG1[69]|ResNet\d+(V2)?|ResNetRS\d+|InceptionV3|InceptionResNetV2|Xception|MobileNet(V2|V3Small|V3Large)?"
                          r"|DenseNet\d+|NASNet(Mobile|Large)|EfficientNet(B\d|V2B\d|V2[SML])|ConvNeXt\w+|RegNet[XY]\d+\w*)$")


def _module_level_names(tree: ast.Module) -> set[str]:
    """Names the module itself binds at its top level (a class ``Attention`` of its own shadows
    the one a star import would bring)."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.update(n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names
