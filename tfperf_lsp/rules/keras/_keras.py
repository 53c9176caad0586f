"""Facts the TFP8xx rules share: is a receiver a Keras model, which Keras a fix should target,
and how big a model is (as far as its construction in this file shows)."""
from __future__ import annotations

import ast
from collections.abc import Iterable

from tfperf_lsp.analysis.astutil import int_literal, keyword
from tfperf_lsp.analysis.environment import installed_version, major_minor, tf_keras_major, TENSORFLOW_DISTRIBUTIONS
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.models import attribute_holds_model, creates_model, is_model_name
from tfperf_lsp.config import Settings

# Keywords only Keras' predict/fit/train_on_batch take (scikit-learn, XGBoost, LightGBM take none).
KERAS_KEYWORDS = {"verbose", "batch_size", "steps", "callbacks", "epochs", "validation_data", "shuffle",
                  "steps_per_epoch", "class_weight", "sample_weight", "initial_epoch", "validation_split"}
# Every keyword Keras' ``Model.fit`` takes (Keras 2 and 3): a ``fit`` given another
# (``nb_epoch=``, ``checkpoint_interval=``: DeepChem, Keras 1) is some other library's.
FIT_KEYWORDS = frozenset({"x", "y", "batch_size", "epochs", "verbose", "callbacks", "validation_split",
                          "validation_data", "shuffle", "class_weight", "sample_weight", "initial_epoch",
                          "steps_per_epoch", "validation_steps", "validation_batch_size", "validation_freq",
                          "max_queue_size", "workers", "use_multiprocessing"})
# Every keyword Keras' ``Model.predict`` takes (Keras 2 and 3).
PREDICT_KEYWORDS = frozenset({"x", "batch_size", "verbose", "steps", "callbacks", "max_queue_size", "workers",
                              "use_multiprocessing"})


def keras_predict_call(call: ast.Call) -> bool:
    """The call fits Keras' ``predict(x, batch_size=None, verbose=..., steps=None, ...)``: no other
    keyword (``is_list=``), and a second positional argument, if any, that may be a batch size
    (``predict(users, items)`` is a recommender's own method)."""
    if any(k.arg is not None and k.arg not in PREDICT_KEYWORDS for k in call.keywords):
        return False
    if len(call.args) > 2:
        return False
    if len(call.args) == 2:
        size = call.args[1]
        return isinstance(size, ast.Constant) and isinstance(size.value, int) or (
            isinstance(size, (ast.Name, ast.Attribute)) and "batch" in ast.unparse(size).lower())
    return True


_OTHER_ML = ("sklearn", "xgboost", "lightgbm", "catboost", "statsmodels", "joblib", "torch")
_MODEL_WORDS = ("model", "net", "classifier", "regressor", "encoder", "decoder", "autoencoder")


def other_keras_backend(facts: ModuleFacts) -> str | None:
    """The Keras 3 backend the file selects when it is not TensorFlow: ``"jax"`` for
    ``os.environ["KERAS_BACKEND"] = "jax"`` (or ``os.environ.setdefault(...)``, ``os.putenv``) at
    module level. Keras then compiles ``predict`` and ``train_on_batch`` with that backend, and a
    ``tf.function`` cannot run its models."""
    cached = facts.__dict__.get("_tfperf_keras_backend", False)  # lives as long as one analysis
    if cached is False:
        cached = facts.__dict__["_tfperf_keras_backend"] = _selected_backend(facts)
    return None if cached in (None, "tensorflow") else cached


def uses_tensorflow(facts: ModuleFacts) -> bool:
    """The file imports TensorFlow (``tf.keras``, not a standalone Keras)."""
    return any(q.startswith("tensorflow") for q in facts.imports.bindings.values())


def multi_backend_keras(facts: ModuleFacts, keras_version: str | None) -> bool:
    """The file imports standalone ``keras`` and nothing of TensorFlow, and no setting says it is
    Keras 3 (``kerasVersion``, or ``KERAS_BACKEND`` set to ``"tensorflow"``): it may be the
    multi-backend Keras 2.0-2.3 of older books and courses, whose ``compile()`` has none of
    TensorFlow's options (``steps_per_execution``, ``jit_compile``) and whose models run in
    TensorFlow 1 graphs."""
    if facts.imports.keras_sources != {"keras"}:
        return False
    if uses_tensorflow(facts):
        return False
    return not (str(keras_version or "").startswith("3") or _selected_backend(facts) == "tensorflow")


