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


def returns_model(facts: ModuleFacts, fn: ast.AST) -> bool:
    """The def ``fn`` returns a Keras model it builds (or a factory of this file builds)."""
    return _returns_model(facts, fn, 1)


def _returns_model(facts: ModuleFacts, fn: ast.AST, depth: int, index: int | None = None) -> bool:
    """``fn`` returns a model (``index``: the item ``index`` of the tuple it returns is one)."""
    assigned = facts.assignments_in(fn)
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if index is not None:
                if not (isinstance(value, ast.Tuple) and index < len(value.elts)):
                    continue
                value = value.elts[index]
            if creates_model(facts, value, depth):
                return True
            if isinstance(value, ast.Name):
                for source in assigned.get(value.id, []):
                    if isinstance(source, ast.Assign) and creates_model(facts, source.value, depth):
                        return True
    return False


def attribute_holds_model(facts: ModuleFacts, attribute: ast.expr) -> bool:
    """``self.actor`` holds a Keras model: a method of its class assigns it one built there
    (``self.actor = Model(...)``), by a local factory (``= build_actor()``), by a method of the
    class (``= self.build_actor()``), or unpacked from a factory that returns several models
    (``self.actor, self.critic = build(...)`` with ``return actor, critic``)."""
    if not (isinstance(attribute, ast.Attribute) and isinstance(attribute.value, ast.Name) and attribute.value.id == "self"):
        return False
    for value, index in facts.self_attribute_assignments(attribute):
        if index is None and creates_model(facts, value):
            return True
        factory = _factory_called(facts, value)
        if factory is not None and _returns_model(facts, factory, 1, index):
            return True
    return False


