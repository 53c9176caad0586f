"""Re-parsing only the statements an edit touched gives what ``ast.parse`` of the whole text
gives, on random edits of real files (ours always; the shared real-world corpus where present)."""
from __future__ import annotations

import ast
import glob
import os
import random

import pytest

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.reparse import Parsed, reparse
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.engine import analyze
from tfperf_lsp.session import DocumentSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REALWORLD = os.environ.get("TFPERF_REALWORLD", "/tmp/realworld")

# What typing does: characters, brackets and quotes left open, new lines, indentation, deletions.
_SNIPPETS = ["x", " ", "(", ")", "[", "'", '"""', ":", "\n", "\n    ", "\\", "#", "else:", "    ", "\t",
             "tf.", "= 1", "def f():\n", "@tf.function\n", "; y = 2", "\r\n", "async ", "return x\n"]


def _edit(text: str, rng: random.Random) -> str:
    if not text:
        return rng.choice(_SNIPPETS)
    at = rng.randrange(len(text))
    kind = rng.random()
    if kind < 0.45:
        return text[:at] + rng.choice(_SNIPPETS) + text[at:]
    if kind < 0.7:
        return text[:at] + text[at + rng.randint(1, 12):]
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    if kind < 0.8:
        lines.insert(row, lines[rng.randrange(len(lines))])  # a line pasted elsewhere
    elif kind < 0.9:
        lines[row] = "    " + lines[row]
    else:
        lines[row] = lines[row][4:] if lines[row].startswith("    ") else lines[row].lstrip()
    return "\n".join(lines)


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _parsed(lines: list[str], tree: ast.Module) -> Parsed:
    """A version as the document session keeps it: with its facts' walk of each statement, which
    lets an edit that adds or removes lines move the statements below it instead of parsing them."""
    facts = ModuleFacts(tree, SourceText("\n".join(lines)), known_walks={})
    return Parsed(lines, tree, facts.statement_walks)


def _check_random_edits(paths: list[str], edits_per_file: int, seed: int) -> tuple[int, int]:
    """Chains of edits, each parsed against the last version that parsed (as the editor does);
    an edit that breaks the file is undone half of the time (typing on would mostly keep it
    broken). Returns (edits that parsed, of those the ones answered without a whole-file parse)."""
    rng = random.Random(seed)
    parsed = reused = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        try:
            good = _parsed(SourceText(text).lines, ast.parse(text))
        except (SyntaxError, ValueError):
            continue
        good_text = text
        for _ in range(edits_per_file):
            text = _edit(text if rng.random() < 0.5 else good_text, rng)
            lines = SourceText(text).lines
            tree = reparse(good, lines)
            try:
                expected = ast.parse(text)
            except (SyntaxError, ValueError):
                assert tree is None, f"{path}: a slice parsed where the whole text does not:\n{text}"
                continue
            parsed += 1
            if tree is not None:
                reused += 1
                assert _dump(tree) == _dump(expected), f"{path}: the re-parsed tree differs after an edit"
            good = _parsed(lines, tree if tree is not None else expected)
            good_text = text
    return parsed, reused


def test_random_edits_of_our_own_files_parse_as_the_whole_text():
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    paths += sorted(glob.glob(os.path.join(ROOT, "tfperf_lsp", "rules", "*", "*.py")))[:40]
    parsed, reused = _check_random_edits(paths, edits_per_file=40, seed=11)
    assert parsed > 200
    # Most edits that parse are answered from a slice: the point of it.
    assert reused > parsed * 0.6, (parsed, reused)


@pytest.mark.skipif(not os.path.isdir(REALWORLD), reason=f"the shared real-world corpus is not unpacked at {REALWORLD}")
def test_random_edits_of_real_world_files_parse_as_the_whole_text():
    paths = sorted(glob.glob(os.path.join(REALWORLD, "**", "*.py"), recursive=True))
    paths = random.Random(5).sample(paths, min(150, len(paths)))
    parsed, reused = _check_random_edits(paths, edits_per_file=12, seed=5)
    assert parsed > 100
    assert reused > parsed * 0.5, (parsed, reused)


def test_an_unchanged_line_count_reuses_the_statements_below_the_edit():
    text = "import tensorflow as tf\n\n\ndef e(x):\n    return x\n\n\ndef f(x):\n    return x + 1\n\n\n" \
           "def g(x):\n    return x * 2\n\n\ndef h(x):\n    return x * 3\n"
    before = ast.parse(text)
    tree = reparse(Parsed(text.split("\n"), before), text.replace("x + 1", "x + 2").split("\n"))
    assert tree is not None
    assert tree.body[0] is before.body[0]  # above the slice (which starts a statement above the edit)
    assert tree.body[4] is before.body[4]  # below it (which ends a statement below)
    assert tree.body[2] is not before.body[2]
    assert _dump(tree) == _dump(ast.parse(text.replace("x + 1", "x + 2")))