def _selected_backend(facts: ModuleFacts) -> str | None:
    if "KERAS_BACKEND" not in facts.source.text:
        return None
    for stmt in facts.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if (isinstance(target, ast.Subscript) and facts.qualname(target.value) == "os.environ"
                    and _string(target.slice) == "KERAS_BACKEND" and _string(stmt.value)):
                return _string(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if facts.qualname(call.func) in ("os.environ.setdefault", "os.putenv") and len(call.args) == 2 \
                    and _string(call.args[0]) == "KERAS_BACKEND":
                return _string(call.args[1])
    return None


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def uses_keras(facts: ModuleFacts) -> bool:
    return bool(facts.imports.keras_sources) or facts.imports.alias_for("tensorflow") is not None


def _other_ml(facts: ModuleFacts) -> bool:
    return any(q.split(".")[0] in _OTHER_ML for q in facts.imports.bindings.values())


def _classes_built(facts: ModuleFacts, receiver: ast.expr) -> list[ast.ClassDef]:
    """The classes of this file named by the calls ``receiver`` is assigned from: ``x = Scorer()``
    for a name; for ``self.x``, every ``self.x = Scorer()`` in the methods of the class around it
    (an agent's ``self.target_model = QNetwork(...)``)."""
    values: list[ast.expr | None]
    if isinstance(receiver, ast.Name):
        values = [getattr(facts.reaching_assignment(receiver), "value", None)]
    elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        values = list(facts.self_attribute_values(receiver))
    else:
        return []
    calls = [v for v in values if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)]
    if not values or len(calls) < len(values):
        return []
    names = {c.func.id for c in calls if isinstance(c.func, ast.Name)}
    return [c for c in facts.classes if c.name in names]


def overrides(facts: ModuleFacts, receiver: ast.expr, method: str) -> bool:
    """``receiver`` (``x`` or ``self.x``) holds an object of a class of this file that defines
    ``method`` itself (``class DB_VAE(tf.keras.Model): def predict(self, x): ...``): not Keras' method."""
    return any(any(isinstance(s, FunctionNode) and s.name == method for s in c.body) for c in _classes_built(facts, receiver))


def traced_call(facts: ModuleFacts, receiver: ast.expr) -> bool:
    """``receiver`` holds an object of a class of this file whose ``call`` (or ``__call__``) is a
    ``tf.function`` itself (``class CAModel(tf.keras.Model): @tf.function def call(...)``):
    calling the model already runs one graph. When the object's class cannot be told (``for ca in
    models``, a factory's result), the file's model classes decide: all of them so."""
    def traced(cls: ast.ClassDef) -> bool:
        return any(isinstance(s, FunctionNode) and s.name in ("call", "__call__") and facts.tf_function_for_def(s) is not None
                   for s in cls.body)

    classes = _classes_built(facts, receiver)
    if not classes:
        classes = [c for c in facts.classes if c.bases and any(isinstance(s, FunctionNode) and s.name == "call" for s in c.body)]
    return bool(classes) and all(traced(c) for c in classes)


def instance_of_a_plain_class(facts: ModuleFacts, receiver: ast.expr) -> bool:
    """``receiver`` (``x`` or ``self.x``) holds an object of a class this file defines with no
    base but ``object``: its ``predict`` or ``train_on_batch`` is its own method, not Keras'."""
    cls = next((c for c in _classes_built(facts, receiver) if facts.parent(c) is facts.tree), None)
    return cls is not None and plain_class(cls)


def plain_class(cls: ast.ClassDef) -> bool:
    """A class with no base but ``object``: none of its methods is Keras'."""
    return all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases)


