"""Which names hold Keras models: built by a constructor, a subclass of ``keras.Model``, or a
local factory function that returns one (``net = get_net()``)."""
from __future__ import annotations

import ast
from collections.abc import Callable

from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, target_names, walk_same_scope

MODEL_CONSTRUCTORS = frozenset(
    {
        "keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model",
        "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    }
)
MODEL_BASES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential"})


def model_classes(facts: ModuleFacts) -> set[str]:
    """Classes in this module that subclass a Keras model (directly or through each other)."""
    return subclasses(facts, MODEL_BASES.__contains__)


def keras_classes(facts: ModuleFacts) -> set[str]:
    """Classes in this module that subclass any Keras class (a model, a layer...), directly or
    through each other (``class CustomTraining(MyModel)``, ``class MyModel(tf.keras.Model)``)."""
    return subclasses(facts, lambda qualname: qualname.startswith("keras."))


def subclasses(facts: ModuleFacts, is_base: Callable[[str], bool]) -> set[str]:
    """Names of the classes in this module with a base whose qualified name ``is_base`` accepts,
    directly or through each other."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in facts.classes:
            if cls.name in found:
                continue
            for base in cls.bases:
                if is_base(facts.qualname(base) or "") or (isinstance(base, ast.Name) and base.id in found):
                    found.add(cls.name)
                    changed = True
                    break
    return found


def creates_model(facts: ModuleFacts, expr: ast.AST | None, _depth: int = 0) -> bool:
    """``expr`` evaluates to a Keras model we can recognise."""
    if not isinstance(expr, ast.Call):
        return False
    qualname = facts.qualname(expr.func)
    if qualname in MODEL_CONSTRUCTORS or (qualname or "").startswith("keras.applications."):
        return True
    if isinstance(expr.func, ast.Name):
        if expr.func.id in _model_classes_cached(facts):
            return True
        factory = facts.module_defs.get(expr.func.id)
        if isinstance(factory, FunctionNode) and _depth < 3:
            return _returns_model(facts, factory, _depth + 1)
    return False


def _returns_model(facts: ModuleFacts, fn: ast.AST, depth: int) -> bool:
    assigned = facts.assignments_in(fn)
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if creates_model(facts, value, depth):
                return True
            if isinstance(value, ast.Name):
                for source in assigned.get(value.id, []):
                    if isinstance(source, ast.Assign) and creates_model(facts, source.value, depth):
                        return True
    return False


def is_model_name(facts: ModuleFacts, name: ast.Name) -> bool:
    """``name`` (a Load) refers to a Keras model: its last assignment before this line makes one.

    ``net = get_net(); net(x); net = tf.function(net); net(x)``: the first call is a model, the
    second a tf.function.
    """
    assignment = facts.reaching_assignment(name)
    return isinstance(assignment, ast.Assign) and creates_model(facts, assignment.value)


# Where pretrained networks come from: Keras' applications, TF Hub, and the ``from_pretrained`` /
# ``from_preset`` loaders of Hugging Face transformers and KerasHub.
_PRETRAINED_MODULES = ("keras.applications.", "tensorflow_hub.", "keras_hub.", "keras_nlp.", "keras_cv.")
_PRETRAINED_LOADERS = frozenset({"from_pretrained", "from_preset"})


def builds_on_pretrained(facts: ModuleFacts, name: ast.Name) -> bool:
    """The model ``name`` holds is, or wraps, a pretrained network (``ResNet50(weights=...)``,
    ``hub.KerasLayer``, ``TFCLIPVisionModel.from_pretrained``): built by the expression of its
    reaching assignment, by the local factory that expression calls, or by a module-level
    pretrained network that factory calls (``x = clip_vision(inputs)``); or built on a name that
    holds one (``Model(inputs=base.input, ...)`` with ``base = MobileNetV2(...)``)."""
    assignment = facts.reaching_assignment(name)
    if not isinstance(assignment, ast.Assign):
        return False
    cache = facts.__dict__.setdefault("_tfperf_pretrained", {})
    if assignment not in cache:
        cache[assignment] = _uses_pretrained(facts, assignment.value, 0) or _given_pretrained_layers(facts, name.id)
    return cache[assignment]


def _given_pretrained_layers(facts: ModuleFacts, name: str) -> bool:
    """``new = Sequential()`` then ``for layer in vgg.layers: new.add(layer)`` with ``vgg =
    VGG16()``: the model is made of a pretrained network's layers."""
    for call in facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "add" and isinstance(func.value, ast.Name)
                and func.value.id == name):
            continue
        for argument in call.args:
            loop = next((a for a in facts.ancestors(call) if isinstance(a, (ast.For, ast.AsyncFor))
                         and isinstance(argument, ast.Name) and argument.id in target_names(a.target)), None)
            if loop is not None and _uses_pretrained(facts, loop.iter, 0):
                return True
    return False


