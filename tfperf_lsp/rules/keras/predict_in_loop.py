"""TFP801: ``model.predict`` on small inputs inside a loop: ``model(x, training=False)`` is direct."""
from __future__ import annotations

import ast
import re
from functools import partial
from typing import TYPE_CHECKING, Iterator, cast

from tfperf_lsp.analysis.astutil import enumerated, first_line, int_value, keyword
from tfperf_lsp.analysis.facts import ModuleFacts, neighbour, target_names, walk_same_scope
from tfperf_lsp.analysis.loopcarry import Carry, LoopFlow
from tfperf_lsp.analysis.models import TRAINING_CALLS, assigned_in, model_classes, one_call_per_model, returns_model
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import (CLOCKS, DATASET_SOURCES, DATASET_TRANSFORMATIONS, RECURRENT_LAYERS, built_by_imported, imported_class_defines,
                                     holds_pretrained_model, keras_layer, keras_layers_in_file, reads_a_clock)
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import (keras_predict_call, model_construction, multi_output, other_keras_backend, outputs_distribution,
                                          overrides, receiver_kind, uses_tensorflow)

if TYPE_CHECKING:
    import libcst as cst
else:
    from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built

_ONE_SAMPLE = {"numpy.expand_dims", "tensorflow.expand_dims"}
_STACKERS = {"numpy.array", "numpy.asarray", "numpy.stack", "tensorflow.stack", "tensorflow.constant"}
SMALL_BATCH = 32  # predict's default batch size: below it, model(x) holds no more in memory