def receiver_kind(facts: ModuleFacts, call: ast.Call) -> str | None:
    """Why ``call``'s receiver (``x.predict(...)``) is a Keras model: "model" (built in this file),
    "keywords" (a Keras-only keyword), "name" (a model-like name in a Keras file), or None."""
    if not isinstance(call.func, ast.Attribute):
        return None
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and is_model_name(facts, receiver) or attribute_holds_model(facts, receiver):
        return "model"
    if instance_of_a_plain_class(facts, receiver):
        return None  # ``vmodel = ValueModel(...)``: its own predict (a TF1 session.run), not Keras
    if not uses_keras(facts):
        return None
    if any(kw.arg in KERAS_KEYWORDS for kw in call.keywords):
        return "keywords"
    name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) else ""
    if any(word in name.lower() for word in _MODEL_WORDS) and not _other_ml(facts):
        return "name"
    return None


def model_construction(facts: ModuleFacts, name: ast.Name, at: ast.expr | None = None) -> tuple[ast.Call, ast.AST | None] | None:
    """The call that builds the model ``name`` holds, and the def it runs in (None: module level).

    Follows ``model = build()`` into a local factory's ``return``."""
    scope = facts.enclosing_function(at or name)
    assigned = facts.assignments_in(scope).get(name.id, []) if scope is not None else facts.module_assignments.get(name.id, [])
    line = (at or name).lineno
    before = [a for a in assigned if isinstance(a, ast.Assign) and a.lineno <= line]
    if not before:
        # A parameter: the model its callers pass (``predict_each(classifier, rows)``).
        passed = facts.reaching_assignment_at(name.id, at or name) if scope is not None else None
        if isinstance(passed, ast.Assign):
            return _construction(facts, passed.value, facts.enclosing_function(passed), 0)
        return None
    value = max(before, key=lambda a: a.lineno).value
    return _construction(facts, value, scope, 0)


def _construction(facts: ModuleFacts, value: ast.AST, scope: ast.AST | None, depth: int) -> tuple[ast.Call, ast.AST | None] | None:
    if not isinstance(value, ast.Call) or depth > 3 or not creates_model(facts, value):
        return None
    qualname = facts.qualname(value.func) or ""
    if qualname.startswith("keras.") or not isinstance(value.func, ast.Name):
        return value, scope
    factory = facts.module_defs.get(value.func.id)
    if not isinstance(factory, FunctionNode):
        return None
    for node in walk_same_scope(factory):
        if isinstance(node, ast.Return) and node.value is not None:
            if isinstance(node.value, ast.Name):
                for source in facts.assignments_in(factory).get(node.value.id, []):
                    if isinstance(source, ast.Assign):
                        found = _construction(facts, source.value, factory, depth + 1)
                        if found:
                            return found
            else:
                found = _construction(facts, node.value, factory, depth + 1)
                if found:
                    return found
    return None


def multi_output(facts: ModuleFacts, construction: ast.Call) -> bool:
    """``Model(inputs, [a, b])``: ``model(x)`` returns a list, ``predict`` a list of arrays. Also
    outputs named by a variable that holds a list, tuple or dict (``bbox_tensors = []``, appended
    to in a loop: a YOLOv3's three scales), unless it is one display of exactly one item."""
    outputs = construction.args[1] if len(construction.args) > 1 else keyword(construction, "outputs")
    if isinstance(outputs, ast.Name):
        assignment = facts.reaching_assignment(outputs)
        value = getattr(assignment, "value", None)
        if isinstance(value, (ast.ListComp, ast.DictComp)):
            return True
        if not isinstance(value, (ast.List, ast.Tuple, ast.Dict)):
            return False
        if _items(value) == 1 and not _grown(facts, outputs.id, construction):
            return False
        return True
    return isinstance(outputs, (ast.List, ast.Tuple, ast.Dict)) and _items(outputs) != 1


def _items(display: ast.List | ast.Tuple | ast.Dict) -> int:
    return len(display.keys) if isinstance(display, ast.Dict) else len(display.elts)


def _grown(facts: ModuleFacts, name: str, before: ast.Call) -> bool:
    """``name.append(...)`` (or ``.extend``, ``.insert``) above ``before``, in its scope."""
    scope = facts.enclosing_function(before)
    for call in facts.calls_named("append", "extend", "insert"):
        func = call.func
        if (isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert")
                and isinstance(func.value, ast.Name) and func.value.id == name
                and facts.enclosing_function(call) is scope and call.lineno < before.lineno):
            return True
    return False


