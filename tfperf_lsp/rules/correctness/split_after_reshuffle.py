"""TFP205: train and test splits cut with take/skip from a dataset that reshuffles on every pass."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword
from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._pipeline import Pipelines, Step, pipelines

# Sources that shuffle their elements on every pass unless told not to (``shuffle=True`` by
# default): Keras' directory loaders shuffle file paths with ``Dataset.shuffle``, and so does
# ``Dataset.list_files``.
_SHUFFLING_SOURCES = {
    "keras.utils.image_dataset_from_directory", "keras.utils.text_dataset_from_directory",
    "keras.utils.audio_dataset_from_directory", "keras.preprocessing.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory", "tensorflow.data.Dataset.list_files",
}
_TITLE = "Shuffle once: reshuffle_each_iteration=False"


class SplitAfterReshuffle(Rule):
    code = "TFP205"
    name = "split-after-reshuffle"
    category = "correctness"
    severity = Severity.WARNING
    summary = ("Train and test splits cut with `take`/`skip` from a dataset that reshuffles on every pass: "
               "each epoch draws another split, and the test elements are trained on")
    doc_url = "https://www.tensorflow.org/api_docs/python/tf/data/Dataset#shuffle"
    fixable = True
    docs = """
    ## What it does
    Finds a dataset split with `take` and `skip` (`train = ds.take(n)`, `test = ds.skip(n)`, or
    `val = ds.skip(a).take(b)`) when the dataset is shuffled before the split on every pass:
    `ds.shuffle(buffer)` (`reshuffle_each_iteration` defaults to True), or a source that shuffles
    by default (`keras.utils.image_dataset_from_directory`, `text_dataset_from_directory`,
    `audio_dataset_from_directory`, `tf.data.Dataset.list_files`).

    ## Why is this slow
    It is a correctness trap, not a speed problem. Each pass over `train` or `test` runs the
    shuffle again, so `take(n)` gets another `n` elements every epoch: over the epochs the model
    trains on almost every element, the test ones included, and the test score measures
    memorisation. Measured on TF 2.21: with `range(100).shuffle(100)` split 80/20, 19 of the 20
    test elements were in the next pass's training split; with `image_dataset_from_directory`
    (20 images, batches of 2, split 7/3 batches), 3 of the 6 test images were; with
    `reshuffle_each_iteration=False`, none.

    ## When it stays silent
    When the shuffle says `reshuffle_each_iteration=False` (or anything but the default), when a
    directory loader or `list_files` is given `shuffle=False`, when a `cache()` or `repeat()` comes
    between the shuffle and the split (the order a cache replays is not what this rule models), when
    the shuffle comes after the split, when only one of `take` and `skip` is used on the dataset, or
    when a split is not assigned to a name (`for x in ds.take(1)`: a look at one batch).

    ## Fix
    For a `.shuffle(...)` written in the file: `reshuffle_each_iteration=False`, so every pass
    draws the same order and the splits stay apart. Marked unsafe: the training split then comes in
    the same order every epoch; shuffle it on its own after the split (`train =
    train.shuffle(...)`), which the message says. For a directory loader there is no fix: split
    with its own `validation_split=..., subset="both", seed=...`, which splits the files before
    shuffling.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            x = np.arange(100, dtype="float32").reshape(100, 1)
            dataset = tf.data.Dataset.from_tensor_slices((x, 2 * x)).shuffle(100)
            train = dataset.take(80)
            test = dataset.skip(80)
            model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(train.batch(20), epochs=2, verbose=0)
            trained_on = {float(a[0]) for a, _ in train.as_numpy_iterator()}
            tested_on = {float(a[0]) for a, _ in test.as_numpy_iterator()}
            """,
            changes_outputs=True,  # the split itself changes, which is the point
            verify="assert trained_on & tested_on  # test elements turn up in the next pass's training split",
            verify_fixed="assert not trained_on & tested_on and len(trained_on | tested_on) == 100",
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            x = np.arange(100, dtype="float32").reshape(100, 1)
            dataset = tf.data.Dataset.from_tensor_slices((x, 2 * x)).shuffle(100, reshuffle_each_iteration=False)
            train = dataset.take(80).shuffle(80)  # a new order every epoch, within the training split
            test = dataset.skip(80)
            model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(train.batch(20), epochs=2, verbose=0)
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        text = ctx.source.text
        if ".take(" not in text or ".skip(" not in text:
            return
        facts = ctx.facts
        pipes = pipelines(ctx)
        reported: set[Step] = set()
        for step in pipes.steps:
            split = step.parent
            if step.method != "skip" or split is None or split in reported:
                continue
            takes = [child for child in split.children if child.method == "take" and _assigned(facts, child)]
            if not takes or not _assigned(facts, step) or not _one_trains(ctx, pipes, [*takes, step]):
                continue
            shuffler = _reshuffler(split)
            if shuffler is None:
                continue
            reported.add(split)
            names = f"`{_target(facts, takes[0])}` and `{_target(facts, step)}`"
            line = shuffler.call.lineno
            if shuffler.method == "shuffle":
                yield self.finding(
                    ctx, step.method_node(),
                    f"{names} are cut with `take`/`skip` from a dataset that the `.shuffle(...)` on line {line} "
                    f"reshuffles on every pass (`reshuffle_each_iteration` defaults to True): each epoch draws "
                    f"another split, so the elements of one end up in the other - shuffle with "
                    f"`reshuffle_each_iteration=False` and shuffle the training split on its own, or split first",
                    label="split reshuffled every epoch",
                    fix=partial(_shuffle_once, ctx, shuffler.call),
                    fix_title=_TITLE,
                    fix_applicability="unsafe",
                    cites=(line,),
                )
            else:
                source = shuffler.qualname.rsplit(".", 1)[-1] if shuffler.qualname else shuffler.method
                instead = ("give it `shuffle=False` and shuffle after the split" if source == "list_files" else
                           "split with its own `validation_split=..., subset=\"both\", seed=...` instead")
                yield self.finding(
                    ctx, step.method_node(),
                    f"{names} are cut with `take`/`skip` from `{source}(...)` (line {line}), which shuffles "
                    f"on every pass (`shuffle=True` by default): each epoch draws another split, so the elements "
                    f"of one end up in the other - {instead}",
                    label="split reshuffled every epoch",
                    cites=(line,),
                )


def _one_trains(ctx: RuleContext, pipes: Pipelines, splits: list[Step]) -> bool:
    """A model trains on one of the splits (or on a pipeline built on it): ``fit`` on it (not as
    ``validation_data``), or a loop over it that runs a training step. Two held-out splits mixed
    with each other (a validation and a test split of the validation folder) train on neither."""
    for split in splits:
        for use in pipes.uses_of(split):
            node = use.node
            if use.kind == "fit" and not use.validation and not (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr != "fit"):
                return True
            if use.kind == "for" and ctx.hot.trains(node):
                return True
    return False


def _assigned(facts: ModuleFacts, step: Step) -> bool:
    """The split is kept under a name (``test = ds.skip(n)``, ``val = ds.skip(a).take(b)``)."""
    statement = facts.statement_of(step.call)
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
        and isinstance(statement.targets[0], ast.Name)


def _target(facts: ModuleFacts, step: Step) -> str:
    statement = facts.statement_of(step.call)
    target = statement.targets[0] if isinstance(statement, ast.Assign) else None
    return target.id if isinstance(target, ast.Name) else step.method


def _reshuffler(split: Step) -> Step | None:
    """The step before the split that shuffles on every pass: a ``shuffle`` with the default
    ``reshuffle_each_iteration``, or a source that shuffles by default. None when there is none,
    or when a ``cache``/``repeat`` comes first (walking up from the split)."""
    for step in split.upstream():
        if step.method in ("cache", "repeat"):
            return None
        if step.method == "shuffle":
            return step if keyword(step.call, "reshuffle_each_iteration") is None else None
        if step.is_source:
            if step.qualname not in _SHUFFLING_SOURCES:
                return None
            flag = keyword(step.call, "shuffle")
            return step if flag is None or (isinstance(flag, ast.Constant) and flag.value is True) else None
    return None


def _shuffle_once(ctx: RuleContext, call: ast.Call) -> Fix | None:
    """``ds.shuffle(100)`` -> ``ds.shuffle(100, reshuffle_each_iteration=False)``."""
    edit = replace_in_statement(
        ctx.source, ctx.facts.statement_of(call), call, cst.Call,
        lambda c: with_keyword(c, "reshuffle_each_iteration", "False"),
    )
    return Fix(_TITLE, (edit,), "unsafe") if edit else None