class PredictInLoop(Rule):
    code = "TFP801"
    name = "predict-in-loop"
    category = "keras"
    severity = Severity.WARNING
    summary = "model.predict called in a loop on small inputs: call the model directly"
    doc_url = "https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call"
    fixable = True
    docs = """
    ## What it does
    Finds `model.predict(x)` inside a Python loop or comprehension (in eager code) where `model`
    is a Keras model: built in this file (`Sequential`, `Model`, a subclass, a local factory;
    also held in `self.actor`, assigned one by a method of its class, by a factory method
    `self.build_actor()`, or unpacked from a factory that returns several models: `self.actor,
    self.critic = build(...)`), or called with a Keras-only keyword (`verbose=`, `batch_size=`,
    ...), or, at information level, a model-like name in a file that uses Keras and no other ML
    library. Also `model.predict(x)` in a def with no loop of its own (an agent's `act(state)`, a
    DQN's `replay()`) that a loop of the file calls on every iteration, by name, as
    `self.act(...)`, or as `agent.act(...)` / `self.actor.act(...)` on an object of the def's
    class, directly or through up to two such defs (`get_action` calls `self.predict(state)`,
    which calls `self.model.predict`): each step pays the same setup. That second form stays
    silent where the loop is short, timed, once per epoch, or in a def the file never calls
    itself (a widget's callback); where `predict`, or a call on the way to it, sits under an `if`
    on the episode's end (`if done: self.replay()`) or a step count (`if step % 100 == 0`); where
    a def on the way also fits for whole epochs or reads a clock; for `predict(...,
    batch_size=...)`; and for the models the loop form leaves alone (pretrained, recurrent, with
    their own `predict`).

    ## Why is this slow
    Every `predict` call builds a data adapter and an iterator, runs a (cached) `tf.function`
    over batches, and concatenates the results: fixed costs that dwarf a one-sample forward pass.
    The `predict` docstring says it is meant for large inputs, not for use inside loops; Keras'
    FAQ recommends `model(x)` for small inputs. Measured over 50 calls: 1953 ms with
    `predict`, 60.7 ms with `model(x)`, 18.7 ms with `tf.function(model)`.

    ## When it stays silent
    In TensorFlow 1 graph code (a `Session`, `disable_eager_execution`): a direct call of the model
    returns a symbolic tensor there. In a file that does not import TensorFlow (standalone Keras
    2.2 or 2.3 on TensorFlow 1 graphs, where `predict` is a cheap session run and the direct
    call's `.numpy()` does not exist; or Keras 3 on a backend the file does not name). In a file that runs Keras 3 on another backend
    (`os.environ["KERAS_BACKEND"] = "jax"`): Keras compiles `predict` with that backend, and a
    direct call runs op by op (measured on JAX: 2.9 ms a `predict` against 117 ms a direct call of a
    GRU model). For a single `predict` call outside a loop; inside a `tf.function`; when the model
    is re-created in the loop, or is what a single loop iterates over (`for m in models:
    m.predict(x)`: each call is on another model); for `.predict` of objects that are not visibly
    Keras (scikit-learn estimators: no Keras keyword, or the file imports sklearn), and of objects
    of a class of the file that defines its own `predict` or has no base (`self.target_model =
    QNetwork(...)`, a wrapper whose `predict` is its own method). For a model that is or wraps a
    pretrained network (`keras.applications`, TF Hub, `from_pretrained`, also through a builder
    imported from another file of the project): its compute sets the pace,
    and a direct call was slower than `predict` (InceptionV3, one 299x299 image on a CPU: 190 ms
    against 169 ms). In a file that works on 3D volumes (NIfTI or DICOM scans, `Conv3D`): each
    call runs a 3D network on a whole scan read from disk for it, seconds against a few
    milliseconds of setup, and scans of different shapes cannot be stacked. For loops over a handful of items (`for x in ds.take(1)`, `for c in range(3)`),
    and for calls the code runs at most 50 times in all (`for s in random.sample(texts, 10)`, a
    forecast of `INTO_FUTURE = 14` steps called once, a 7x7 grid of `np.linspace` points drawn
    once): a second or two of setup, once; and calls that
    wait for the user on every run (an interactive demo that asks `input("Continue?")`) (a loop
    timed from outside, `t0 = time()` right before it, stays reported: it measures that setup). For
    calls that run once per epoch beside the inner loop that trains (`train_on_batch`, `fit`,
    `apply_gradients`: validation on the whole set, or a sample generated in a def the epoch loop
    calls there), beside a `fit` of several epochs in the same loop body (`fit(x, y, epochs=5000)`
    then `predict(x)` to print the error), or only on some iterations (`if epoch == 0:`,
    `if step % 100 == 0:`), and loops that draw what they predict (`plt.imshow`, `display(...)`). For a
    benchmark of `predict` itself: the same input every time, in a loop that reads a clock on each
    iteration, and the warm-up loop right before it. For rows predicted chunk by chunk outside a
    training loop (`x[i * b:(i + 1) * b]`, or `x[i:i + b]` with `range(0, n, b)`, `b` above 32), for
    a tile of every row (`images[:, e:f, g:h, :]`, unless the array was made with one row), for one
    call per cross-validation fold (`for train, test in folds.split(X, y)`, scikit-learn's splitters), and
    a generator or `Sequence` read by workers (`workers=`, `use_multiprocessing=`). For `predict` on a `tf.data` pipeline (built in
    the call, or bound to a name: `slices = ds.batch(64)`, `image_dataset_from_directory`), with a
    `batch_size` above predict's default of 32 (`predict(chunk, batch_size=100)`: large inputs,
    batched on purpose), on the
    inputs of the (inputs, labels) pairs a loader yields (`for x_true, y_true in data:`), and on the
    elements of a `tf.data` pipeline as they come (`for images, masks in test_ds.take(5):`, or
    `inputs, labels = batch` in the body): each call gets a batch, often padded to its own
    length, so the calls cannot be joined. In a file that builds TensorFlow Probability layers: a
    direct call returns a distribution object, not an array. For a recurrent model (an `LSTM`,
    `GRU`, `SimpleRNN`... in its `Sequential` or factory, or in the file when the model is built
    elsewhere; or a model loaded from a file or built in another module, in a file that names a
    recurrent network: `load_model("models/lstm.h5")`) it does not suggest calling the model directly: that runs its time loop op by op,
    much faster than `predict` only for a one-step input and much slower on a long sequence
    (measured on a CPU, one sample: sequence 1, LSTM(256) decoder: predict 53 ms, direct call 4 ms,
    `tf.function` 0.4 ms; sequence 10, LSTM(20): 44, 39 and 0.9 ms; sequence 100, LSTM(128): 48,
    310 and 5.7 ms). It suggests a `tf.function` of the model, made
    once before the loop, without a fix, when each input is built from earlier iterations (text
    generation appends what it predicted), and stacking the inputs into one `predict` when they do
    not depend on each other (a forecast over sliding windows of a series). Without a fix, an input
    built from earlier iterations gets the direct call or a `tf.function` of the model, never "batch
    the inputs".

    In a loop that also trains the predicting model (its own `fit` or `train_on_batch`, or a
    combined model built on it, as a GAN's generator inside `gan`), the message does not suggest
    joining the calls: the weights change between them. A model that only another model's
    training runs beside (a DQN's target network) keeps that advice.

    ## Fix
    `model(x, training=False).numpy()`. Marked unsafe; offered only when:
    - the input is visibly small: one sample (`x[None, :]`, `np.expand_dims(x, 0)`,
      `x.reshape(1, -1)`, `np.array([x])`) or a slice of at most 32 rows (`x[i:i + 8]`):
      `predict` splits inputs into batches of 32, `model(x)` runs the whole input at once, so
      a large `x` would need more memory;
    - `predict` gets only the input and `verbose` (no `batch_size`, `steps`, `callbacks`:
      callbacks would be lost);
    - the model is not built with several outputs (then `model(x)` returns a list, and `.numpy()`
      would fail: convert each output);
    - nothing says the model may be deep: built outside this file (`self.model` that no method of
      the class here assigns, a model imported or made by a builder imported from the project), or
      built here on another network (`Model(input_layer, ...)` after `YOLOv3(input_layer)` from
      the project, `Model(inputs=bert.inputs, ...)`). Called directly, a deep model runs its layers
      one by one (a 400-layer YOLOv4 took 469 ms a call, against 106 ms for `predict` and 67 ms for
      a `tf.function`; a 12-layer transformer 138, 69 and 12 ms). The hint then names a
      `tf.function` of the model made once first, and the direct call for a small one.
    `training=False` keeps inference behaviour (dropout off, batch-norm statistics frozen), as in
    `predict`; `.numpy()` keeps the NumPy result type (`model(x)` returns a tensor).
    The rewrite is the same for Keras 3 and Keras 2 (`tf.keras` before TF 2.16, `tf_keras`).
    Outputs are equal within float tolerance (checked under TensorFlow). Otherwise the finding
    is a hint at information level: batch the inputs into one `predict`, or call the model. For
    an input built from earlier iterations, the hint names `tf.function(model,
    reduce_retracing=True)`: such an input may grow (`seq = tf.concat([seq, note], axis=1)`, or a
    decoder's token lists padded to a common length) and a plain `tf.function` traces every new
    length (measured: 132 ms a call against `predict`'s 49 ms, 10 ms with `reduce_retracing`; on
    a transformer's decoding loop 17.9 s against `predict`'s 5.6 s and 2.1 s), while with one
    shape it traces once either way. The message says the input grows when tfperf sees it grow;
    not for a window that drops as much as it appends (`np.append(batch[:, 1:], [[y]], axis=1)`,
    `pattern.append(i)` then `pattern = pattern[1:]`), the last item of a growing list
    (`predictions[-1]`), a text padded to `maxlen` or passed through a layer tfperf does not
    size (a `TextVectorization` may pad): those keep one shape, or may. An input counts as built
    from earlier iterations when it reads a value the loop changes and this iteration has not set yet (a token list appended to after the call, a table
    the prediction is written into); one rebuilt from the loop's item (`sample =
    sample.reshape(1, -1)`) is this iteration's own.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            tf.keras.utils.set_random_seed(0)
            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)])
            samples = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
            outputs = []
            for sample in samples:
                outputs.append(model.predict(sample[None, :], verbose=0))  # one row at a time
            predictions = np.concatenate(outputs)
            """,
            verify_fixed="assert isinstance(outputs[0], np.ndarray)",
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
            predictions = model.predict(np.zeros((8, 4)), verbose=0)  # one call, batched
            for seed in range(3):
                fresh = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
                fresh.predict(np.zeros((1, 4)), verbose=0)  # a new model each time
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if other_keras_backend(facts):
            return  # Keras on JAX or PyTorch compiles predict itself; a direct call runs op by op
        if ctx.hot.tf1_graph_mode:
            return  # TensorFlow 1 graphs: a direct call returns a symbolic tensor, with no .numpy()
        tf_file = uses_tensorflow(facts)
        if not tf_file and ctx.workspace is None:
            return  # standalone Keras without TensorFlow: Keras 2.2/2.3 on TF 1 graphs (``model(x)`` is
            # symbolic, ``predict`` a cheap session run), or Keras 3 on a backend the file does not name
            # (``.numpy()`` may not exist)
        for call in facts.calls_named("predict"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "predict") or not keras_predict_call(call):
                continue  # not Keras' predict (``model.predict(users, items, is_list=True)``: a recommender's own)
            loops = facts.enclosing_loops(call)
            if not loops or facts.in_tf_function(call) is not None or not ctx.hot.repeats(call):
                continue  # not in a loop, traced, or a loop of a handful of items (``ds.take(1)``)
            if ctx.hot.runs_few_times([call], FEW_PREDICTS) and not _timed_from_outside(facts, loops[0]):
                continue  # ``for s in random.sample(texts, 10)``: a second of setup at most, in all
            if ctx.hot.paced_by_user(call):
                continue  # each run waits for a keypress (``input("Continue?")``): the user sets the pace
            receiver = func.value
            kind = receiver_kind(facts, call) if tf_file else _tf_model_from_project(ctx, receiver)
            if kind is None:
                continue
            if overrides(facts, receiver, "predict") or imported_class_defines(ctx, receiver, "predict"):
                continue  # the model's class (here or in another file) defines its own predict (``class DB_VAE(Model): def predict``)
            if holds_pretrained_model(ctx, receiver):
                continue  # a pretrained network (InceptionV3 on 299x299 images): its compute, not predict's setup, sets the pace
            if _volumetric(facts):
                continue  # one 3D scan per call (a brain MRI): the network on the whole volume and its loading set the pace
            if isinstance(receiver, ast.Name) and (any(assigned_in(loop, receiver.id) for loop in loops)
                                                   or one_call_per_model(facts, loops, receiver.id)):
                continue
            name = ast.unparse(receiver)
            x = call.args[0] if call.args else keyword(call, "x")
            if outputs_distribution(facts, receiver, call):
                continue  # TFP layers: a direct call returns a distribution object, not an array
            if ctx.hot.on_some_iterations(call) or ctx.hot.beside_a_training_loop(loops[0], call, through_steps=False) \
                    or ctx.hot.runs_beside_training(call):
                continue  # once per epoch (validation, or a sample in a def called beside the step loop), or under ``if epoch == 0``
            if _beside_a_long_fit(facts, loops[0]):
                continue  # ``fit(..., epochs=5000)`` then ``predict(x)`` to report: the fit sets the pace
            if x is not None and (_times_the_same_call(facts, loops[0], x) or _warms_up_a_timed_loop(facts, loops[0], x)):
                continue  # a benchmark of predict itself (or its warm-up): the repeats are the point
            if x is not None and (_a_dataset(facts, x) or _a_field_of_a_loop_record(facts, loops, x)
                                  or _inputs_of_yielded_pairs(facts, loops[0], x)
                                  or _an_element_of_a_dataset(facts, loops[0], x)):
                continue  # predict on a dataset, or on each batch a loader or a tf.data pipeline yields
            if _large_batch_size(facts, call):
                continue  # ``predict(chunk, batch_size=100)``: large inputs, batched on purpose
            if _over_folds(facts, loops[0]):
                continue  # ``for train_idx, test_idx in folds.split(X, y)``: a few folds, each predicting a whole split
            if x is not None and (_chunk_of_rows(facts, x) or _every_row(facts, x)) and not ctx.hot.trains(loops[0], through_steps=False):
                continue  # ``predict(x[i * b:(i + 1) * b])`` chunk by chunk, not beside a training step: batched
                # inference (each call pays its setup once per batch of rows, as predict itself would)
            flow = LoopFlow(facts, loops[0]).carry(x) if x is not None and isinstance(loops[0], _LOOPS) else Carry()
            # the weights change between calls: they cannot be joined (unless only another model
            # trains there: a DQN's target network predicts beside ``self.model.fit``)
            trains = ctx.hot.trains(loops[0], through_steps=False) and not _trains_other_models_only(facts, loops[0], receiver)
            stateful = x is not None and _stateful(facts)
            carried = flow.carried or stateful or trains
            grows = flow.grows  # an input the loop makes longer every time: one trace per length
            if _recurrent(facts, receiver, call):
                # Called directly, a recurrent model runs its time loop op by op: no faster than
                # predict on a short sequence, much slower on a long one; a graph of it is fast.
                # Inputs that do not depend on each other are best predicted in one call.
                yield self.finding(
                    ctx, call,
                    f"`{name}.predict` runs in a loop, paying its setup on every call: `{name}` is recurrent, "
                    f"and called directly it runs its time loop op by op (slower than `predict` on long sequences); "
                    + (f"call a {_graph_of(name, carried)} made once before the loop instead{_growth_note(grows)}"
                       if carried or x is None else
                       "its inputs do not depend on earlier iterations: stack them and call `predict` once"),
                    label="predict in loop",
                    severity=Severity.INFORMATION,
                )
                continue
            size = _small_input(facts, x, loops) if x is not None else None
            blocker = _fix_blocker(facts, call, kind, receiver)
            deep = _size_unknown(facts, receiver, call)
            if size and not blocker and deep is None:
                yield self.finding(
                    ctx, call,
                    f"`{name}.predict` on {size} per iteration pays predict's setup on every call: "
                    f"`{name}(x, training=False).numpy()` runs the model directly",
                    label="predict in loop",
                    fix=partial(_call_directly, ctx, call, f"Call {name}(..., training=False).numpy()"),
                    fix_title=f"Call {name}(..., training=False).numpy()",
                    fix_applicability="unsafe",
                )
                continue
            x_text = ctx.source.segment(x) if x is not None else "x"
            direct = _direct_call_text(facts, call, name, x, x_text, blocker)
            # the direct call alone, where the advice names no graph of the model
            alone = _graph_or_direct(name, direct, deep) if deep else direct
            loop = loops[-1]
            # ``for item in items``, the input the item (``predict(item)``) or made from it first
            # (``sample = sample.reshape(1, -1)``)
            item_loop = loop if isinstance(loop, ast.For) and x is not None and not trains and (
                _is_loop_item(facts, loop, x) or len(loops) == 1 and flow.from_item and not carried) else None
            over = ctx.source.segment(item_loop.iter) if item_loop is not None else None
            if item_loop is not None and not (isinstance(item_loop.iter, ast.Call) and isinstance(item_loop.iter.func, ast.Name)):
                message = (f"`{name}.predict` runs once per item of `{over}`, paying its setup each time: call "
                           f"`{name}.predict` once on all of it (a batched dataset or array), or "
                           f"{alone} inside the loop")
            elif trains and not flow.carried:
                message = (f"`{name}.predict` runs in a loop that also trains, paying its setup on every call (the "
                           f"weights change between calls, so they cannot be joined): call "
                           f"{_direct_then_graph(name, direct, grows, deep)}{_growth_note(grows)}")
            elif carried:
                why = "on an input built from earlier iterations" if flow.carried or not stateful else \
                    "on a stateful model (each call goes on from the state the last one left)"
                message = (f"`{name}.predict` runs in a loop, paying its setup on every call, {why}: call "
                           f"{_direct_then_graph(name, direct, True, deep)}{_growth_note(grows)}")
            else:
                message = (f"`{name}.predict` runs in a loop, paying its setup on every call: if `{x_text}` is small, call "
                           f"{alone}; otherwise batch the inputs into one `predict`")
            yield self.finding(
                ctx, call,
                message,
                label="predict in loop",
                severity=Severity.INFORMATION,
            )
        yield from self._in_a_def_called_every_step(ctx, tf_file)

    def _in_a_def_called_every_step(self, ctx: RuleContext, tf_file: bool) -> Iterator[Finding]:
        """``predict`` in a def with no loop of its own (an agent's ``act(state)``) that a loop
        calls on every iteration: each step pays predict's setup just the same."""
        facts = ctx.facts
        for call in facts.calls_named("predict"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "predict") or facts.enclosing_loops(call) \
                    or not keras_predict_call(call):
                continue
            fn = facts.enclosing_function(call)
            if fn is None or facts.in_tf_function(call) is not None or _periodic_in(facts, call, fn):
                continue
            if _fits_for_epochs(facts, fn) or reads_a_clock(facts, fn):
                continue  # the def trains for whole epochs (``fit(..., epochs=100)``, then one predict),
                # or times its own predict (a benchmark)
            site = _called_every_step(ctx, fn)
            if site is None:
                continue
            receiver = func.value
            kind = receiver_kind(facts, call) if tf_file else _tf_model_from_project(ctx, receiver)
            if kind is None:
                continue
            if overrides(facts, receiver, "predict") or imported_class_defines(ctx, receiver, "predict") \
                    or holds_pretrained_model(ctx, receiver) or outputs_distribution(facts, receiver, call):
                continue  # the same exemptions as a predict written in the loop
            if _recurrent(facts, receiver, call):
                continue  # a direct call runs a recurrent model's time loop op by op: no gain
            x = call.args[0] if call.args else keyword(call, "x")
            if x is not None and _a_dataset(facts, x) or keyword(call, "batch_size") is not None:
                continue  # a dataset, or a large input batched on purpose (``batch_size=1000``)
            name = ast.unparse(receiver)
            x_text = ctx.source.segment(x) if x is not None else "x"
            direct = _direct_call_text(facts, call, name, x, x_text, _fix_blocker(facts, call, kind, receiver))
            deep = _size_unknown(facts, receiver, call)
            advice = f"call {_graph_or_direct(name, direct, deep)}" if deep else f"call {direct} instead"
            line = first_line(facts.enclosing_loops(site)[0])
            called = getattr(site.func, "attr", None) or getattr(site.func, "id", fn.name)
            where = f"on every call of `{fn.name}`, which the loop on line {line} calls" if called == fn.name else \
                f"in `{fn.name}`, which `{called}` calls, and the loop on line {line} calls `{called}`"
            yield self.finding(
                ctx, call,
                f"`{name}.predict` runs {where} on every iteration, paying predict's setup each time: {advice}",
                label="predict every step",
                severity=Severity.INFORMATION,
                cites=(line,),
            )


