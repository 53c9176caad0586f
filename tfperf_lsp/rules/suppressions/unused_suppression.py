"""TFP901: suppression comments that suppress nothing (ruff's RUF100 for tfperf). Opt-in."""
from __future__ import annotations

from typing import Iterable

from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext


class UnusedSuppression(Rule):
    code = "TFP901"
    name = "unused-suppression"
    category = "suppressions"
    severity = Severity.INFORMATION
    summary = "opt-in: `# tfperf: ignore[...]` / `# noqa: TFP...` that suppresses nothing or names no rule"
    doc_url = "https://docs.astral.sh/ruff/rules/unused-noqa/"
    opt_in = True  # only with `select`/`extend-select` naming it, as ruff's RUF100
    measurable = False
    docs = """
    ## What it does
    Reports suppression comments (`# tfperf: ignore`, `# tfperf: ignore[CODE]`, `# noqa: CODE`,
    `# tfperf: ignore-file[CODE]`) that suppressed no finding in this run, that name a rule which
    is not enabled, or that name a code no rule has. Codes of other tools in a `# noqa` comment,
    and a bare `# noqa`, are left alone: they may be for another linter.

    ## Why
    A suppression outlives the code it was written for. Once the finding is gone, the comment
    only hides the next real finding on that line. Turn it on in CI with
    `tfperf check --extend-select TFP901`.

    ## When it stays silent
    Unless selected (`select`/`extend-select` naming `TFP901`, `unused-suppression`, `TFP9` or
    `suppressions`); for suppressions that suppressed something.

    ## Fix
    Remove the comment, or the codes it lists that are reported.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf
            x = tf.ones([2])  # tfperf: ignore[TFP101]
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def f(x, step):
                return x * tf.cast(step, tf.float32)

            for i in range(3):
                f(tf.ones([2]), i)  # noqa: TFP101
            x = 1  # noqa: E501
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # the engine reports these after every other rule ran (see suppressions.py)
