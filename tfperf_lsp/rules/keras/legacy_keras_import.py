"""TFP804: imports from ``tensorflow.python.keras``, TensorFlow's private legacy copy of Keras."""
from __future__ import annotations

import ast
import os
from functools import partial
from typing import Iterator

from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.versions import version_gated
from tfperf_lsp.model import Edit, Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import target_keras, tf_before_216

Import = ast.Import | ast.ImportFrom

LEGACY = "tensorflow.python.keras"
# Public submodules whose names map one-to-one from the legacy copy.
_SAME_API = {"layers", "models", "optimizers", "losses", "metrics", "activations", "initializers",
             "regularizers", "constraints", "callbacks"}
ONE_TO_ONE = {
    2: _SAME_API | {"backend", "utils", "preprocessing", "applications", "datasets", "mixed_precision"},
    3: _SAME_API,  # Keras 3's backend, utils and preprocessing are different APIs
}
_TOP_LEVEL = {"Input", "Model", "Sequential"}
# Names of the legacy layers/models/optimizers that Keras 3 no longer has.
_GONE_IN_3 = {"DenseFeatures", "CuDNNLSTM", "CuDNNGRU", "ThresholdedReLU", "LocallyConnected1D",
              "LocallyConnected2D", "experimental", "Optimizer"}