def _called_every_step(ctx: RuleContext, fn: ast.AST, depth: int = 0) -> ast.Call | None:
    """A call of ``fn`` (by name, ``self.act(...)``, or ``agent.act(...)`` on an object of its
    class built in this file) made on every iteration of a loop that the file runs and that runs
    many times: not traced, not a callback, not timing each call, not waiting for the user, not
    once per epoch beside the steps. Or made on every call of a def with no loop of its own that
    is itself called so (``get_action`` calls ``self.predict(state)``, a loop calls
    ``get_action``), two such defs deep at most: the call the loop makes is returned."""
    facts = ctx.facts
    for site in facts.calls_by_def.get(fn, []):  # by name, self.act(...), agent.act(...)
        loops = facts.enclosing_loops(site)
        if not loops:
            caller = facts.enclosing_function(site)
            if depth < 2 and caller is not None and caller is not fn and facts.in_tf_function(site) is None \
                    and not _periodic_in(facts, site, caller) and not _fits_for_epochs(facts, caller) \
                    and not reads_a_clock(facts, caller):
                found = _called_every_step(ctx, caller, depth + 1)
                if found is not None:
                    return found
            continue
        if not ctx.hot.runs_eagerly_in_script(site) or not ctx.hot.repeats(site) or not ctx.hot.per_step(site):
            continue
        caller = facts.enclosing_function(site)
        if caller is not None and not facts.calls_by_def.get(caller):
            continue  # a def the file never calls itself (a widget's callback runs when the user acts)
        if reads_a_clock(facts, loops[0]):
            continue  # a benchmark that times each call: the repeats are the point
        if _periodic_in(facts, site, loops[0]):
            continue  # ``if done: self.replay()``: once per episode, on all of its states
        if ctx.hot.runs_few_times([site], FEW_PREDICTS) or ctx.hot.paced_by_user(site) \
                or ctx.hot.beside_a_training_loop(loops[0], site, through_steps=False) or ctx.hot.runs_beside_training(site):
            continue
        return site
    return None


