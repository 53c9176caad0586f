"""After an edit that only adds or removes blank lines, the rules' findings of the version before
are moved instead of computed again (tfperf_lsp/blank_line_edit.py). What the user sees must be
what a fresh analysis gives: checked on random edits of our examples, of every rule's fixtures
and of the shared real-world corpus where present, fixes included."""
from __future__ import annotations

import glob
import os
import random
from dataclasses import replace

import pytest

from tfperf_lsp import blank_line_edit
from tfperf_lsp.analysis.reparse import Parsed
from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze, fix_for
from tfperf_lsp.session import DocumentSession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALWORLD = os.environ.get("TFPERF_REALWORLD", "/tmp/realworld")


def _shown(analysis) -> list[tuple]:
    return [(f.code, f.span, f.message, f.label, f.cited_lines, f.severity, f.fix_title, f.fix_applicability)
            for f in analysis.findings]


@pytest.fixture
def reuses(monkeypatch) -> list[bool]:
    """Whether each edit's findings were moved (True) or computed by the rules (False)."""
    answers: list[bool] = []
    gap_of, relocated = blank_line_edit.blank_gap, blank_line_edit.relocated

    def gap_spy(*args):  # asked before the parse
        gap = gap_of(*args)
        answers.append(False)
        return gap

    def relocated_spy(*args):  # after it, when there is a gap
        result = relocated(*args)
        answers[-1] = result is not None
        return result

    monkeypatch.setattr(blank_line_edit, "blank_gap", gap_spy)
    monkeypatch.setattr(blank_line_edit, "relocated", relocated_spy)
    return answers


# What pressing Enter, pasting empty lines or deleting one does; a comment line now and then,
# which the rules must read again (some rules read comments).
def _blank_edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    row = rng.randrange(len(lines) + 1)
    kind = rng.random()
    if kind < 0.25:
        blanks = [i for i, line in enumerate(lines) if not line.strip()]
        if blanks:
            del lines[rng.choice(blanks)]
            return "\n".join(lines)
    if kind < 0.85:
        indent = rng.choice(["", "    ", "        ", "\t", "  "])
        lines[row:row] = [indent] * rng.choice([1, 1, 1, 2, 3])
    else:
        lines.insert(row, rng.choice(["# note", "    # tfperf: ignore", "# tfperf: device=gpu cc=8.0"]))
    return "\n".join(lines)


def _check(paths: list[str], edits_per_file: int, seed: int, fixes_per_file: int) -> tuple[int, int]:
    """Random chains of such edits through a document session, each compared with a fresh
    analysis of the same text. Returns (edits compared, fixes compared)."""
    rng = random.Random(seed)
    compared = fixes = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        session = DocumentSession(path)
        if session.update(text).parse_error is not None:
            continue
        for _ in range(edits_per_file):
            text = _blank_edit(text, rng)
            incremental = session.update(text)
            fresh = analyze(text, path)
            assert (incremental.parse_error is None) == (fresh.parse_error is None), path
            assert _shown(incremental) == _shown(fresh), f"{path}: the findings differ from a fresh analysis"
            compared += 1
            with_fixes = [(a, b) for a, b in zip(incremental.findings, fresh.findings) if a.fix_title]
            for mine, theirs in rng.sample(with_fixes, min(fixes_per_file, len(with_fixes))):
                assert fix_for(incremental, mine) == fix_for(fresh, theirs), f"{path}: the fix of {mine.id} differs"
                fixes += 1
    return compared, fixes


def test_random_blank_line_edits_of_our_examples_and_fixtures_give_a_fresh_analysis(reuses):
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    paths += sorted(glob.glob(os.path.join(ROOT, "tests", "rules", "fixtures", "*.py")))
    compared, fixes = _check(paths, edits_per_file=8, seed=7, fixes_per_file=1)
    assert compared > 300 and fixes > 40, (compared, fixes)
    # Most of these edits move the findings: the point of it.
    assert sum(reuses) > len(reuses) * 0.4, (sum(reuses), len(reuses))


@pytest.mark.skipif(not os.path.isdir(REALWORLD), reason=f"the shared real-world corpus is not unpacked at {REALWORLD}")
def test_random_blank_line_edits_of_real_world_files_give_a_fresh_analysis(reuses):
    paths = sorted(glob.glob(os.path.join(REALWORLD, "**", "*.py"), recursive=True))
    paths = random.Random(9).sample(paths, min(120, len(paths)))
    compared, _ = _check(paths, edits_per_file=4, seed=9, fixes_per_file=0)
    assert compared > 300
    assert sum(reuses) > len(reuses) * 0.3, (sum(reuses), len(reuses))


_TEXT = "\n" * 30 + '''import tensorflow as tf

scale = tf.constant(2.0)


@tf.function
def step(x):
    return x * scale


def train(xs):
    total = 0.0
    for x in xs:
        total += step(x)

    return total


first = train([tf.constant(1.0)])
scale = tf.constant(3.0)
second = train([tf.constant(1.0)])
'''


def _session_after(text: str) -> DocumentSession:
    session = DocumentSession("train.py")
    assert session.update(text).findings, "the sample must have findings to move"
    return session


def test_enter_between_statements_moves_the_findings_and_renames_the_lines_messages_name(reuses):
    session = _session_after(_TEXT)
    edited = _TEXT.replace("    for x in xs:", "\n    for x in xs:")
    moved = session.update(edited)
    assert reuses == [True]
    assert _shown(moved) == _shown(analyze(edited, "train.py"))
    # TFP201 names the line of the later assignment, which moved with it
    stale = next(f for f in moved.findings if f.code == "TFP201")
    assert f"line {edited.split(chr(10)).index('scale = tf.constant(3.0)') + 1}" in stale.message
    assert stale.message != next(f for f in analyze(_TEXT, "train.py").findings if f.code == "TFP201").message