def test_a_line_added_or_removed_moves_the_statements_below_instead_of_parsing_them():
    text = "import tensorflow as tf\n\n\ndef e(x):\n    return x\n\n\ndef f(x):\n    return x + 1\n\n\n" \
           "def g(x):\n    return [x,\n            x * 2]\n\n\n@tf.function\ndef h(x):\n    return x * 3\n"
    for edited in (text.replace("    return x + 1", "    # a note\n    y = 1\n    return x + 1"),
                   text.replace("\n\n\ndef f", "\ndef f")):
        before = ast.parse(text)
        tree = reparse(_parsed(text.split("\n"), before), edited.split("\n"))
        assert tree is not None
        assert tree.body[-2] is before.body[-2] and tree.body[-1] is before.body[-1]  # below the slice: moved
        assert _dump(tree) == _dump(ast.parse(edited))  # every line number below the edit is right


def test_a_version_whose_statements_a_later_one_moved_is_never_parsed_against_again():
    text = "a = 1\n\nb = 2\n\nc = 3\n\nd = [4,\n     5]\n"
    first = _parsed(text.split("\n"), ast.parse(text))
    longer = text.replace("b = 2", "b = 2\nb += 1")
    assert reparse(first, longer.split("\n")) is not None  # moves c and d down a line
    # ``first``'s tree now holds c and d at the lines of ``longer``: parsing against it again must
    # not re-use them (an editor only ever parses against the latest version; a test might not).
    other = text.replace("a = 1", "a = 10")
    tree = reparse(first, other.split("\n"))
    assert tree is None
    assert _dump(SourceText(other).parse(first)) == _dump(ast.parse(other))


def test_an_opened_bracket_falls_back_to_the_whole_text():
    text = "a = 1\n\nb = 2\n\nc = 3\n"
    edited = text.replace("b = 2", "b = (2")
    assert reparse(Parsed(text.split("\n"), ast.parse(text)), edited.split("\n")) is None
    assert "never closed" in SourceText(edited).parse().message or "(" in SourceText(edited).parse().message


def test_a_line_indented_into_the_statement_above_joins_it():
    text = "def f():\n    x = 1\ny = 2\n\nz = 3\n"
    edited = text.replace("y = 2", "    y = 2")
    tree = reparse(Parsed(text.split("\n"), ast.parse(text)), edited.split("\n"))
    assert tree is not None and _dump(tree) == _dump(ast.parse(edited))
    assert len(tree.body[0].body) == 2


def test_a_document_session_reports_what_a_fresh_analysis_reports_after_every_edit():
    path = os.path.join(ROOT, "examples", "retrace_pitfalls.py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    session = DocumentSession(path)
    session.update(text)
    rng = random.Random(3)
    compared = 0
    good_text = text
    for _ in range(40):
        text = _edit(text if rng.random() < 0.5 else good_text, rng)
        incremental = session.update(text)
        if incremental.parse_error is not None:
            continue
        good_text = text
        fresh = analyze(text, path)
        assert [(f.code, f.span, f.message) for f in incremental.findings] == \
               [(f.code, f.span, f.message) for f in fresh.findings]
        compared += 1
    assert compared >= 10


def test_facts_walked_statement_by_statement_are_those_of_one_walk_of_the_module():
    from tfperf_lsp.analysis.facts import ModuleFacts

    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    assert paths
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        source = SourceText(text, path)
        whole = ModuleFacts(ast.parse(text), source)
        tree = ast.parse(text)
        first = ModuleFacts(tree, source, known_walks={})  # walked statement by statement
        again = ModuleFacts(ast.Module(body=list(tree.body), type_ignores=[]), source, first.statement_walks)
        for facts in (first, again):
            assert [ast.dump(n) for n in facts.calls] == [ast.dump(n) for n in whole.calls]
            assert {k: [ast.dump(n) for n in v] for k, v in facts.names.items()} == \
                   {k: [ast.dump(n) for n in v] for k, v in whole.names.items()}
            assert list(facts.names) == list(whole.names)  # the same order too
            for attribute in ("functions", "classes", "loops", "with_items", "global_statements"):
                assert [ast.dump(n) for n in getattr(facts, attribute)] == [ast.dump(n) for n in getattr(whole, attribute)]
            assert {k: [ast.dump(n) for n in v] for k, v in facts.module_assignments.items()} == \
                   {k: [ast.dump(n) for n in v] for k, v in whole.module_assignments.items()}
            assert len(facts._parents) == len(whole._parents)
        assert all(again.statement_walks[s] is first.statement_walks[s] for s in tree.body)  # re-used, not walked again


def test_answers_carried_between_versions_hold_only_nodes_of_the_current_tree():
    """The per-node answers a session carries from version to version (each node's def and
    loops, its imported name) forget the statements an edit replaced: they kept each replaced
    def alive until the caches reached four times the module and started empty, and that
    keystroke paid for every node again."""
    path = os.path.join(ROOT, "examples", "retrace_pitfalls.py")
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    body = next(i for i, line in enumerate(lines) if line.startswith("    ") and line.strip() and i > len(lines) // 2)
    indent = lines[body][: len(lines[body]) - len(lines[body].lstrip())]
    session = DocumentSession(path)
    for k in range(12):
        edited = lines[:body] + [f"{indent}probe = {k}"] + lines[body:]
        facts = session.update("\n".join(edited)).ctx.facts
        for node in facts.calls + facts.loops:  # fill the caches, as rules do
            facts.enclosing_function(node), facts.enclosing_loops(node), facts.qualname(node)
    current = set(facts._parents) | set(facts.tree.body)
    carried = [*facts.structure.function_of, *facts.structure.loops_of, *facts.imports.reused_answers()]
    assert carried and all(node in current for node in carried)