def _large_batch_size(facts: ModuleFacts, call: ast.Call) -> bool:
    """``predict(x, batch_size=100)``: the author batches a large input on purpose (a batch size
    above predict's default of 32, or one the file does not write as a literal); or a Keras
    generator or ``Sequence`` (``predict(gen, workers=4, use_multiprocessing=True)``), which
    ``predict`` iterates batch by batch itself."""
    if any(keyword(call, name) is not None for name in _GENERATOR_OPTIONS):
        return True
    size = keyword(call, "batch_size")
    if size is None:
        return False
    value = int_value(facts, size)
    return value is None or value > SMALL_BATCH


def _strides_by(facts: ModuleFacts, index: ast.Name, width: ast.expr) -> bool:
    """``index`` is the variable of a loop around it that steps by ``width``: ``range(0, n, width)``."""
    for loop in facts.enclosing_loops(index):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == index.id:
            it = loop.iter
            return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and len(it.args) == 3 and ast.dump(it.args[2]) == ast.dump(width)
    return False


def _every_row(facts: ModuleFacts, x: ast.expr | None, depth: int = 1) -> bool:
    """``images[:, e:f, g:h, :]``: every row of the array (a tile of each image in a stack), also
    through the name it is bound to: one call on a whole batch, which ``predict`` batches itself."""
    if isinstance(x, ast.Name) and depth > 0:
        return _every_row(facts, getattr(facts.reaching_assignment(x), "value", None), depth - 1)
    if not (isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Tuple) and x.slice.elts):
        return False
    first = x.slice.elts[0]
    if not (isinstance(first, ast.Slice) and first.lower is None and first.upper is None and first.step is None):
        return False
    # not when the array holds one row: ``X = np.zeros((1, length, vocab))`` before ``X[:, :i + 1, :]``
    made = getattr(facts.reaching_assignment(x.value), "value", None) if isinstance(x.value, ast.Name) else None
    shape = made.args[0] if isinstance(made, ast.Call) and made.args else None
    if isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "reshape":
        shape = made.args[0] if len(made.args) == 1 else ast.Tuple(elts=list(made.args))
    return not (isinstance(shape, (ast.Tuple, ast.List)) and shape.elts and isinstance(shape.elts[0], ast.Constant)
                and shape.elts[0].value == 1)


# scikit-learn's splitters: ``for train, test in KFold(5).split(X)`` runs once per fold.
_SPLITTERS = frozenset({"KFold", "StratifiedKFold", "GroupKFold", "StratifiedGroupKFold", "ShuffleSplit",
                        "StratifiedShuffleSplit", "GroupShuffleSplit", "RepeatedKFold", "RepeatedStratifiedKFold",
                        "TimeSeriesSplit", "LeaveOneGroupOut", "PredefinedSplit"})


def _over_folds(facts: ModuleFacts, loop: ast.AST) -> bool:
    """``for train_idx, test_idx in folds.split(X, y)`` with ``folds = StratifiedShuffleSplit(...)``:
    a loop over cross-validation folds."""
    iterable = loop.iter if isinstance(loop, ast.For) else None
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "split"):
        return False
    splitter: ast.AST | None = iterable.func.value
    if isinstance(splitter, ast.Name):
        splitter = getattr(facts.reaching_assignment(splitter), "value", None)
    qualname = (facts.qualname(splitter.func) if isinstance(splitter, ast.Call) else None) or ""
    return qualname.startswith("sklearn.") and qualname.rsplit(".", 1)[-1] in _SPLITTERS


def _chunk_of_rows(facts: ModuleFacts, x: ast.expr | None, depth: int = 1) -> bool:
    """``x[i:i + 128]``, ``x[i * batch_size:(i + 1) * batch_size]`` (a width not written as a
    number of at most 32), or a list of such slices, also through the name it is bound to."""
    if isinstance(x, ast.Name) and depth > 0:
        return _chunk_of_rows(facts, getattr(facts.reaching_assignment(x), "value", None), depth - 1)
    if isinstance(x, (ast.List, ast.Tuple)) and x.elts:
        return all(_chunk_of_rows(facts, e, 0) for e in x.elts)
    if not (isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Slice)):
        return False
    width = _chunk_width(facts, x.slice)
    if width is None:
        return False
    rows = int_value(facts, width)
    return rows is None or rows > SMALL_BATCH


# ``predict`` options that only a generator or a ``keras.utils.Sequence`` input uses.
_GENERATOR_OPTIONS = ("workers", "use_multiprocessing", "max_queue_size")


def _chunk_width(facts: ModuleFacts, window: ast.Slice) -> ast.expr | None:
    """The expression of how many rows ``x[i:i + 128]`` (or ``x[i * b:(i + 1) * b]``) takes."""
    lower, upper = window.lower, window.upper
    if window.step is not None or lower is None or upper is None:
        return None
    if isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) and ast.dump(upper.left) == ast.dump(lower) \
            and isinstance(lower, ast.Name) and _strides_by(facts, lower, upper.right):
        return upper.right  # ``for i in range(0, n, 128): x[i:i + 128]`` (not a window sliding by one)
    if isinstance(lower, ast.BinOp) and isinstance(lower.op, ast.Mult) and isinstance(upper, ast.BinOp) \
            and isinstance(upper.op, ast.Mult) and ast.dump(lower.right) == ast.dump(upper.right):
        return lower.right  # ``x[i * b:(i + 1) * b]``
    return None
    return None


def _fits_for_epochs(facts: ModuleFacts, fn: ast.AST) -> bool:
    """The def calls ``fit`` for more than one epoch, or for a number of epochs it does not write
    as a literal (``epochs=epochs``): each call trains for whole epochs. (A DQN's ``fit(...,
    epochs=1)`` on one batch per step does not.)"""
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fit":
            epochs = keyword(node, "epochs")
            if epochs is not None and not (isinstance(epochs, ast.Constant) and isinstance(epochs.value, int)
                                           and epochs.value <= 1):
                return True
    return False


def _periodic_in(facts: ModuleFacts, call: ast.Call, within: ast.AST) -> bool:
    """``call`` sits under an ``if`` of ``within`` (a def, or a loop) that tests a remainder (``if
    self.step % 100 == 0``) or the end of an episode (``if terminated or truncated:``, ``if done:``):
    it runs on some of the def's calls, or of the loop's iterations, only."""
    child: ast.AST = call
    for ancestor in facts.ancestors(call):
        if ancestor is within:
            return False
        if isinstance(ancestor, ast.If) and child not in ancestor.orelse:
            test = ancestor.test
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test)):
                return True
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)  # ``if not done:``: most steps
            if not negated and any(isinstance(n, (ast.Name, ast.Attribute)) and _EPISODE_END.search(ast.unparse(n))
                                   for n in ast.walk(test)):
                return True
        child = ancestor
    return False


_EPISODE_END = re.compile(r"(?:^|[._])(done|dones|terminated|truncated|terminal|is_terminal|episode_end)$")