# ---------------------------------------------------------------------- Keras 2 or 3
def target_keras(facts: ModuleFacts, settings: Settings) -> int | None:
    """The Keras a public import should use, telling Keras 2 from 3 as analysis/environment.py
    does, but ignoring ``tensorflow.python.keras`` itself (the import being replaced)."""
    configured = settings.keras_version
    if configured and str(configured)[0] in "23":
        return int(str(configured)[0])
    sources = facts.imports.keras_sources
    if "tf_keras" in sources:
        return 2
    if "keras" in sources:
        installed = major_minor(installed_version("keras"))
        return 3 if installed and installed[0] >= 3 else (2 if installed else None)
    return tf_keras_major()


def tf_before(major: int, minor: int) -> bool:
    version = major_minor(installed_version(*TENSORFLOW_DISTRIBUTIONS))
    return version is not None and version < (major, minor)


def tf_before_216() -> bool:
    return tf_before(2, 16)


# ---------------------------------------------------------------------- model size
_SMALL_LAYERS = {
    "Input", "InputLayer", "Dense", "Dropout", "Flatten", "Activation", "ReLU", "LeakyReLU", "Softmax",
    "BatchNormalization", "LayerNormalization", "Reshape", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
    "GlobalMaxPooling1D", "GlobalMaxPooling2D", "MaxPooling1D", "MaxPooling2D", "AveragePooling1D",
    "AveragePooling2D", "Conv1D", "Conv2D", "Rescaling", "Normalization",
}
MAX_UNITS = 256  # Dense units
MAX_FILTERS = 64  # Conv filters
MAX_KERNEL = 5
MAX_WEIGHTED_LAYERS = 6


def small_model(facts: ModuleFacts, construction: ast.Call, scope: ast.AST | None, *, listed: bool = False) -> str | None:
    """A short description ("3 layers, Dense(32) at most") when every layer that builds the model
    is visible, cheap and small; None when it is big or tfperf cannot see all of it.

    Built at module level, a model is judged only with ``listed`` (a rule that stays silent on
    small models): a module-level ``Sequential([...])`` that lists its layers, the way every
    beginner notebook builds one. A rule that reports small models leaves it out."""
    cache = facts.__dict__.setdefault("_tfperf_small_models", {})  # lives as long as one analysis
    if scope is None:
        # At module level only a Sequential that lists its layers shows all of them: a
        # functional model there mixes with the rest of the file's code.
        if not listed or (facts.qualname(construction.func) or "") not in _MODEL_BUILDERS or not _listed_layers(construction) \
                or not all(isinstance(e, ast.Call) for e in _listed_layers(construction)):
            return None
        if construction not in cache:
            cache[construction] = _small(facts, list(ast.walk(construction)))
        return cache[construction]
    if scope not in cache:
        cache[scope] = _small(facts, walk_same_scope(scope))
    return cache[scope]