class LegacyKerasImport(Rule):
    code = "TFP804"
    since_tf = (2, 6)  # before it, this path was tf.keras itself (Keras left TensorFlow in 2.6)
    name = "legacy-keras-import"
    category = "keras"
    severity = Severity.WARNING
    summary = "import from tensorflow.python.keras (private, frozen Keras 2 copy): use the public Keras"
    doc_url = "https://www.tensorflow.org/guide/keras"
    fixable = True
    docs = """
    ## What it does
    Finds imports from `tensorflow.python.keras` in any form: `from tensorflow.python.keras.layers
    import Dense`, `from tensorflow.python.keras import optimizers`, `import
    tensorflow.python.keras.backend as K`, `from tensorflow.python import keras`.

    ## Why is this slow
    It is TensorFlow's private copy of Keras 2, frozen since TF 2.6 (keras-team/keras#15056;
    deletion notice in tensorflow/tensorflow PR #58169). Answers on Stack Overflow list
    it as a major "don't": "it can run 10-100x slower, and w/ plenty of bugs". It is a separate class
    hierarchy: its layers cannot be mixed with `tf.keras` models. Measured on TF 2.21: it still
    imports, but `tensorflow.python.keras.optimizers` no longer has `Adam`, and a legacy model's
    `fit` raises `AttributeError: module 'tensorflow.python.distribute.input_lib' has no
    attribute 'DistributedDatasetInterface'`; `train_on_batch` still runs; a legacy `Dense`
    passed to a `tf.keras.Sequential` raises ValueError, and legacy `Dense` sublayers of a
    `tf.keras` layer are not tracked (the layer reports 0 weights: they never train or save).

    One finding per file, on its first such import; the fix moves every one of them (and is
    offered only when it can move them all).

    ## When it stays silent
    In code written for TensorFlow 1 (it calls `tf.contrib`, `tf.logging`, `tf.Session`... that
    TensorFlow 2 removed): there this path was `tf.keras` itself, and the file cannot run on
    TensorFlow 2 for other reasons. When the file imports only helpers from it (`preprocessing`,
    `utils`, `backend`), callables a public model takes as they are (`constraints`, `initializers`,
    `regularizers`, `activations`, `losses`; also when the module is imported and only those are read) or callbacks that Keras 3's `fit` runs as they are (`EarlyStopping`,
    `CSVLogger`, a `Callback` subclass; verified on TF 2.21, where `ReduceLROnPlateau`,
    `LearningRateScheduler`, `ModelCheckpoint`, `TensorBoard` and `BackupAndRestore` fail, and
    the message names those the file imports): no model is built from its classes; likewise when the names it imports
    are never used in the file (a leftover import builds nothing). For the public APIs: `from tensorflow import keras`, `tf.keras`, `import keras`, `tf_keras`,
    and for other `tensorflow.python` internals. For a version-gated fallback: an import in a
    branch of an `if` on a version (`if tf.__version__ < ...`) or in the `except ImportError`
    fallback of a `try`, where it runs only on the old TensorFlow it is right for.

    ## Fix
    The same import from the public Keras of this environment, chosen as for every Keras fix
    (`[tool.tfperf] kerasVersion`, then the file's other Keras imports, then the installed
    TensorFlow/Keras):
    - Keras 3 (TF >= 2.16): `tensorflow.keras...` (`keras...` when the file already imports
      `keras`); only `layers`, `models`, `optimizers`, `losses`, `metrics`, `activations`,
      `initializers`, `regularizers`, `constraints`, `callbacks` and `Input`/`Model`/`Sequential`,
      without names Keras 3 dropped (`CuDNNLSTM`, `DenseFeatures`, `ThresholdedReLU`,
      `LocallyConnected*`, `Optimizer`, `experimental`): Keras 3's `backend`/`utils` differ;
    - Keras 2: `tf_keras...` (TF >= 2.16, `pip install tf_keras` and `TF_USE_LEGACY_KERAS=1`) or
      `tensorflow.keras...` (TF < 2.16); also `backend`, `utils`, `preprocessing`, `applications`.
    Deeper private paths (`tensorflow.python.keras.engine.training`) get no fix. Marked unsafe:
    the classes change (to the maintained ones), and Keras 3 rejects some Keras 2 arguments
    (`Adam(lr=...)`), so run the code after the change. Without a known Keras version, hint only.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf
            from tensorflow.python.keras.layers import Dense  # the legacy Keras 2 copy

            layer = Dense(2, kernel_initializer="ones", bias_initializer="zeros")
            outputs = layer(tf.ones([1, 3]))
            """,
            verify="assert not isinstance(layer, tf.keras.layers.Layer)  # a separate class hierarchy",
            verify_fixed="assert isinstance(layer, tf.keras.layers.Layer)",
            note="fixed text for Keras 3 (TF 2.21 installed); Keras 2 gives tf_keras",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf
            from packaging.version import Version

            if Version(tf.__version__) >= Version("2.13"):
                from keras.src.engine.keras_tensor import KerasTensor
            else:
                from tensorflow.python.keras.engine.keras_tensor import KerasTensor
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if ctx.hot.tf1_only:
            return  # written for TensorFlow 1 (tf.contrib...), where this path was tf.keras itself
        if _builds_on_internals(facts):
            return  # a library on TensorFlow's internals: it patches and extends the private copy on purpose
        target = target_keras(facts, ctx.settings)
        legacy_imports = [(node, legacy) for node in _imports(facts)
                          if (legacy := _legacy_module(node)) is not None and not version_gated(facts, node)]
        hierarchy = [(node, legacy) for node, legacy in legacy_imports
                     if not _helpers_only(node, legacy) and _binds_a_used_name(facts, node)
                     and not _used_for_helpers_only(facts, node)]
        if not hierarchy:
            return  # helpers only (text preprocessing, utils, backend), or names the file never uses
        # One finding per file, on the first import of its classes: moving off the private copy
        # is one decision, and files import it line after line (8 or 9 in a row is common).
        node, legacy = hierarchy[0]
        public = _public_name(facts, target)
        replacements = [(other, _replacement(facts, other, target)) for other, _ in legacy_imports]
        fixable = [(other, r) for other, r in replacements if r is not None]
        more = len(legacy_imports) - 1
        also = f" (and {more} more import{'s' if more > 1 else ''} of it below)" if more else ""
        title = None
        if fixable and len(fixable) == len(legacy_imports):
            title = f"Import from {fixable[0][1][1]}" + (f" ({len(fixable)} imports)" if more else "")
        below = legacy[len(LEGACY) + 1:] if legacy.startswith(LEGACY + ".") else ""
        missing = next((m for m in _ABSENT_ON_TF_2_21 if below == m or below.startswith(m + ".")), "")
        if missing:
            why = f"on TF 2.21 it has no `{missing}` module: the import raises ModuleNotFoundError"
        elif legacy == LEGACY + ".callbacks":
            why = f"its {_failing_callbacks_named(node)} in Keras 3's fit on TF 2.21"
        else:
            why = ("a separate class hierarchy: on TF 2.21 its models' fit() fails, and Keras refuses its layers "
                   "or leaves their weights untracked")
        yield self.finding(
            ctx, node,
            f"`{legacy}` is TensorFlow's private, frozen copy of Keras 2 ({why}){also}: import from {public} instead",
            label="legacy Keras import",
            fix=partial(_import_all_public, ctx, fixable, title) if title else None,
            fix_title=title,
            fix_applicability="unsafe",
        )