def _direct_call_text(facts: ModuleFacts, call: ast.Call, name: str, x: ast.AST | None, x_text: str,
                      blocker: str | None) -> str:
    """The direct call a message suggests instead of ``predict``: ``.numpy()`` of its result, or of
    each tensor of the list a model with several outputs returns. A list written in the call
    (``predict([text])``) goes through ``tf.constant``: Keras 2's ``predict`` makes a batch of a
    list of strings or numbers, a direct call does not (``model([text])`` raises a TypeError)."""
    condition = ""
    literal = _scalars_list(facts, x)
    if literal:
        x_text = f"{_tf_alias(facts)}.constant({x_text})"
    elif literal is not None:
        # one item of unknown type: an array per model input as often as a string
        condition = (f" (if `{x_text}` holds strings or numbers rather than arrays, pass "
                     f"`{_tf_alias(facts)}.constant({x_text})`: a direct call takes a tensor of them, not the list)")
    elif blocker == "mixed inputs" and isinstance(x, (ast.List, ast.Tuple)):
        # Keras 3 refuses a list that mixes NumPy arrays and tensors (``predict`` takes it)
        convert = f"{_tf_alias(facts)}.convert_to_tensor"
        parts = [ast.unparse(e) if _a_tensor(facts, e) else f"{convert}({ast.unparse(e)})" for e in x.elts]
        x_text = f"[{', '.join(parts)}]" if isinstance(x, ast.List) else f"({', '.join(parts)})"
    if blocker == "several outputs" or _unpacked(facts, call):
        return f"`{name}({x_text}, training=False)` (a list of tensors: `.numpy()` each){condition}"
    return f"`{name}({x_text}, training=False).numpy()`{condition}"


def _a_tensor(facts: ModuleFacts, expr: ast.AST) -> bool:
    """``a``, assigned the result of a TensorFlow op (``a = tf.clip_by_value(...)``) last."""
    value = getattr(facts.reaching_assignment(expr), "value", None) if isinstance(expr, ast.Name) else expr
    return isinstance(value, ast.Call) and (facts.qualname(value.func) or "").startswith("tensorflow.")


def _mixed_inputs(facts: ModuleFacts, x: ast.AST | None) -> bool:
    """``predict([state, a])`` where some item is a tensor and another may be a NumPy array."""
    if not isinstance(x, (ast.List, ast.Tuple)) or len(x.elts) < 2:
        return False
    tensors = [_a_tensor(facts, e) for e in x.elts]
    return any(tensors) and not all(tensors)


def _scalars_list(facts: ModuleFacts, x: ast.AST | None) -> bool | None:
    """For a list or tuple written in the call that may hold strings or numbers: True when every
    item visibly is one (``["a", "b"]``, or ``[text]`` with ``text = "..."``), False when it has
    one item of unknown type (``[imgs_cond]``: an image for a one-input model as often as a
    string). None otherwise: not a list, or several items that may be one array per model input."""
    if not isinstance(x, (ast.List, ast.Tuple)) or not x.elts or any(isinstance(e, ast.Starred) for e in x.elts):
        return None
    if all(_a_scalar(facts, e) for e in x.elts):
        return True
    if len(x.elts) == 1 and keras_layers_in_file(facts) & _STRING_INPUT_LAYERS:
        return True  # a model that vectorizes its own text: ``[text]`` is a list of strings
    return False if len(x.elts) == 1 else None


_STRING_INPUT_LAYERS = frozenset({"TextVectorization", "StringLookup"})


def _a_scalar(facts: ModuleFacts, item: ast.AST) -> bool:
    """A string or number, or a Python list of them (``token_list``, a tokenizer's ids, appended
    to as a sequence is generated): what ``predict`` batches and a direct call needs as a tensor."""
    if isinstance(item, ast.Name):
        if any(isinstance(p := facts.parent(use), ast.Attribute) and p.attr == "append" for use in facts.names.get(item.id, [])):
            return True
        item = getattr(facts.reaching_assignment(item), "value", item)
        if isinstance(item, (ast.List, ast.ListComp)) or isinstance(item, ast.Subscript) and isinstance(item.value, ast.Call) \
                and isinstance(item.value.func, ast.Attribute) and item.value.func.attr == "texts_to_sequences":
            return True
    return isinstance(item, ast.JoinedStr) or isinstance(item, ast.Constant) and isinstance(item.value, (str, bytes, int, float))


def _tf_alias(facts: ModuleFacts) -> str:
    """The name the file imports TensorFlow as (``tf`` if it does not bind the module itself)."""
    return next((local for local, qualname in facts.imports.bindings.items() if qualname == "tensorflow"), "tf")


def _tf_model_from_project(ctx: RuleContext, receiver: ast.expr) -> str | None:
    """"project" when ``receiver`` (``self.model``) holds what a def or class of another file of
    the project builds, a ``tf.keras`` model (``self.model = unet(...)``, ``from nets.unet import
    Unet as unet``): a file that imports no TensorFlow itself still runs a TF 2 model."""
    return "project" if built_by_imported(ctx, receiver, _builds_tf_keras_model) else None


def _builds_tf_keras_model(facts: ModuleFacts, node: ast.AST) -> bool:
    """``node``, in a file that imports TensorFlow, is a def that returns a Keras model or a
    subclass of one."""
    if not uses_tensorflow(facts):
        return False
    if isinstance(node, ast.ClassDef):
        return node.name in model_classes(facts)
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and returns_model(facts, node)


def _built_elsewhere(facts: ModuleFacts, receiver: ast.expr) -> bool:
    """The model is built outside this file: ``self.yolo_model`` that no method of the class
    here assigns (a base class imported from another file builds it), or a name imported from
    another module. Its size is not visible, and a deep model called directly runs layer by layer:
    a judge measured a 400-layer YOLOv4 at 106 ms a ``predict``, 469 ms called directly, 67 ms
    through a ``tf.function``."""
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        if facts.enclosing_class(receiver) is None:
            return False
        values = [value for value, _ in facts.self_attribute_assignments(receiver)]  # ``self.a, self.b = f()`` too
        return not values or all(_made_by_project_import(facts, value) for value in values)
    if isinstance(receiver, ast.Name):
        assignment = facts.reaching_assignment(receiver)
        if assignment is None:
            return receiver.id in facts.imports.bindings
        return isinstance(assignment, ast.Assign) and _made_by_project_import(facts, assignment.value)
    return False


def _loaded(facts: ModuleFacts, receiver: ast.expr, depth: int = 1) -> str | None:
    """The model is loaded from a file (``load_model("lstm.h5")``), also by a def of this file
    that returns what it loads or builds from another module (``model = load_model()`` whose
    body calls ``SpeechModels.AttRNNSpeechModel(...)``): its layers are not visible here."""
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        values = facts.self_attribute_values(receiver)  # ``self.model = keras.models.load_model(path)``
        reasons = {_loaded_value(facts, value, depth) for value in values}
        return reasons.pop() if len(reasons) == 1 else None
    assignment = facts.reaching_assignment(receiver) if isinstance(receiver, ast.Name) else None
    return _loaded_value(facts, assignment.value, depth) if isinstance(assignment, ast.Assign) else None


def _loaded_value(facts: ModuleFacts, value: ast.expr, depth: int) -> str | None:
    if isinstance(value, ast.Name) and depth > 0:  # ``model = load_model(path); self.model = model``
        assignment = facts.reaching_assignment(value)
        return _loaded_value(facts, assignment.value, depth - 1) if isinstance(assignment, ast.Assign) else None
    if not isinstance(value, ast.Call):
        return None
    qualname = facts.qualname(value.func) or ""
    if qualname.rsplit(".", 1)[-1] == "load_model" and qualname.startswith(("keras.", "tensorflow.", "tf_keras.")) \
            or qualname == "tensorflow.saved_model.load":
        return "loaded from a file"
    func = value.func
    if _made_by_project_import(facts, value) or isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and not facts.imports.bindings.get(func.value.id, "keras").startswith(("keras", "tensorflow", "tf_keras", "numpy")):
        return "built in another module"
    factory = facts.resolve_def(func, value) if depth > 0 and isinstance(func, ast.Name) else None
    returned = [n.value for n in walk_same_scope(factory) if isinstance(n, ast.Return)] if factory is not None else []
    reasons = {_loaded(facts, r, depth - 1) if isinstance(r, ast.Name) else None for r in returned}
    return reasons.pop() if len(reasons) == 1 else None


