"""TFP704: an expensive deterministic ``map`` re-run on every epoch, without ``.cache()``."""
from __future__ import annotations

import ast
import re
from functools import partial
from typing import Iterator

from tfperf_lsp.model import Edit, Finding, Fix, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import holds_pretrained_model
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._mapfn import function_label
from tfperf_lsp.analysis.astutil import int_value, keyword
from tfperf_lsp.rules.input_pipeline._astutil import parameter
from tfperf_lsp.rules.input_pipeline._pipeline import PREVIEW, Consumer, Pipelines, Step, maps_whole_batches, pipelines, takes_few

_WHERE = {"for": "a loop iterates it again each epoch", "fit": "fit trains on it for several epochs",
          "iter": "it is iterated repeatedly", "argument": "it is iterated repeatedly"}


class NoCache(Rule):
    code = "TFP704"
    name = "no-cache"
    category = "input-pipeline"
    severity = Severity.INFORMATION
    summary = "Expensive deterministic Dataset.map re-run every epoch: cache its output"
    doc_url = "https://www.tensorflow.org/guide/data_performance#caching"
    fixable = True
    benchmark = "pipeline"
    docs = """
    ## What it does
    Finds a tf.data `.map(f)` where `f` is expensive (a decode, parse, read or resize op, or
    many ops) and deterministic, in a pipeline that is iterated for several epochs - a `for`
    loop over it inside another loop, `fit(..., epochs=N)` with N > 1, a `repeat()` after the
    map, or a local function that does one of these with it - with no `.cache()` after the map.

    ## Why is this slow
    Every epoch runs `f` again on every element and gets the same results. `.cache()` after
    the map keeps them (in memory, or in a file with `.cache(filename)`) from the second epoch
    on (tf.data performance guide, "Caching").

    ## When it stays silent
    When every loop that reads the pipeline sleeps on each iteration (`time.sleep(5)` to watch
    images appear in TensorBoard): the sleep sets the pace, not the pipeline.
    On a pipeline handed to a def of the file that times it (a benchmark of the uncached form,
    as in the tf.data performance guide). When `f` draws random numbers (caching would freeze the augmentation: every epoch would see
    the first epoch's random images), is stateful or calls code tfperf cannot
    see; when `f` is cheap; when a `.cache()` or `.snapshot()` follows the map; when a `take()`
    follows it before any `repeat()` (a cache read only in part is discarded at the end of
    every epoch); when the dataset is iterated once (a `repeat()` read by `fit(..., epochs=1)`
    or `evaluate` is read once too: it only lets Keras count `steps_per_epoch`; so is one read
    by a loop that breaks after its first batch, or that reads a few batches of it with `take(n)`,
    a preview), or rebuilt inside the epoch loop. When an iterator of the repeated dataset is
    read only by `next()`, once, now and then (`if step % interval == 0:`) or a few times (`for _
    in range(5)`), as a test set
    drawn from to show samples during training: it never comes round to a second pass.
    When the map runs in parallel (`num_parallel_calls`), a `prefetch` follows, and `fit` trains
    a network from Keras' applications or TF Hub on it: the decode overlaps with a step of many
    convolutions, which sets the pace, so a cache would save CPU time, not training time.
    When a commented-out `.cache()` sits at the map or just after it (`# ds = ds.cache()`):
    the author tried it and turned it off. When a `.cache()` or `.snapshot()` comes before the
    map: the author chose where to cache. When the map comes after a `batch` and its cost is
    only plain ops (no decode, parse or resize): it runs once per batch, on whole batches,
    already cheap. When the map only parses records read from TFRecord files
    (`tf.io.parse_single_example`, no decode or resize): such a corpus is in files because it is
    large (BERT pretraining, a year of radar grids: judges found a cache would exhaust memory),
    and parsing costs microseconds a record. When the pipeline is only read to validate and `f` is
    plain ops (no decode, parse, read or resize): a few passes over a validation set cost little
    beside the training epochs.

    ## Fix
    Insert `.cache()` right after the map. Marked unsafe: the cache holds the whole mapped
    dataset in memory (use `.cache(filename)` for large data). Not offered (hint only) when a
    `shuffle`, a random map or a `repeat` comes before the map: caching after a shuffle replays
    the first epoch's order in every epoch, and caching an infinite dataset never completes;
    there, move the map before the shuffle and cache after it. Silent when a `repeat` and another
    of these come before the map (`list_files(...).repeat(n).interleave(...).shuffle(...).map(f)`):
    the cache would have to move above the repeat, with the map, and no one-line advice fits.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            def preprocess(image):
                image = tf.cast(image, tf.float32) / 255.0
                image = tf.image.resize(image, [8, 8])
                return (image - 0.5) / 0.25

            images = np.arange(6 * 4 * 4 * 3, dtype=np.uint8).reshape(6, 4, 4, 3)
            ds = tf.data.Dataset.from_tensor_slices(images)
            ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.batch(3).prefetch(1)
            epoch_sums = []
            for epoch in range(3):
                total = 0.0
                for batch in ds:
                    total += float(tf.reduce_sum(batch))
                epoch_sums.append(total)
            epoch_sums = np.array(epoch_sums)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            def augment(image):
                image = tf.image.resize(image, [64, 64])
                return tf.image.random_flip_left_right(image)  # random: never cache after it

            def decode(image):
                return tf.image.resize(tf.cast(image, tf.float32), [64, 64])

            images = tf.zeros([8, 32, 32, 3])
            train = tf.data.Dataset.from_tensor_slices(images).map(augment).batch(4).prefetch(1)
            cached = tf.data.Dataset.from_tensor_slices(images).map(decode).cache().batch(4).prefetch(1)
            once = tf.data.Dataset.from_tensor_slices(images).map(decode).batch(4).prefetch(1)
            for epoch in range(3):
                for batch in train:
                    pass
                for batch in cached:
                    pass
            for batch in once:  # a single pass
                pass
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        model = pipelines(ctx)
        for step in model.maps():
            fn = model.map_function(step)
            if not fn.pure or not fn.is_expensive:
                continue
            if not fn.expensive and maps_whole_batches(step):
                continue  # plain ops on whole batches: one call per batch, already vectorised and cheap
            if _cached_before(step):
                continue  # the author caches the records and maps them each epoch: a choice made
            if _cache_commented_out(ctx, step):
                continue  # ``# ds = ds.cache()`` right there: the author tried it and turned it off
            if model.benchmarked(step) or model.paced_by_sleep(step):
                continue  # timed by a benchmark of this file: the uncached form shown on purpose
            if _parses_records(fn.expensive_ops, step):
                continue  # TFRecord files parsed: a corpus too big for memory, and parsing is cheap
            consumer = _repeated_consumer(ctx, model, step)
            if consumer is None:
                continue
            if _overlapped_with_a_big_step(ctx, model, step):
                continue  # the step sets the pace: a cache would save CPU time, not training time
            if consumer.validation and not fn.expensive:
                continue  # plain ops on a validation set, a few passes: little beside the training epochs
            label = function_label(step.call)
            why = fn.expensive or f"{fn.cost} ops"
            blockers = _upstream_blockers(model, step)
            if "repeat" in blockers and len(set(blockers)) > 1:
                continue  # ``list_files().repeat().interleave().shuffle().map()``: the cache would have to move
                # above the repeat with the map, and the shuffles around it rearranged: no one-line advice
            blocker = blockers[0] if blockers else None
            where = _WHERE.get(consumer.kind, "it is iterated repeatedly") if consumer.kind != "repeat" else "a repeat() follows"
            if consumer.validation:
                where = _validated(ctx, consumer)
            elif consumer.kind == "fit" and (method := _keras_method(getattr(consumer, "node", None))) not in (None, "fit", "fit_generator"):
                where = f"`{method}` reads it on every pass of the loop around it"  # ``model.evaluate(test_ds)`` per model
            if blocker:
                yield self.finding(
                    ctx, step.method_node(),
                    f"`map({label})` ({why}) gives the same results every epoch ({where}), but a cache after "
                    f"it would freeze the {blocker} before it: {_ADVICE[blocker]}",
                    label="re-mapped every epoch",
                )
                continue
            yield self.finding(
                ctx, step.method_node(),
                f"`map({label})` ({why}) gives the same results every epoch ({where}): add `.cache()` "
                f"after it if the mapped dataset fits in memory, or `.cache(filename)` to keep it on disk "
                f"(decoded images and dense grids take far more room than their files)",
                label="re-mapped every epoch",
                fix=partial(_add_cache, ctx, step),
                fix_title="Add .cache() after the map",
                fix_applicability="unsafe",
            )


def _validated(ctx: RuleContext, consumer: Consumer | _Repeat) -> str:
    """How often ``fit`` validates on the dataset: every epoch, or every ``validation_freq``."""
    node = consumer.node if isinstance(consumer, Consumer) else None
    frequency = keyword(node, "validation_freq") if isinstance(node, ast.Call) else None
    if frequency is None:
        return "fit validates on it every epoch"
    every = int_value(ctx.facts, frequency)
    return f"fit validates on it every {every} epochs" if every is not None else "fit validates on it repeatedly"


def _keras_method(node: ast.AST | None) -> str | None:
    """``evaluate`` of ``model.evaluate(test_ds)``: the Keras method that reads the dataset."""
    return node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None


_PARSERS = ("tf.io.parse_single_example", "tf.io.parse_example", "tf.io.parse_single_sequence_example",
            "tensorflow.io.parse_single_example", "tensorflow.io.parse_example")


def _parses_records(expensive: set[str], step: Step) -> bool:
    """The map only parses records (``tf.io.parse_single_example``) read from TFRecord files: such a
    corpus is written to files because it is large (BERT pretraining, a year of radar grids:
    three judges found a cache there would exhaust memory), and parsing a record costs
    microseconds beside a training step."""
    if not expensive or not all(op.startswith(_PARSERS) for op in expensive):
        return False  # nothing parsed, or decoded images too (work a cache of a small set saves)
    return any(s.qualname == "tensorflow.data.TFRecordDataset" or s.method in ("interleave", "parallel_interleave", "flat_map")
               for s in step.upstream())


def _add_cache(ctx: RuleContext, step: Step) -> Fix:
    """``ds.map(decode).batch(32)`` -> ``ds.map(decode).cache().batch(32)``: the map runs in the
    first epoch only."""
    end = ctx.source.span(step.call).end
    return Fix("Add .cache() after the map", (Edit(Span(end, end), ".cache()"),), "unsafe")


_ADVICE = {
    "shuffle": "map and `.cache()` first, then shuffle",
    "repeat": "`.cache()` after the map, then repeat",
    "random map": "cache the deterministic work before the random map",
    "file order of list_files": "`list_files(..., shuffle=False)`, map, `.cache()`, then shuffle",
}


class _Repeat:
    kind = "repeat"
    validation = False


def _repeated_consumer(ctx: RuleContext, model: Pipelines, step: Step) -> Consumer | _Repeat | None:
    """A consumer that iterates a pipeline containing ``step`` several times, with no cache after
    it: one that trains on it rather than one that validates on it, when there are both."""
    validating: Consumer | None = None
    for consumer in model.consumers:
        chain = list(consumer.step.upstream())
        if step not in chain:
            continue
        after = chain[: chain.index(step)]
        if any(s.method in ("cache", "snapshot") for s in after):
            continue
        if _taken_in_part(after):
            continue  # a cache read only in part is discarded at the end of every epoch
        if consumer.epochs and consumer.validation:
            validating = validating or consumer
            continue
        if consumer.epochs:
            return consumer
        if any(s.method == "repeat" and _repeats(ctx, s) for s in after) and not _one_pass(ctx, consumer) \
                and not takes_few(consumer.step, step) and not _iterator_sampled_rarely(ctx, consumer):
            return _Repeat()  # (``for x, y in ds.repeat().take(1)``: a preview reads one batch)
    return validating


_COMMENTED_CACHE = re.compile(r"^\s*#.*\.cache\(")


def _cache_commented_out(ctx: RuleContext, step: Step) -> bool:
    """A ``# ds = ds.cache()`` comment in the map's statement or the few lines after it: the
    author tried a cache there and turned it off (memory, a dataset too big): advice rejected."""
    statement = ctx.facts.statement_of(step.call)
    first = statement.lineno - 1
    last = (statement.end_lineno or statement.lineno) - 1 + 3
    lines = ctx.source.lines
    return any(_COMMENTED_CACHE.match(lines[i]) for i in range(first, min(last + 1, len(lines))))


def _cached_before(step: Step) -> bool:
    """A ``.cache()`` or ``.snapshot()`` comes before the map (``records.cache().shuffle(n)
    .map(parse)``): the author decided where to cache, and what is left each epoch is the map
    over records already in memory (judged wrong on a book's MNIST TFRecord pipeline)."""
    return any(s.method in ("cache", "snapshot") for s in step.upstream() if s is not step)


def _overlapped_with_a_big_step(ctx: RuleContext, model: Pipelines, step: Step) -> bool:
    """The map runs in parallel (``num_parallel_calls``) and a ``prefetch`` follows, so it
    overlaps with training, and what ``fit`` trains on it is a network from Keras' applications
    or TF Hub (pretrained or not): its many convolutions take longer than the decode (judged
    wrong on 17 fine-tuning notebooks and scripts; right on one TPU Colab of the same code)."""
    parallel = len(step.call.args) >= 2 or keyword(step.call, "num_parallel_calls") is not None
    if not (parallel and step.downstream_has({"prefetch"})):
        return False
    for consumer in model.uses_of(step):
        call = consumer.node
        if consumer.kind == "fit" and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and holds_pretrained_model(ctx, call.func.value):
            return True
    return False


def _taken_in_part(after: list[Step]) -> bool:
    """A ``take()`` follows the map before any ``repeat()`` (``after``: the steps after the map,
    last first): each epoch reads only part of what a cache after the map would hold."""
    for step in reversed(after):
        if step.method == "repeat":
            return False
        if step.method == "take":
            return True
    return False


def _one_pass(ctx: RuleContext, consumer: Consumer) -> bool:
    """A consumer that reads a repeated dataset once at most: ``for x in ds: break`` (a preview),
    ``fit(ds.repeat(), steps_per_epoch=n // batch, epochs=1)`` or ``evaluate(..., steps=...)``
    (the repeat only lets Keras count steps). A cache would fill and never be read."""
    if isinstance(consumer.node, (ast.For, ast.AsyncFor)):
        return any(isinstance(stmt, ast.Break) for stmt in consumer.node.body)
    if consumer.kind != "fit" or not isinstance(consumer.node, ast.Call):
        return False
    call = consumer.node
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "fit":
        return True  # evaluate / predict: one pass
    epochs = keyword(call, "epochs")
    return epochs is None or int_value(ctx.facts, epochs) == 1


def _iterator_sampled_rarely(ctx: RuleContext, consumer: Consumer) -> bool:
    """``iter(ds.repeat())`` whose every ``next()`` runs once, now and then in a loop (under
    ``if step % interval == 0``) or a few times (``for _ in range(5)``): a test set drawn from to show a few samples during training
    never comes round to a second pass, whatever the repeat allows (judged wrong on pix2pix and
    CycleGAN notebooks). Not when the iterator is read any other way or cannot be followed."""
    call = consumer.node
    if consumer.kind != "iter" or not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                                       and call.func.id == "iter"):
        return False
    facts = ctx.facts
    where = _iterator_binding(ctx, call)
    if where is None:
        return False
    scope, name = where
    reads = []
    for node in facts.names.get(name, ()):
        if isinstance(node.ctx, ast.Load) and facts.enclosing_function(node) is scope:
            parent = facts.parent(node)
            if not (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next"
                    and parent.args and parent.args[0] is node):
                return False  # handed on, looped over, zipped...: read how often is not known
            reads.append(parent)
    return bool(reads) and all(not facts.enclosing_loops(read) or _now_and_then(facts, read)
                               or ctx.hot.runs_few_times([read], PREVIEW) for read in reads)