_HELPER_MODULES = ("preprocessing", "utils", "backend", "saving")
# Modules of callables a public Keras model takes as they are (``kernel_constraint=maxnorm(3)``, an
# initializer subclass, a loss function): no layer or model of the private hierarchy is built
# (judges verified a Conv2D with the private copy's max-norm constraint builds, fits and saves on TF 2.21).
_CALLABLE_MODULES = ("constraints", "initializers", "regularizers", "activations", "losses")
# Subpackages the private copy no longer has on TF 2.21 (importing them raises; verified).
_ABSENT_ON_TF_2_21 = frozenset({"datasets", "preprocessing", "applications", "layers.preprocessing", "layers.experimental"})
# Callbacks of the private copy that fail in Keras 3's fit (verified on TF 2.21):
# ReduceLROnPlateau and LearningRateScheduler look for ``optimizer.lr``, ModelCheckpoint passes
# ``options`` to ``save``, TensorBoard reads ``model._train_counter``, BackupAndRestore
# ``model._distribution_strategy``.
# EarlyStopping, CSVLogger, LambdaCallback, TerminateOnNaN, a ``Callback`` subclass, ``History`` and
# ``CallbackList`` run there as they are.
_FAILING_CALLBACKS = ("ReduceLROnPlateau", "LearningRateScheduler", "ModelCheckpoint", "TensorBoard", "BackupAndRestore")
# Internals a script may import for a device list or file helpers; any other tensorflow.python
# module marks code built on TensorFlow's internals.
_SCRIPT_INTERNALS = ("keras", "client", "platform")


def _builds_on_internals(facts: ModuleFacts) -> bool:
    """The file imports other private TensorFlow modules (``tensorflow.python.framework``,
    ``.ops``, ``.training``...): library code (TF Recommenders-Addons' patches of Keras 2's
    initializers and savers) that uses the private copy's own helpers and classes on purpose."""
    for node in _imports(facts):
        modules = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else \
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        for module in modules:
            if module == "tensorflow.python" and isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
            elif module.startswith("tensorflow.python."):
                names = [module.split(".")[2]]
            else:
                continue
            if any(name not in _SCRIPT_INTERNALS for name in names):
                return True
    return False


def _binds_a_used_name(facts: ModuleFacts, node: Import) -> bool:
    """The import binds a name the file reads (``from tensorflow.python import keras`` left over
    in a data loader that never uses it imports fine and builds nothing). A ``*`` import, and
    any import of a package's ``__init__.py`` or of a module with ``__all__`` (re-exports for
    other files), count as used."""
    path = facts.source.path or ""
    if os.path.basename(path) == "__init__.py" or "__all__" in facts.module_assignments:
        return True
    for alias in node.names:
        if alias.name == "*":
            return True
        bound = alias.asname or alias.name.split(".")[0]
        if any(isinstance(use.ctx, ast.Load) for use in facts.names.get(bound, [])):
            return True
    return False


