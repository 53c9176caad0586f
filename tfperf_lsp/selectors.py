"""Rule selectors, resolved the way ruff resolves them.

A selector is ``ALL``, the prefix ``TFP``, a category (``retrace``), a code prefix (``TFP1``,
``TFP10``), a full code (``TFP101``) or a rule name (``python-scalar-argument``). Each settings
layer (pyproject, then the editor or the command line) may ``select`` (start again from nothing),
``extend-select`` (add to what the earlier layers enabled), ``ignore`` and ``extend-ignore``.
Within a layer the selectors are applied from the least specific to the most specific, so
``select = ["retrace"], ignore = ["TFP101"]`` and ``ignore = ["retrace"], select = ["TFP101"]``
both do what they say; at equal specificity ``ignore`` wins.
"""
from __future__ import annotations

import functools

from dataclasses import dataclass
from functools import lru_cache

from tfperf_lsp.model import CATEGORIES

# Specificity, least to most: ALL < TFP < category < TFPn < TFPnn < code / name.
_ALL, _LINTER, _CATEGORY = 0, 1, 2


@dataclass(frozen=True)
class Selector:
    text: str
    specificity: int
    codes: frozenset[str]


@lru_cache(maxsize=1)
def _rules():
    from tfperf_lsp.rules import ALL_RULES  # the registry imports config; import late

    return tuple(ALL_RULES)


@functools.lru_cache(maxsize=1)
def all_codes() -> frozenset[str]:
    return frozenset(r.code for r in _rules())


@functools.lru_cache(maxsize=1)
def default_codes() -> frozenset[str]:
    """What runs when nothing is selected: every rule but the opt-in ones (the registry is fixed
    once imported: computed once, asked for every rule of every file)."""
    return frozenset(r.code for r in _rules() if not getattr(r, "opt_in", False))


def parse(text: str) -> Selector | None:
    """The rules ``text`` names, or None when it names none."""
    value = text.strip()
    rules = _rules()
    if value.upper() == "ALL":
        return Selector(value, _ALL, all_codes())
    if value in CATEGORIES:
        codes = frozenset(r.code for r in rules if r.category == value)
        return Selector(value, _CATEGORY, codes) if codes else None
    by_name = [r.code for r in rules if r.name == value.lower()]
    if by_name:
        return Selector(value, 10, frozenset(by_name))
    upper = value.upper()
    if upper.startswith("TFP") and (len(upper) == 3 or upper[3:].isdigit()):
        codes = frozenset(r.code for r in rules if r.code.startswith(upper))
        if not codes:
            return None
        specificity = _LINTER if len(upper) == 3 else _CATEGORY + len(upper) - 3
        return Selector(value, specificity, codes)
    return None


def apply_layer(
    enabled: frozenset[str],
    select: list[str] | None,
    extend_select: list[str],
    ignore: list[str],
    unknown: list[str],
) -> frozenset[str]:
    """One settings layer on top of ``enabled``. Unknown selectors are appended to ``unknown``."""
    chosen: list[tuple[Selector, bool]] = []
    for values, on in ((select or []), True), (extend_select, True), (ignore, False):
        for value in values:
            selector = parse(value)
            if selector is None:
                unknown.append(value)
            else:
                chosen.append((selector, on))
    result = set() if select is not None else set(enabled)
    for specificity in sorted({s.specificity for s, _ in chosen}):
        for selector, on in chosen:
            if selector.specificity == specificity and on:
                result |= selector.codes
        for selector, on in chosen:
            if selector.specificity == specificity and not on:
                result -= selector.codes
    return frozenset(result)