@pytest.mark.parametrize("where, edit", [
    ("a comment line (some rules read comments)", lambda t: t.replace("    for x in xs:", "    # note\n    for x in xs:")),
    ("inside brackets", lambda t: t.replace("return x * scale", "return (x\n\n * scale)")),
    ("inside a string", lambda t: t.replace("scale = tf.constant(2.0)", 'doc = """a\nb"""\nscale = tf.constant(2.0)')),
    ("between a decorator and its def", lambda t: t.replace("@tf.function\n", "@tf.function\n\n")),
    ("in a header of several lines", lambda t: t.replace("def train(xs):", "def train(\n\n        xs):")),
    ("above line 30, where a device directive is read", lambda t: t.replace("import tensorflow as tf", "import tensorflow as tf\n")),
    ("a line typed", lambda t: t.replace("    return total", "    return total + 0")),
])
def test_other_edits_run_the_rules_again(reuses, where, edit):
    text = _TEXT
    if where in ("inside a string", "inside brackets", "in a header of several lines"):
        text = edit(_TEXT)  # the construct first, then a blank line added inside it
        edit = _blank_line_inside(where)
    if where.startswith("above line 30"):
        text = text.lstrip("\n")
    session = _session_after(text)
    edited = edit(text)
    assert edited != text
    again = session.update(edited)
    assert reuses[-1] is False, where
    assert _shown(again) == _shown(analyze(edited, "train.py"))


def _blank_line_inside(where: str):
    return {
        "inside a string": lambda t: t.replace('"""a\nb"""', '"""a\n\nb"""'),
        "inside brackets": lambda t: t.replace("(x\n\n * scale)", "(x\n\n\n * scale)"),
        "in a header of several lines": lambda t: t.replace("def train(\n\n        xs):", "def train(\n\n\n        xs):"),
    }[where]


def test_a_blank_line_removed_after_a_backslash_runs_the_rules_again(reuses):
    # `third = train \` joined with an empty line ends the statement; without the empty line
    # the next line's brackets make a call of it
    text = _TEXT.replace("second = train", "third = train \\\n\n([tf.constant(1.0)])\nsecond = train")
    session = _session_after(text)
    edited = text.replace("third = train \\\n\n", "third = train \\\n")
    again = session.update(edited)
    assert reuses[-1] is False
    assert _shown(again) == _shown(analyze(edited, "train.py"))


def test_new_settings_or_another_file_changed_run_the_rules_again(tmp_path, reuses):
    session = _session_after(_TEXT)
    edited = _TEXT.replace("    for x in xs:", "\n    for x in xs:")
    session.update(edited, Settings().with_overrides({"select": ["ALL"]}))
    assert reuses == [False]

    earlier = session.last_good.rule_output
    other = tmp_path / "helpers.py"
    other.write_text("x = 1\n")
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    index = WorkspaceIndex([str(tmp_path)])
    with_dependency = replace(earlier, dependencies=((str(other), index.stamp_of(str(other))),))
    lines, tree = session.last_good.source.lines, session.last_good.ctx.facts.tree
    again = edited.replace("    for x in xs:", "\n    for x in xs:").split("\n")
    assert blank_line_edit.moved(with_dependency, lines, tree, again, earlier.settings, index, None) is not None
    # the moved analysis still names the file it read, so that a change there re-analyses this one
    through_engine = analyze("\n".join(again), "train.py", earlier.settings, index,
                             previous=Parsed(lines, tree), earlier=with_dependency)
    assert reuses[-1] is True and str(other) in through_engine.ctx.dependencies
    other.write_text("x = 2\n")  # a file the findings read has changed since
    assert blank_line_edit.moved(with_dependency, lines, tree, again, earlier.settings, index, None) is None


def test_the_fix_of_a_moved_finding_edits_where_the_finding_now_is(reuses):
    text = "\n" * 30 + '''import tensorflow as tf


def train(data, model):
    for batch in data:
        step = tf.function(model)
        y = step(batch)
    return y
'''
    session = _session_after(text)
    edited = text.replace("def train", "\n\ndef train")
    moved = session.update(edited)
    assert reuses == [True]
    finding = next(f for f in moved.findings if f.fix_title)
    fresh = analyze(edited, "train.py")
    assert fix_for(moved, finding) == fix_for(fresh, fresh.finding(finding.id))
    assert fix_for(moved, finding).edits[0].span.start.line >= 33


def test_dropping_the_trees_drops_the_rule_output_that_holds_them():
    session = _session_after(_TEXT)
    assert session.last_good.rule_output is not None
    session.drop_trees()
    assert session.last_good.rule_output is None  # the next edit runs the rules again


def test_a_blank_line_between_a_labelling_comment_and_its_statement_runs_the_rules_again(reuses):
    code = ("# tfperf: device=gpu cc=8.6\n" + "\n" * 30 + "import tensorflow as tf\nfrom tensorflow.keras import layers, mixed_precision\n\n"
            "mixed_precision.set_global_policy('mixed_float16')\ninputs = tf.keras.Input(shape=(784,))\n"
            "x = layers.Dense(4096, activation='relu')(inputs)\n"
            "# INCORRECT: softmax and model output will be float16\n"
            "outputs = layers.Dense(10, activation='softmax')(x)\n")
    session = DocumentSession("guide.py")
    assert not [f for f in session.update(code).findings if f.code == "TFP602"]  # labelled: the guide's mistake
    parted = code.replace("float16\n", "float16\n\n")
    incremental, fresh = session.update(parted), analyze(parted, "guide.py")
    assert _shown(incremental) == _shown(fresh) and [f for f in fresh.findings if f.code == "TFP602"]
    assert reuses[-1] is False