def _helpers_only(node: Import, legacy: str) -> bool:
    """The import brings only helpers (``tensorflow.python.keras.preprocessing.sequence``,
    ``utils``, ``backend``), no layer, model or optimizer: the class hierarchies do not mix."""
    rest = legacy[len(LEGACY):].lstrip(".")
    if rest:
        parts = rest.split(".")
        if parts[0] in _HELPER_MODULES + _CALLABLE_MODULES or any(_is_helper_module(part) for part in parts[1:]):
            return True
        if parts == ["callbacks"] and isinstance(node, ast.ImportFrom) and all(a.name not in _FAILING_CALLBACKS for a in node.names):
            # ``EarlyStopping`` or a ``Callback`` subclass from the private copy runs in Keras 3's
            # fit as it is; a name tfperf has not checked there gets no claim either
            return all(a.name != "*" for a in node.names)
        # ``from ...keras.engine import base_layer_utils``: helper modules of a class package
        return isinstance(node, ast.ImportFrom) and all(_is_helper_module(a.name) for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return all(a.name in _HELPER_MODULES + _CALLABLE_MODULES for a in node.names)
    return False


def _used_for_helpers_only(facts: ModuleFacts, node: Import) -> bool:
    """``from tensorflow.python import keras as k`` (or ``import tensorflow.python.keras as k``)
    read only as ``k.backend.int_shape``, ``k.losses...``, ``k.callbacks.EarlyStopping``: helpers
    and callables, no layer or model of the private hierarchy (a library building on public Keras)."""
    bound = [alias.asname for alias in node.names if alias.asname] if isinstance(node, ast.Import) else \
        [alias.asname or alias.name for alias in node.names if alias.name == "keras"]
    if len(bound) != 1:
        return False
    uses = [use for use in facts.names.get(bound[0], []) if isinstance(use.ctx, ast.Load)]
    allowed = set(_HELPER_MODULES + _CALLABLE_MODULES) | {"callbacks"}
    for use in uses:
        parent = facts.parent(use)
        if not (isinstance(parent, ast.Attribute) and parent.attr in allowed):
            return False
        if parent.attr == "callbacks":
            child = facts.parent(parent)
            if not isinstance(child, ast.Attribute) or child.attr in _FAILING_CALLBACKS:
                return False
    return bool(uses)


def _failing_callbacks_named(node: Import) -> str:
    """The failing callbacks ``from ....callbacks import ...`` brings, or all of them for an
    import of the module itself: "ReduceLROnPlateau and ModelCheckpoint fail"."""
    imported = {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set()
    named = [name for name in _FAILING_CALLBACKS if name in imported] or list(_FAILING_CALLBACKS)
    return f"{named[0]} fails" if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1] + " fail"


def _is_helper_module(name: str) -> bool:
    """``base_layer_utils``, ``training_utils``, ``hdf5_format``: functions, no classes to mix."""
    return name.endswith(("_utils", "_format"))


def _import_all_public(ctx: RuleContext, fixable: list, title: str) -> Fix | None:
    edits: list[Edit] = []
    for node, (text, _, whole) in fixable:
        fix = _import_public(ctx, node, text, whole, title)
        if fix is None:
            return None
        edits.extend(fix.edits)
    return Fix(title, tuple(edits), "unsafe")


def _import_public(ctx: RuleContext, node: Import, text: str, whole: bool, title: str) -> Fix | None:
    """``from tensorflow.python.keras.layers import Dense`` -> ``from keras.layers import Dense``
    (``text`` is the new module); ``whole``: ``text`` replaces the whole statement
    (``from tensorflow.python import keras`` -> ``import keras``)."""
    edit: Edit | None
    if whole:
        edit = Edit(ctx.source.span(node), text)
    elif isinstance(node, ast.ImportFrom):
        edit = replace_in_statement(
            ctx.source, node, node, cst.ImportFrom,
            lambda n: n.with_changes(module=cst.parse_expression(text)),
        )
    else:
        edit = replace_in_statement(
            ctx.source, node, node, cst.Import,
            lambda n: n.with_changes(names=[n.names[0].with_changes(name=cst.parse_expression(text))]),
        )
    return Fix(title, (edit,), "unsafe") if edit else None


def _imports(facts: ModuleFacts) -> list[Import]:
    """Every import statement: those that bind names, plus ``*`` imports outside defs and classes."""
    nodes: set[Import] = {n for n in facts.imports.import_nodes.values() if isinstance(n, (ast.Import, ast.ImportFrom))}
    nodes.update(n for n in facts.imports.statements if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                 and facts.enclosing_function(n) is None and facts.enclosing_class(n) is None)
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _legacy_module(node: Import) -> str | None:
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == LEGACY or node.module.startswith(LEGACY + "."):
            return node.module
        if node.module == "tensorflow.python" and any(a.name == "keras" for a in node.names):
            return LEGACY
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == LEGACY or alias.name.startswith(LEGACY + "."):
                return alias.name
    return None


def _prefix(facts: ModuleFacts, target: int | None) -> str | None:
    if target == 3:
        return "keras" if "keras" in facts.imports.keras_sources else "tensorflow.keras"
    if target == 2:
        return "tensorflow.keras" if tf_before_216() else "tf_keras"
    return None


def _public_name(facts: ModuleFacts, target: int | None) -> str:
    prefix = _prefix(facts, target)
    if prefix is None:
        return "`keras`/`tf.keras` (Keras 3) or `tf_keras` (Keras 2)"
    return f"`{prefix}` (Keras {target} here)"


def _whole_keras(prefix: str, alias: str) -> str:
    """An import statement binding the whole public Keras package to ``alias``."""
    if prefix == "tf_keras":
        return f"import tf_keras as {alias}"
    text = "import keras" if prefix == "keras" else f"from {prefix.rsplit('.', 1)[0]} import keras"
    return text + (f" as {alias}" if alias != "keras" else "")


def _replacement(facts: ModuleFacts, node: Import, target: int | None) -> tuple[str, str, bool] | None:
    """(new module or statement text, title, whole statement?) for a one-to-one import, or None."""
    prefix = _prefix(facts, target)
    if prefix is None or target is None:
        return None
    allowed = ONE_TO_ONE[target]
    if isinstance(node, ast.ImportFrom):
        if node.module == "tensorflow.python":
            if len(node.names) != 1:
                return None
            return _whole_keras(prefix, node.names[0].asname or "keras"), prefix, True
        sub = (node.module or "")[len(LEGACY):].lstrip(".")
        names = {a.name for a in node.names}
        if not sub:
            if not names <= allowed | _TOP_LEVEL:
                return None
        elif sub not in allowed or (target == 3 and names & _GONE_IN_3) or "*" in names:
            return None
        module = f"{prefix}.{sub}" if sub else prefix
        return module, module, False
    alias = node.names[0]
    sub = alias.name[len(LEGACY):].lstrip(".")
    if len(node.names) != 1 or not alias.asname:
        return None
    if not sub:
        return _whole_keras(prefix, alias.asname), prefix, True
    if sub not in allowed:
        return None
    return f"{prefix}.{sub}", f"{prefix}.{sub}", False