def calls_pretrained_model(facts: ModuleFacts, body: ast.AST) -> bool:
    """``body`` (a step) calls a model that is, or wraps, a pretrained network (``model(x)`` with
    ``model = Sequential([hub.KerasLayer(...), Dense(5)])``): its convolutions set the pace."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and builds_on_pretrained(facts, node.func)
               for node in walk_same_scope(body))


def _uses_pretrained(facts: ModuleFacts, code: ast.AST, depth: int) -> bool:
    for node in walk_same_scope(code):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and depth < _FUNCTIONAL_DEPTH:
            # ``Model(inputs=base.input, outputs=head(base.output))`` with ``base = MobileNetV2(...)``,
            # and the functional graph back from the outputs (``x = hub.KerasLayer(...)(inputs)``,
            # ``out = Dense(4)(x)``, ``Model(inputs, out)``), a few layers deep
            source = facts.reaching_assignment(node)
            if isinstance(source, ast.Assign) and isinstance(source.value, ast.Call) and (
                    _loads_pretrained(facts, source.value) or _applies_pretrained(facts, source.value, depth + 1)):
                return True
        if not isinstance(node, ast.Call):
            continue
        if _loads_pretrained(facts, node):
            return True
        if isinstance(node.func, ast.Name) and depth < 3:
            factory = facts.module_defs.get(node.func.id)
            if isinstance(factory, FunctionNode) and _uses_pretrained(facts, factory, depth + 1):
                return True
            if any(isinstance(a, ast.Assign) and isinstance(a.value, ast.Call) and _loads_pretrained(facts, a.value)
                   for a in facts.module_assignments.get(node.func.id, [])):
                return True
    return False


_FUNCTIONAL_DEPTH = 6


def _applies_pretrained(facts: ModuleFacts, call: ast.Call, depth: int) -> bool:
    """``layer(...)(x)``: a layer applied to a tensor; pretrained if the layer is (``hub.KerasLayer(
    url)(inputs)``) or the tensor comes from one."""
    if not isinstance(call.func, ast.Call):
        return False
    return _loads_pretrained(facts, call.func) or any(_uses_pretrained(facts, arg, depth) for arg in call.args)


def _loads_pretrained(facts: ModuleFacts, call: ast.Call) -> bool:
    if isinstance(call.func, ast.Attribute) and call.func.attr in _PRETRAINED_LOADERS:
        return True
    return (facts.qualname(call.func) or "").startswith(_PRETRAINED_MODULES)


def one_call_per_model(facts: ModuleFacts, loops: list[ast.AST], name: str) -> bool:
    """A single loop whose target is the model (``for name, model in models.items():
    model.predict(x)``): each call is on another model, once; nothing repeats on one model."""
    return len(loops) == 1 and name in facts.loop_targets(loops[0])


def assigned_in(loop: ast.AST, name: str) -> bool:
    for stmt in getattr(loop, "body", []):
        for node in walk_same_scope(stmt):
            if isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                return True
    return False


def _model_classes_cached(facts: ModuleFacts) -> set[str]:
    # Cached on the facts object: it lives exactly as long as one analysis.
    cached = facts.__dict__.get("_tfperf_model_classes")
    if cached is None:
        cached = model_classes(facts)
        facts.__dict__["_tfperf_model_classes"] = cached
    return cached

