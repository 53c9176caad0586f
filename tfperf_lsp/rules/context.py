"""What a rule sees: ``RuleContext``, one per analysis, shared by every rule.

Everything on it is typed so that ``ctx.`` completes in an editor. Facts that several rules
derive from the module (the tf.function calls made from loops, the tf.data pipelines, ...) are
plain functions of the context, computed once per analysis with ``ctx.derived(function)``:

    calls = ctx.derived(eager_loop_calls)   # computed on first use, then shared
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from tfperf_lsp.analysis import pins
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.hotness import HotCode
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.config import Settings

if TYPE_CHECKING:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

T = TypeVar("T")


@dataclass
class RuleContext:
    """The source, the shared facts, the settings and the workspace of one analysis."""

    source: SourceText
    facts: ModuleFacts
    settings: Settings
    path: str | None = None
    # Cross-file facts (tf.functions imported from the workspace); None for a lone file.
    workspace: WorkspaceIndex | None = None
    # Other files the findings relied on: a change to one of them re-analyses this file.
    dependencies: set[str] = field(default_factory=set)
    # How often code runs: tests, builders, loops (analysis/hotness.py).
    hot: HotCode = field(init=False)
    _derived: dict[Callable[..., Any], Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.hot = HotCode(self.facts, self.path)

    def derived(self, compute: Callable[[RuleContext], T]) -> T:
        """``compute(self)``, computed once per analysis and shared by every rule that asks."""
        if compute not in self._derived:
            self._derived[compute] = compute(self)
        result: T = self._derived[compute]
        return result

    def tensorflow_pinned_below(self, version: tuple[int, int]) -> bool:
        """Whether the project pins TensorFlow to releases older than ``version`` (its
        requirements, a notebook's ``!pip install``: analysis/pins.py)."""
        newest = self.derived(_newest_pinned_tensorflow)
        return newest is not None and newest < version

    def derived_if_computed(self, compute: Callable[[RuleContext], T]) -> T | None:
        """What ``derived(compute)`` returned in this analysis, None if no rule asked for it."""
        result: T | None = self._derived.get(compute)
        return result


def _newest_pinned_tensorflow(ctx: RuleContext) -> tuple[int, int] | None:
    roots = tuple(ctx.workspace.roots) if ctx.workspace is not None else ()
    return pins.newest_pinned(ctx.source.text, ctx.path, roots)