def _iterator_binding(ctx: RuleContext, call: ast.Call) -> tuple[ast.AST | None, str] | None:
    """Where ``iter(ds)`` is kept: (its def, or None at module level; the name), from ``it =
    iter(ds)`` or a def called once with it as an argument (``gan.train(iter(train), iter(test))``)."""
    facts = ctx.facts
    parent = facts.parent(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        scope = facts.enclosing_function(call)
        if scope is not None and facts.is_called_repeatedly(scope):
            return None
        if facts.enclosing_loops(call):
            return None
        return scope, parent.targets[0].id
    if isinstance(parent, ast.Call) and call in parent.args and isinstance(parent.func, (ast.Name, ast.Attribute)):
        fn = facts.resolve_def(parent.func, parent)
        if fn is None and isinstance(parent.func, ast.Attribute):  # ``gan = Pix2Pix(); gan.train(...)``
            fn = next((method for cls, method in facts.methods_named(parent.func.attr)
                       if facts.built_from_class(parent.func.value, cls)), None)
        if fn is None:
            return None
        param = parameter(fn, parent.args.index(call))
        if param is None or facts.enclosing_loops(parent) or facts.is_called_repeatedly(fn):
            return None
        return fn, param
    return None


def _now_and_then(facts, node: ast.AST) -> bool:
    """``node`` runs under an ``if`` on a remainder (``if i % interval == 0:``) in its loop."""
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if isinstance(ancestor, ast.If) and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
                                                for n in ast.walk(ancestor.test)):
            return True
    return False


def _repeats(ctx: RuleContext, step: Step) -> bool:
    count = step.call.args[0] if step.call.args else keyword(step.call, "count")
    if count is None:
        return True
    value = int_value(ctx.facts, count)
    return value is None or value > 1 or value == -1


def _upstream_blockers(model: Pipelines, step: Step) -> list[str]:
    """What comes before the map that a cache right after it would freeze or never finish
    reading, nearest first."""
    blockers = []
    for before in (step.parent.upstream() if step.parent else ()):
        if before.method == "shuffle":
            blockers.append("shuffle")
        elif before.method == "repeat":
            blockers.append("repeat")
        elif before.method == "map" and model.map_function(before).random:
            blockers.append("random map")
        elif before.qualname and before.qualname.endswith("list_files") and not _no_shuffle(before):
            blockers.append("file order of list_files")
    return blockers


def _no_shuffle(step: Step) -> bool:
    return any(k.arg == "shuffle" and getattr(k.value, "value", None) is False for k in step.call.keywords)