def _made_by_project_import(facts: ModuleFacts, value: ast.AST) -> bool:
    """``unet(num_classes)`` with ``from nets.unet import Unet as unet``: a call of a name imported
    from a module that is neither Keras nor TensorFlow (the project's own builder)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in facts.imports.bindings):
        return False
    qualname = facts.imports.bindings[value.func.id]
    return not qualname.startswith(("keras.", "tensorflow.", "tf_keras."))


def _size_unknown(facts: ModuleFacts, receiver: ast.expr, call: ast.Call) -> str | None:
    """Why the model may be deep (None: nothing says so). Called directly, a deep model runs its
    layers one by one, slower than ``predict``: judges measured a 12-layer transformer at 138 ms a
    direct call against 69 ms with ``predict`` and 12 ms through a ``tf.function``, a 72-block
    YOLOv3 at 380, 225 and 64 ms, a 400-layer YOLOv4 at 469, 106 and 67 ms. It is built outside
    this file or loaded from a file (``load_model``), or in this file on what a builder of the project returns (``YOLOv3(input_layer)``)
    or on another model (``Model(inputs=bert.inputs, ...)``)."""
    if _built_elsewhere(facts, receiver):
        return "built elsewhere"
    if _loaded(facts, receiver) == "loaded from a file":
        # a judge: an EfficientNet-based pose model from ``load_model``, one image: 103 ms with
        # ``predict``, 246 ms called directly, 30 ms through a ``tf.function``
        return "loaded from a file"
    if not isinstance(receiver, ast.Name):
        return None
    built = model_construction(facts, receiver, call)
    if built is not None and (_built_on_a_network(facts, built[0]) or _inputs_fed_to_a_project_builder(facts, *built)):
        return "built on another network"
    return None


def _inputs_fed_to_a_project_builder(facts: ModuleFacts, construction: ast.Call, scope: ast.AST | None) -> bool:
    """``Model(input_layer, outputs)`` where the same scope hands ``input_layer`` to a builder
    imported from the project (``feature_maps = YOLOv3(input_layer)``): the layers between are
    the project's network, of a size this file does not show."""
    inputs = construction.args[0] if construction.args else keyword(construction, "inputs")
    names = {n.id for n in ast.walk(inputs) if isinstance(n, ast.Name)} if inputs is not None else set()
    if not names:
        return False
    nodes = walk_same_scope(scope) if scope is not None else [n for stmt in facts.tree.body for n in ast.walk(stmt)]
    return any(isinstance(node, ast.Call) and _made_by_project_import(facts, node)
               and any(isinstance(a, ast.Name) and a.id in names for a in node.args) for node in nodes)


_NETWORK_PARTS = frozenset({"inputs", "outputs", "input", "output"})


def _built_on_a_network(facts: ModuleFacts, root: ast.AST, depth: int = 0) -> bool:
    """The tensors a ``Model(...)`` call is given come from a builder imported from the project
    (``feature_maps = YOLOv3(input_layer)``) or from another model (``bert.outputs[0]``), through
    up to three assignments."""
    for node in ast.walk(root):
        if isinstance(node, ast.Attribute) and node.attr in _NETWORK_PARTS:
            return True
        if isinstance(node, ast.Call) and node is not root and _made_by_project_import(facts, node):
            return True
        if isinstance(node, ast.Name) and depth < 3 and isinstance(node.ctx, ast.Load):
            assignment = facts.reaching_assignment(node)
            value = getattr(assignment, "value", None) if isinstance(assignment, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.AST) and _built_on_a_network(facts, value, depth + 1):
                return True
    return False


def _graph_or_direct(name: str, direct: str, why: str) -> str:
    """The advice for a model that may be deep: a graph of it suits any size, a direct call a small one."""
    return (f"a {_graph_of(name, False)} made once ({why}, `{name}` may be deep: called directly, "
            f"its layers run one by one), or {direct} if it is small")


def _direct_then_graph(name: str, direct: str, may_grow: bool, deep: str | None) -> str:
    """A direct call or a graph of the model made once; only the graph for a model that may be
    deep (``deep``: built elsewhere, on another network), slower called directly (``_size_unknown``)."""
    graph = f"a {_graph_of(name, may_grow)} made once before the loop"
    if deep:
        return f"{graph} ({deep}, `{name}` may be deep: called directly, its layers run one by one)"
    return f"{direct}, or {graph}"


def _unpacked(facts: ModuleFacts, call: ast.Call) -> bool:
    """``o, h, c = model.predict(...)``: the model has several outputs."""
    parent = facts.parent(call)
    return isinstance(parent, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in parent.targets)


def _graph_of(name: str, may_grow: bool) -> str:
    """A ``tf.function`` of the model; one that relaxes its input shapes when the input may change
    shape from one iteration to the next: one the loop builds from earlier iterations, since a
    decoder's input grows in more ways than ``LoopFlow`` follows (a plain one traces again for
    every new length: measured 132 ms a call against predict's 49 ms, 10 ms with
    ``reduce_retracing=True``; a judge measured 17.9 s against predict's 5.6 s and 2.1 s on a
    transformer's decoding loop). With shapes that stay the same it traces once either way."""
    return f"`tf.function({name}, reduce_retracing=True)`" if may_grow else f"`tf.function({name})`"


def _growth_note(grows: bool) -> str:
    return (" (its input grows every iteration: with `reduce_retracing` its length becomes a dimension of unknown"
            " size, instead of a new trace for every length)") if grows else ""


def _call_directly(ctx: RuleContext, call: ast.Call, title: str) -> Fix | None:
    """``model.predict(x, verbose=0)`` -> ``model(x, training=False).numpy()``: no predict set-up
    per call."""
    edit = replace_in_statement(ctx.source, ctx.facts.statement_of(call), call, cst.Call, _direct_call)
    return Fix(title, (edit,), "unsafe") if edit else None


def _direct_call(node: cst.Call) -> cst.CSTNode:
    """``m.predict(x, verbose=0)`` -> ``m(x, training=False).numpy()``, keeping the argument's text,
    its comments and a one-argument-per-line layout."""
    args = list(node.args)
    x = next(a for a in args if a.keyword is None or a.keyword.value == "x")
    final = args[-1]
    x = x.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    if x is not final and not x.deep_equals(final):
        comma, closing = x.comma, getattr(final.comma, "whitespace_after", None)
        if (isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)
                and isinstance(closing, cst.ParenthesizedWhitespace)):
            # ``)`` keeps the indentation it had after the dropped arguments
            x = x.with_changes(comma=comma.with_changes(whitespace_after=comma.whitespace_after.with_changes(last_line=closing.last_line)))
        else:
            x = x.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    receiver = cast(cst.Attribute, node.func).value  # ``m.predict``: check() reports attribute calls only
    direct = with_keyword(node.with_changes(func=receiver, args=[x]), "training", "False")
    return cst.Call(func=cst.Attribute(value=direct, attr=cst.Name("numpy")))


def _fix_blocker(facts: ModuleFacts, call: ast.Call, kind: str, receiver: ast.expr) -> str | None:
    if kind == "name":
        return "not visibly a Keras model"
    inputs = [a for a in call.args] + [k for k in call.keywords if k.arg == "x"]
    if len(inputs) != 1 or any(k.arg not in ("x", "verbose") for k in call.keywords):
        return "other predict arguments"
    if _mixed_inputs(facts, call.args[0] if call.args else keyword(call, "x")):
        return "mixed inputs"  # Keras 3 refuses ``model([array, tensor])``: the message converts them
    if _unpacked(facts, call):
        return "several outputs"  # ``y, att = self.model.predict(x)``: a direct call returns a list
    if isinstance(receiver, ast.Name) and kind == "model":
        built = model_construction(facts, receiver, call)
        if built is None or multi_output(facts, built[0]):
            return "several outputs"
    return None