def _factory_called(facts: ModuleFacts, value: ast.expr) -> ast.AST | None:
    """The def of this file that the call ``value`` runs: ``build(...)`` a module-level def,
    ``self.build(...)`` a method of the class around the call."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        factory = facts.module_defs.get(func.id)
        return factory if isinstance(factory, FunctionNode) else None
    cls = facts.enclosing_class(value)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" and cls is not None:
        return next((s for s in cls.body if isinstance(s, FunctionNode) and s.name == func.attr), None)
    return None


def is_model_name(facts: ModuleFacts, name: ast.Name) -> bool:
    """``name`` (a Load) refers to a Keras model: its last assignment before this line makes one.

    ``net = get_net(); net(x); net = tf.function(net); net(x)``: the first call is a model, the
    second a tf.function.
    """
    assignment = facts.reaching_assignment(name)
    return isinstance(assignment, ast.Assign) and creates_model(facts, assignment.value)


# Calls that train a model: an optimizer step written by hand, and Keras' own training calls.
OPTIMIZER_STEPS = frozenset({"apply_gradients", "minimize"})
TRAINING_CALLS = OPTIMIZER_STEPS | {"train_on_batch", "fit"}
# Where pretrained networks come from: Keras' applications, TF Hub, and the ``from_pretrained`` /
# ``from_preset`` loaders of Hugging Face transformers and KerasHub.
_PRETRAINED_MODULES = ("keras.applications.", "tensorflow.python.keras.applications.", "tensorflow_hub.", "keras_hub.", "keras_nlp.", "keras_cv.")
_PRETRAINED_LOADERS = frozenset({"from_pretrained", "from_preset"})


def loads_pretrained_transformers(facts: ModuleFacts) -> bool:
    """The file loads a network with ``from_pretrained`` / ``from_preset`` (Hugging Face
    transformers, KerasHub): mostly transformers, whose layer norms, GELUs and softmaxes XLA fuses,
    unlike the convolutions of ``keras.applications`` and most TF Hub image models."""
    return any(isinstance(call.func, ast.Attribute) and call.func.attr in _PRETRAINED_LOADERS for call in facts.calls)


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
    for call in facts.calls_named("add"):
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


def holds_pretrained(facts: ModuleFacts, expr: ast.expr) -> bool:
    """``builds_on_pretrained`` for a name, or for ``self.model``: what the class's methods assign
    to it, following a parameter of ``__init__`` to what the file's constructor calls pass
    (``FeatureExtractor(model=VGG16(...))``, or a name bound to one)."""
    if isinstance(expr, ast.Name):
        return builds_on_pretrained(facts, expr)
    if isinstance(expr, ast.Call):
        return _uses_pretrained(facts, expr, 0)
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"):
        return False
    for value in facts.self_attribute_values(expr):
        if isinstance(value, ast.Call) and _uses_pretrained(facts, value, 0):
            return True
        if isinstance(value, ast.Name) and (builds_on_pretrained(facts, value)
                                            or any(holds_pretrained(facts, a) for a in _constructor_arguments(facts, value))):
            return True
    return False


def _constructor_arguments(facts: ModuleFacts, parameter: ast.Name) -> list[ast.expr]:
    """The arguments the file's ``Cls(...)`` calls pass for a parameter of ``Cls.__init__`` (names
    and calls: what ``holds_pretrained`` can follow)."""
    method = facts.enclosing_function(parameter)
    if method is None or method.name != "__init__":
        return []
    cls = facts.enclosing_class(method)
    if cls is None:
        return []
    params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)][1:]  # after self
    if parameter.id not in params and parameter.id not in {a.arg for a in method.args.kwonlyargs}:
        return []
    found: list[ast.expr] = []
    for call in facts.calls_named(cls.name):
        if not (isinstance(call.func, ast.Name) and call.func.id == cls.name):
            continue
        given = next((k.value for k in call.keywords if k.arg == parameter.id), None)
        if given is None and parameter.id in params and params.index(parameter.id) < len(call.args):
            given = call.args[params.index(parameter.id)]
        if isinstance(given, (ast.Name, ast.Call)):
            found.append(given)
    return found


def calls_pretrained_model(facts: ModuleFacts, body: ast.AST, depth: int = 0,
                           also: Callable[[ast.expr], bool] | None = None) -> bool:
    """``body`` (a step) calls a model that is, or wraps, a pretrained network (``model(x)`` with
    ``model = Sequential([hub.KerasLayer(...), Dense(5)])``, ``self.style_model(x)``), itself or
    through a method of its class it calls (``self._calc_outputs(image)``): its convolutions set
    the pace. ``also``: a further test of a callee (a model built in another file of the project)."""
    for node in walk_same_scope(body):
        if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
            continue
        if holds_pretrained(facts, node.func) or also is not None and also(node.func):
            return True
        func = node.func
        if depth < 2 and (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
                          or isinstance(func, ast.Name)):
            # a method of its class, or a helper of the file (``loss = compute_loss(image)``)
            helper = facts.resolve_def(func, node)
            if helper is not None and helper is not body and calls_pretrained_model(facts, helper, depth + 1, also):
                return True
    return False


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
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and isinstance(node.ctx, ast.Load) and depth < 3:
            # ``Model([self.model.input], outputs)`` with ``self.model = VGG19(weights="imagenet")``
            if any(isinstance(v, ast.Call) and _loads_pretrained(facts, v) for v in facts.self_attribute_values(node)):
                return True
        if not isinstance(node, ast.Call):
            continue
        if _loads_pretrained(facts, node):
            return True
        if isinstance(node.func, ast.Name) and depth < 3:
            factory = facts.module_defs.get(node.func.id)
            if isinstance(factory, FunctionNode) and _uses_pretrained(facts, factory, depth + 1):
                return True
            if any(_uses_pretrained(facts, init, depth + 1) for init in _constructors(facts, node.func.id)):
                return True  # ``StyleContentModel(layers)`` whose ``__init__`` sets ``self.vgg = vgg_layers(...)``
            if any(isinstance(a, ast.Assign) and isinstance(a.value, ast.Call) and _loads_pretrained(facts, a.value)
                   for a in facts.module_assignments.get(node.func.id, [])):
                return True
    return False


_FUNCTIONAL_DEPTH = 6


def _constructors(facts: ModuleFacts, name: str) -> list[ast.AST]:
    """The ``__init__`` of the module-level class ``name``, if the file defines one."""
    return [method for cls in facts.classes if cls.name == name and facts.scope_of(cls) is None
            for method in cls.body if isinstance(method, FunctionNode) and method.name == "__init__"]


def _applies_pretrained(facts: ModuleFacts, call: ast.Call, depth: int) -> bool:
    """``layer(...)(x)``: a layer applied to a tensor; pretrained if the layer is (``hub.KerasLayer(
    url)(inputs)``) or the tensor comes from one."""
    if not isinstance(call.func, ast.Call):
        return False
    return _loads_pretrained(facts, call.func) or any(_uses_pretrained(facts, arg, depth) for arg in call.args)


def _loads_pretrained(facts: ModuleFacts, call: ast.Call) -> bool:
    if isinstance(call.func, ast.Attribute) and call.func.attr in _PRETRAINED_LOADERS:
        return True
    qualname = facts.qualname(call.func) or ""
    return qualname.startswith(_PRETRAINED_MODULES) or qualname == _SAVED_MODEL_LOAD


# A SavedModel restored as trackable functions: trained elsewhere, and its functions are graphs.
_SAVED_MODEL_LOAD = "tensorflow.saved_model.load"


def definition_builds_on_pretrained(facts: ModuleFacts, node: ast.AST, depth: int = 0) -> bool:
    """A def or class (of another file of the project, read for its importer) that builds on a
    pretrained network anywhere in it, nested defs included (``Backbone()`` returning
    ``ResNet50(weights='imagenet')``), or through a def or class of its module that it calls."""
    for inner in ast.walk(node):
        if not isinstance(inner, ast.Call):
            continue
        if _loads_pretrained(facts, inner):
            return True
        if depth < 2 and isinstance(inner.func, ast.Name):
            target = facts.module_defs.get(inner.func.id) or next(
                (c for c in facts.classes if c.name == inner.func.id and facts.scope_of(c) is None), None)
            if target is not None and target is not node and definition_builds_on_pretrained(facts, target, depth + 1):
                return True
    return False


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

