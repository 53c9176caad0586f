"""A keystroke re-parses only the statements it touched and re-uses the facts of the others
(tfperf_lsp/analysis/reparse.py, ModuleFacts' statement walks, the per-node caches): what the
user sees must be what a fresh analysis of the same text gives. Checked on random edits of
every kind (characters typed or deleted, a line duplicated or removed, a name renamed), chained
through one document session, on our examples, every rule's fixtures and the shared real-world
corpus where present."""
from __future__ import annotations

import glob
import os
import random
import re

import pytest

from tfperf_lsp.engine import analyze
from tfperf_lsp.session import DocumentSession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALWORLD = os.environ.get("TFPERF_REALWORLD", "/tmp/realworld")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _shown(analysis) -> list[tuple]:
    return [(f.code, f.span, f.message, f.label, f.cited_lines, f.severity, f.fix_title, f.fix_applicability)
            for f in analysis.findings]


def _edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    line = lines[row]
    kind = rng.random()
    if kind < 0.35 and line:  # a character typed
        col = rng.randrange(len(line) + 1)
        lines[row] = line[:col] + rng.choice("x1_.( ,=") + line[col:]
    elif kind < 0.55 and line:  # a character deleted
        col = rng.randrange(len(line))
        lines[row] = line[:col] + line[col + 1:]
    elif kind < 0.7:  # a line duplicated (pasted)
        lines.insert(row, line)
    elif kind < 0.8:  # a line removed
        del lines[row]
    else:  # a name renamed where it stands
        names = list(_NAME.finditer(line))
        if names:
            match = rng.choice(names)
            lines[row] = line[:match.start()] + match.group() + "2" + line[match.end():]
    return "\n".join(lines)


def _check(paths: list[str], edits_per_file: int, seed: int) -> int:
    rng = random.Random(seed)
    compared = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        session = DocumentSession(path)
        if session.update(text).parse_error is not None:
            continue
        good = text
        for _ in range(edits_per_file):
            text = _edit(good, rng)
            incremental = session.update(text)
            fresh = analyze(text, path)
            if fresh.parse_error is not None:
                assert incremental.parse_error is not None, path
                continue  # the session shows the last good findings (tests/test_session.py); the next edit starts from it
            assert _shown(incremental) == _shown(fresh), f"{path}: the findings differ from a fresh analysis"
            good = text
            compared += 1
    return compared


def test_random_edits_of_our_examples_and_fixtures_give_a_fresh_analysis():
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    paths += sorted(glob.glob(os.path.join(ROOT, "tests", "rules", "fixtures", "*.py")))
    assert _check(paths, edits_per_file=10, seed=5) > 200


@pytest.mark.skipif(not os.path.isdir(REALWORLD), reason=f"the shared real-world corpus is not unpacked at {REALWORLD}")
def test_random_edits_of_real_world_files_give_a_fresh_analysis():
    paths = sorted(glob.glob(os.path.join(REALWORLD, "**", "*.py"), recursive=True))
    paths = random.Random(13).sample(paths, min(100, len(paths)))
    assert _check(paths, edits_per_file=6, seed=17) > 150