def _small_input(facts: ModuleFacts, x: ast.AST, loops: list[ast.AST], depth: int = 0) -> str | None:
    """"one sample" or "N rows" when the input is visibly small, else None."""
    if isinstance(x, ast.Subscript):
        parts = x.slice.elts if isinstance(x.slice, ast.Tuple) else [x.slice]
        if parts and isinstance(parts[0], ast.Constant) and parts[0].value is None:
            return "one sample"
        if isinstance(parts[0], ast.Slice):
            width = _slice_width(facts, parts[0])
            if width is not None and width <= SMALL_BATCH:
                return "one sample" if width == 1 else f"{width} rows"
        return None
    if isinstance(x, ast.Call):
        qualname = facts.qualname(x.func) or ""
        if qualname in _ONE_SAMPLE:
            axis = x.args[1] if len(x.args) > 1 else keyword(x, "axis")
            return "one sample" if isinstance(axis, ast.Constant) and axis.value == 0 else None
        if qualname in _STACKERS and x.args and isinstance(x.args[0], ast.List) and len(x.args[0].elts) == 1:
            return "one sample"
        if isinstance(x.func, ast.Attribute) and x.func.attr == "reshape" and x.args:
            first = x.args[0].elts[0] if isinstance(x.args[0], ast.Tuple) and x.args[0].elts else x.args[0]
            return "one sample" if isinstance(first, ast.Constant) and first.value == 1 else None
        return None
    if isinstance(x, ast.Name) and depth < 2:
        for loop in loops:
            for stmt in getattr(loop, "body", []):
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == x.id for t in stmt.targets):
                    return _small_input(facts, stmt.value, loops, depth + 1)
    return None


def _slice_width(facts: ModuleFacts, part: ast.Slice) -> int | None:
    """``i:i + 8`` -> 8 (the upper bound is the lower bound plus a constant)."""
    lower, upper = part.lower, part.upper
    if part.step is not None or upper is None or not isinstance(upper, ast.BinOp) or not isinstance(upper.op, ast.Add):
        return None
    start = ast.dump(lower) if lower is not None else ast.dump(ast.Constant(0))
    for same, other in ((upper.left, upper.right), (upper.right, upper.left)):
        if ast.dump(same) == start:
            return int_value(facts, other)
    return None


def _is_loop_item(facts: ModuleFacts, loop: ast.For, x: ast.AST) -> bool:
    """``x`` is (derived from) the loop's own item: ``for item, label in ds: predict(item)``."""
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(x))




_LOOPS = (ast.For, ast.While, ast.AsyncFor)  # a comprehension's iterations cannot see each other


# predict's setup costs tens of milliseconds a call (a CPU, a small model): this many calls in
# all, as the code writes down (``random.sample(texts, 10)``, ``forecast(model, 14)``, a 7x7 grid
# of decoded images), cost a second or two once: judges called 30 to 49 such calls not worth a
# change, and 100 (a text generated word by word: 5-15 s against 0.2 s) worth it.
FEW_PREDICTS = 50


def _timed_from_outside(facts: ModuleFacts, loop: ast.AST) -> bool:
    """``t0 = time()`` right before the loop: the reader measures the loop, predict's setup
    included, however few its iterations; the finding explains what they measure."""
    before = neighbour(facts, loop, -1)
    value = getattr(before, "value", None)
    return isinstance(before, ast.Assign) and isinstance(value, ast.Call) and facts.qualname(value.func) in CLOCKS


def _times_the_same_call(facts: ModuleFacts, loop: ast.AST, x: ast.expr) -> bool:
    """The loop predicts the same input every time and reads a clock on each iteration
    (``start = time.time(); model.predict(batch); elapsed.append(time.time() - start)``): a
    benchmark of ``predict`` itself. (A loop timed from outside, ``t0 = time()`` before it, is
    how a reader measures what the finding says: that stays reported.)"""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) or not _repeats_one_input(facts, loop, x):
        return False  # a new input each time
    return any(reads_a_clock(facts, stmt) for stmt in loop.body)


def _trains_other_models_only(facts: ModuleFacts, loop: ast.AST, receiver: ast.expr) -> bool:
    """Every training call in ``loop`` is a Keras ``fit`` / ``train_on_batch`` of another model
    than ``receiver``, built without it (``self.model.fit(...)`` beside a DQN's
    ``self.target_model.predict(...)``): the predicting model's weights stay the same through the
    loop. A GAN's ``gan.train_on_batch`` trains the generator it was built from: not another."""
    fits = [n for n in walk_same_scope(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in TRAINING_CALLS]
    predicting = ast.unparse(receiver)
    for fit in fits:
        method = fit.func
        if not isinstance(method, ast.Attribute) or method.attr not in ("fit", "train_on_batch") \
                or ast.unparse(method.value) == predicting:
            return False
        trained = method.value
        built = _built_from(facts, trained)
        if built is None or _mentions(facts, built, predicting):
            return False  # unknown, or built on the predicting model (a GAN's combined model)
    return bool(fits)


def _mentions(facts: ModuleFacts, values: list[ast.expr], name: str) -> bool:
    """``values`` use ``name``, directly or through the names they read, assignments back
    (``combined = Model(z, valid)``, ``valid = discriminator(img)``, ``img = generator(z)``),
    breadth first over at most 50 assignments."""
    queue, seen = list(values), set[ast.AST]()
    while queue and len(seen) < 50:
        value = queue.pop(0)
        for node in ast.walk(value):
            if isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node) == name:
                return True
            if isinstance(node, ast.Name):
                assignment = facts.reaching_assignment(node)
                if isinstance(assignment, ast.Assign) and assignment not in seen:
                    seen.add(assignment)
                    queue.append(assignment.value)
    return False


def _built_from(facts: ModuleFacts, model: ast.expr) -> list[ast.expr] | None:
    """What ``model`` (a name or ``self.attr``) is assigned from, None when unknown."""
    if isinstance(model, ast.Name):
        assignment = facts.reaching_assignment(model)
        return [assignment.value] if isinstance(assignment, ast.Assign) else None
    if isinstance(model, ast.Attribute) and isinstance(model.value, ast.Name) and model.value.id == "self":
        return facts.self_attribute_values(model) or None
    return None


def _beside_a_long_fit(facts: ModuleFacts, loop: ast.AST) -> bool:
    """The loop's body also calls ``fit`` for several epochs (``model.fit(x, y, epochs=5000)``, then
    a ``predict`` to print the error): each iteration trains for whole epochs, beside which one
    ``predict``'s setup is nothing. (``fit(..., epochs=1)`` on one sample per step, as in a DQN,
    costs about what a ``predict`` does: that loop stays reported.)"""
    for node in walk_same_scope(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fit":
            epochs = int_value(facts, keyword(node, "epochs"))
            if epochs is not None and epochs > 1:
                return True
    return False


def _warms_up_a_timed_loop(facts: ModuleFacts, loop: ast.AST, x: ast.expr) -> bool:
    """``for i in range(N_warmup): model.predict(batch)`` right before a loop that times the same
    ``predict`` on the same input: the warm-up of a benchmark of ``predict`` itself."""
    after = neighbour(facts, loop, 1)
    if not (_repeats_one_input(facts, loop, x) and isinstance(after, (ast.For, ast.While))
            and _times_the_same_call(facts, after, x)):
        return False
    text = ast.unparse(x)
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "predict"
               and n.args and ast.unparse(n.args[0]) == text for n in ast.walk(after))


def _repeats_one_input(facts: ModuleFacts, loop: ast.AST, x: ast.expr) -> bool:
    """The loop passes the same input on every iteration (nothing in ``x`` changes in it)."""
    return isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) and not isinstance(x, ast.Call) and not (
        {n.id for n in ast.walk(x) if isinstance(n, ast.Name)} & facts.names_changed_by(loop))


def _a_dataset(facts: ModuleFacts, x: ast.expr) -> bool:
    """``model.predict(test_ds.map(lambda e: e["features"]))``: a ``tf.data`` pipeline, which
    ``predict`` iterates batch by batch (a direct call of the model could not take it)."""
    if isinstance(x, ast.Name):  # ``slices = ds.batch(64)`` then ``model.predict(slices)``
        bound = getattr(facts.reaching_assignment(x), "value", None)
        return isinstance(bound, ast.Call) and _a_dataset(facts, bound)
    if not isinstance(x, ast.Call):
        return False
    qualname = facts.qualname(x.func) or ""
    return (isinstance(x.func, ast.Attribute) and x.func.attr in DATASET_TRANSFORMATIONS | DATASET_SOURCES) \
        or qualname.startswith("tensorflow.data.") or qualname.endswith(_DATASET_LOADERS)