def _small(facts: ModuleFacts, nodes: Iterable[ast.AST]) -> str | None:
    layers: list[tuple[ast.Call, str]] = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        qualname = facts.qualname(node.func) or ""
        if qualname.startswith("keras.layers."):
            layers.append((node, qualname))
        elif qualname.startswith("keras.applications.") or (not qualname and not _known_helper(node.func)):
            return None  # a pretrained or hand-written building block: its size is not visible
        elif not qualname.startswith(("keras.", "tensorflow.", "numpy.")) and qualname.rsplit(".", 1)[-1][:1].isupper():
            return None  # a class imported from another package (``from models.nlp import Transformer``)
        elif qualname in _MODEL_BUILDERS and any(isinstance(e, ast.Name) for e in _listed_layers(node)):
            return None  # Sequential([base_model, ...]): a model inside the model
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "add" and any(not isinstance(a, ast.Call) for a in node.args):
            return None  # model.add(base_model)
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "get_layer":
            return None  # ``loaded.get_layer('keras_layer_1')``: another model's layer (a frozen ALBERT), size not visible
    if not layers or any(facts.enclosing_loops(layer) for layer, _ in layers):
        return None  # layers built in a loop: their number is not visible
    weighted = 0
    widest = 0
    for layer, qualname in layers:
        kind = qualname.rsplit(".", 1)[1]
        if kind not in _SMALL_LAYERS:
            return None
        if kind == "Dense" or kind.startswith("Conv"):
            weighted += 1
            size = int_literal(layer.args[0] if layer.args else next((k.value for k in layer.keywords if k.arg in ("units", "filters")), None))
            limit = MAX_UNITS if kind == "Dense" else MAX_FILTERS
            if size is None or size > limit:
                return None
            if kind.startswith("Conv"):
                kernel = layer.args[1] if len(layer.args) > 1 else keyword(layer, "kernel_size")
                given: list[ast.expr | None] = list(kernel.elts) if isinstance(kernel, ast.Tuple) else [kernel]
                sizes = [int_literal(k) for k in given]
                if any(k is None or k > MAX_KERNEL for k in sizes):
                    return None
            widest = max(widest, size)
    if weighted == 0 or weighted > MAX_WEIGHTED_LAYERS:
        return None
    return f"{weighted} weighted layer{'s' if weighted > 1 else ''}, at most {widest} units"


_MODEL_BUILDERS = {"keras.Sequential", "keras.models.Sequential"}
_HELPERS = {"len", "range", "print", "int", "float", "tuple", "list", "dict", "zip", "min", "max", "isinstance"}


def _known_helper(func: ast.AST) -> bool:
    """Calls a factory may make besides Keras: builtins, methods (``model.compile``), and applying
    a layer it builds (``Dense(8)(x)``: the inner call is checked on its own)."""
    return isinstance(func, (ast.Attribute, ast.Call)) or (isinstance(func, ast.Name) and func.id in _HELPERS)


def _listed_layers(call: ast.Call) -> list[ast.AST]:
    first = call.args[0] if call.args else keyword(call, "layers")
    return list(first.elts) if isinstance(first, (ast.List, ast.Tuple)) else []



# TensorFlow Probability layers whose output is a distribution object, not a tensor.
_DISTRIBUTION_LAYERS = frozenset({
    "DistributionLambda", "IndependentNormal", "IndependentBernoulli", "IndependentLogistic", "IndependentPoisson",
    "MultivariateNormalTriL", "OneHotCategorical", "CategoricalMixtureOfOneHotCategorical", "MixtureSameFamily",
    "MixtureNormal", "MixtureLogistic",
})


def _distribution_layer(facts: ModuleFacts, node: ast.AST | None) -> bool:
    """``tfp.layers.DistributionLambda(...)``, or that layer applied (``...(...)(h)``)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
        node = node.func  # a layer applied to its input: look at the layer
    return isinstance(node, ast.Call) and _names_distribution_layer(facts.qualname(node.func) or "")


def _names_distribution_layer(qualname: str) -> bool:
    return qualname.startswith("tensorflow_probability.") and qualname.rsplit(".", 1)[-1] in _DISTRIBUTION_LAYERS


def outputs_distribution(facts: ModuleFacts, receiver: ast.expr, call: ast.Call) -> bool:
    """The model returns a TensorFlow Probability distribution (its last layer is one): a direct
    call hands back the distribution (no ``.numpy()``), and a ``tf.function`` cannot return it.
    A model built where tfperf cannot see counts when the file builds such a layer anywhere."""
    if not any(_names_distribution_layer(name) for name in facts.calls_by_qualname):
        return False
    built = model_construction(facts, receiver, call) if isinstance(receiver, ast.Name) else None
    if built is None:
        return True
    construction = built[0]
    listed = _listed_layers(construction)
    if listed:
        return _distribution_layer(facts, listed[-1])
    outputs = construction.args[1] if len(construction.args) > 1 else keyword(construction, "outputs")
    if isinstance(outputs, ast.Name):
        assignment = facts.reaching_assignment_at(outputs.id, construction)
        outputs = getattr(assignment, "value", None)
    return _distribution_layer(facts, outputs)