# Keras utilities that return a tf.data pipeline (``keras.utils.image_dataset_from_directory``).
_DATASET_LOADERS = ("dataset_from_directory", "dataset_from_array")


_DRAWS_RECORDS = frozenset({"random.sample", "random.choices"})


def _inputs_of_yielded_pairs(facts: ModuleFacts, loop: ast.AST, x: ast.expr) -> bool:
    """``for x_true, y_true in data: model.predict(x_true)``: a loader that yields (inputs, labels)
    pairs, as evaluation loops over batch generators do; each ``predict`` gets a batch (padded to
    its own length, so they cannot be joined). Also numbered: ``for i, (x, y) in enumerate(data)``.
    Not ``enumerate``/``zip`` pairing single items (``for i, x in enumerate(xs)``), nor a
    ``tf.data`` dataset: ``predict`` takes the whole of it in one call."""
    if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(x, ast.Name)):
        return False
    target, iterable = loop.target, loop.iter
    numbered = enumerated(iterable)
    if numbered is not None and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target, iterable = target.elts[1], numbered
    if not (isinstance(target, ast.Tuple) and 2 <= len(target.elts) <= 3):
        return False  # (inputs, labels[, weights]); ``state, action, reward, next_state, done`` is a transition
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("enumerate", "zip"):
        return False
    if isinstance(iterable, ast.Name):
        iterable = getattr(facts.reaching_assignment(iterable), "value", None) or iterable
    if isinstance(iterable, ast.Call) and (_a_dataset(facts, iterable) or "dataset" in ast.unparse(iterable.func).lower()):
        return False  # ``for item, label in data.gen_dataset(...)``: one predict over the dataset
    if isinstance(iterable, ast.Call) and facts.qualname(iterable.func) in _DRAWS_RECORDS:
        return False  # ``random.sample(self.memory, 64)``: single records drawn from a replay memory
    first = target.elts[0]
    return isinstance(first, ast.Name) and first.id == x.id


def _an_element_of_a_dataset(facts: ModuleFacts, loop: ast.AST, x: ast.expr) -> bool:
    """``for images, masks in test_ds.take(5): model.predict(images)`` (or ``for batch in ds:
    x, y = batch``): ``predict`` gets a ``tf.data`` element as it comes, which for a model is a
    batch (a single example has no batch axis). Evaluation over a batched pipeline: each call
    already gets a batch's worth of work."""
    if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(x, ast.Name)):
        return False
    iterable = loop.iter
    for _ in range(3):  # ``enumerate(ds)``, ``iter(ds)``, ``tqdm(enumerate(ds))``, ``ds.as_numpy_iterator()``: the same elements
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("enumerate", "iter", "tqdm") \
                and iterable.args:
            iterable = iterable.args[0]
        elif isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "as_numpy_iterator":
            iterable = iterable.func.value
    if isinstance(iterable, ast.Name):
        iterable = getattr(facts.reaching_assignment(iterable), "value", None) or iterable
    if not _a_dataset(facts, iterable):
        return False
    items = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for stmt in loop.body:  # ``inputs, labels = batch``: unpacked in the body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in items:
            items |= {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return x.id in items


def _a_field_of_a_loop_record(facts: ModuleFacts, loops: list[ast.AST], x: ast.expr) -> bool:
    """``d = datasets[r]`` then ``model.predict(d["data"])``, or ``for batch in loader:
    model.predict(batch["image"])``: a named field of a record the loop goes through. What it
    holds (a dataset, a batch, one sample) is not in sight, so neither is whether a direct call
    could take it."""
    if not (isinstance(x, ast.Subscript) and isinstance(x.value, ast.Name)
            and isinstance(x.slice, ast.Constant) and isinstance(x.slice.value, str)):
        return False
    record = x.value.id
    return any(record in facts.loop_targets(loop) or any(
        record in target_names(target) for stmt in walk_same_scope(loop) if isinstance(stmt, ast.Assign)
        for target in stmt.targets) for loop in loops)


def _stateful(facts: ModuleFacts) -> bool:
    """A layer of this file keeps its state from one call to the next (``LSTM(..., stateful=True)``):
    each ``predict`` continues where the last one stopped, so the calls cannot be stacked."""
    return any(isinstance(k.value, ast.Constant) and k.value.value is True
               for c in facts.calls for k in c.keywords if k.arg == "stateful")


def _recurrent(facts: ModuleFacts, receiver: ast.expr, call: ast.Call) -> bool:
    """The model has a Keras recurrent layer. Calling it directly (the advice here) runs its
    time loop op by op: 235-550 ms a call against about 200 ms for ``predict`` (measured on a
    CPU); only a ``tf.function`` of the model is faster, and that is TFP302's. The layers of a
    ``Sequential([...])`` or of the factory that builds the model are looked at; for a model
    built elsewhere, any recurrent layer in the file counts."""
    built = model_construction(facts, receiver, call) if isinstance(receiver, ast.Name) else None
    if built is not None:
        construction, scope = built
        if scope is not None or _listed_layers(construction):
            return _has_recurrent_layer(facts, construction, scope)
    if keras_layers_in_file(facts) & RECURRENT_LAYERS:
        return True
    # A model whose layers are not here (``load_model("models/lstm.h5")``, ``SpeechModels.AttRNNSpeechModel``)
    # in a file that names a recurrent network: judges measured such a loaded BiLSTM at 110 ms called
    # directly, 52 ms with ``predict``, 1.8 ms through a ``tf.function``.
    return (_loaded(facts, receiver) is not None or _built_elsewhere(facts, receiver)) \
        and _NAMES_RECURRENCE.search(facts.source.text) is not None


def _volumetric(facts: ModuleFacts) -> bool:
    """The file works on 3D volumes (medical scans: NIfTI, MGZ, DICOM): each ``predict`` runs a
    3D network on a whole volume, or a batch of 3D patches, read from disk for that call (judges:
    SynthSeg, voxelmorph, neurite, one subject per call). ``predict``'s setup is a few
    milliseconds beside seconds of compute, and volumes of different shapes cannot be stacked."""
    return _NAMES_VOLUMES.search(facts.source.text) is not None


_NAMES_VOLUMES = re.compile(r"\b(?:nibabel|SimpleITK|nilearn|pydicom|medpy|dicom)\b|\.nii\b|\.mgz\b|\bConv3D\b"
                            r"|\bload_vol(?:ume|file)s?\b|\b(?:edit|get)_volumes?\b|volume_info\b")


_NAMES_RECURRENCE = re.compile(r"lstm|rnn|\bgru|recurrent", re.IGNORECASE)


def _has_recurrent_layer(facts: ModuleFacts, construction: ast.Call, scope: ast.AST | None, depth: int = 0) -> bool:
    """A recurrent layer among the layers of ``construction`` (and its factory's body), or of a
    model of the file it lists (``Sequential([text_vec_layer, model])`` with ``model =
    Sequential([..., GRU(128), ...])``), two levels deep."""
    nodes = list(ast.walk(construction)) + (list(walk_same_scope(scope)) if scope is not None else [])
    if any(isinstance(n, ast.Call) and keras_layer(facts, n) in RECURRENT_LAYERS for n in nodes):
        return True
    if depth >= 2:
        return False
    for name in (n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)):
        inner = model_construction(facts, name, name)
        if inner is not None and inner[0] is not construction and _has_recurrent_layer(facts, *inner, depth + 1):
            return True
    return False


def _listed_layers(construction: ast.Call) -> bool:
    """``Sequential([...])``: the model's layers are the list. (``Model([source, target], out)``
    lists its inputs: its layers are elsewhere in the file.)"""
    func = construction.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name == "Sequential" and bool(construction.args) and isinstance(construction.args[0], (ast.List, ast.Tuple))
