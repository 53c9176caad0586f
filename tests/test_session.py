"""While a file does not parse, findings on unchanged lines stay (moved), others go."""
import textwrap

from tfperf_lsp.session import DocumentSession

GOOD = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x):
        print("a", x)
        return x

    @tf.function
    def g(x):
        print("b", x)
        return x
    """
)


def test_findings_are_kept_and_moved_while_the_file_is_broken():
    session = DocumentSession()
    good = session.update(GOOD)
    assert [f.span.start.line for f in good.findings] == [4, 9]
    broken = GOOD.replace('print("a", x)', 'print("a", x').replace("import tensorflow as tf\n", "import tensorflow as tf\n\n")
    analysis = session.update(broken)
    assert analysis.parse_error is not None and analysis.stale
    # line 4 changed (it is where the typing happens): dropped; line 9 moved to 10
    assert [f.span.start.line for f in analysis.findings] == [10]
    assert all(f.fix_title is None for f in analysis.findings)  # fixes were for other text


def test_recovers_when_the_error_is_fixed():
    session = DocumentSession()
    session.update(GOOD)
    session.update(GOOD + "def broken(:\n")
    fixed = session.update(GOOD + "def fine():\n    pass\n")
    assert not fixed.stale and len(fixed.findings) == 2


def test_broken_from_the_start_has_nothing_to_keep():
    analysis = DocumentSession().update("def f(:\n")
    assert analysis.findings == [] and analysis.parse_error is not None


def _difflib_map(old, new):
    import difflib

    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return {i1 + k: j1 + k for tag, i1, i2, j1, _ in matcher.get_opcodes() if tag == "equal" for k in range(i2 - i1)}


def test_unchanged_lines_agree_with_difflib_on_typing_edits():
    """Edits a typist makes (lines typed, deleted or changed in one place) on the shipped
    examples: the linear matcher keeps the lines difflib keeps."""
    import glob
    import os
    import random

    from tfperf_lsp.session import unchanged_lines

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    rng = random.Random(11)
    for path in sorted(glob.glob(os.path.join(root, "*.py"))):
        old = open(path, encoding="utf-8").read().split("\n")
        for _ in range(20):
            new = list(old)
            at = rng.randrange(len(new))
            kind = rng.choice(["insert", "delete", "change", "paste"])
            if kind == "insert":
                new.insert(at, "    x = (")
            elif kind == "delete":
                del new[at : at + rng.randint(1, 3)]
            elif kind == "change":
                new[at] += " +"
            else:
                new[at:at] = ["def broken(:", "", "    return x"]
            ours, theirs = unchanged_lines(old, new), _difflib_map(old, new)
            # as many lines kept; where equal lines sit side by side (blank lines) either may
            # be the one that was deleted, so compare what is kept, not which copy
            assert len(ours) == len(theirs), (path, kind, at)
            assert all(old[i] == new[j] for i, j in ours.items())
            assert sorted(ours.values()) == [ours[i] for i in sorted(ours)]
            assert {(old[i], j) for i, j in ours.items()} == {(old[i], j) for i, j in theirs.items()}


def test_unchanged_lines_map_equal_lines_in_order():
    import random

    from tfperf_lsp.session import unchanged_lines

    rng = random.Random(3)
    for _ in range(200):
        old = [rng.choice(["a", "b", "", "return x", "c"]) + str(rng.randrange(6)) for _ in range(40)]
        new = [line for line in old if rng.random() > 0.2]
        rng.shuffle(new[5:9])
        mapping = sorted(unchanged_lines(old, new).items())
        assert all(old[i] == new[j] for i, j in mapping)
        assert [j for _, j in mapping] == sorted(j for _, j in mapping)  # order kept
        assert len({j for _, j in mapping}) == len(mapping)


def test_dropped_trees_are_rebuilt_for_a_fix():
    from tfperf_lsp.engine import fix_for

    import os

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    path = os.path.join(root, "seed001_tf_function_decorator.py")
    session = DocumentSession(path)
    analysis = session.update(open(path, encoding="utf-8").read())
    finding = next(f for f in analysis.findings if f.fix_title)
    before = fix_for(analysis, finding)
    session.drop_trees()
    assert not analysis.has_trees and analysis.findings  # findings stay, the tree went
    assert fix_for(analysis, finding) == before  # rebuilt from the same text on demand
    assert analysis.has_trees


def test_dropped_trees_are_freed_although_findings_carry_fix_builders():
    """A finding's fix builder holds syntax nodes: after drop_trees nothing may hold the tree
    (50 open 2k-line files kept every tree alive through them: 243 MiB instead of 96)."""
    import gc
    import os
    import weakref

    from tfperf_lsp.engine import fix_for

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    path = os.path.join(root, "seed001_tf_function_decorator.py")
    session = DocumentSession(path)
    analysis = session.update(open(path, encoding="utf-8").read())
    with_fixes = [f for f in analysis.findings if f.fix_title]
    assert with_fixes and all(f.build_fix is not None for f in with_fixes)
    before = [fix_for(analysis, f) for f in with_fixes]
    tree = weakref.ref(analysis.ctx.facts.tree)
    session.drop_trees()
    gc.collect()
    assert tree() is None
    assert [fix_for(analysis, f) for f in with_fixes] == before  # from the text analysed again
    session.drop_trees()  # dropped twice: the builders still find the rebuilt analysis's fixes
    assert [fix_for(analysis, f) for f in with_fixes] == before


def test_the_server_keeps_trees_of_the_last_documents_only(tmp_path):
    from tfperf_lsp.lsp.state import KEEP_TREES, ServerState

    state = ServerState(server=None)
    text = "import tensorflow as tf\n\n@tf.function\ndef f(x, i):\n    return x * i\n\nfor i in range(10):\n    f(tf.ones([2]), i)\n"
    uris = [f"file://{tmp_path}/m{i}.py" for i in range(KEEP_TREES + 3)]
    for uri in uris:
        state.analyze(uri, 1, text)
    kept = [uri for uri in uris if state.results[uri].analysis.has_trees]
    assert kept == uris[-KEEP_TREES:]
    assert all(state.results[uri].analysis.findings for uri in uris)


def test_findings_carried_over_a_syntax_error_hold_no_tree():
    """Carried findings have no fix (their text changed), so nothing of the old tree stays."""
    import gc
    import weakref

    session = DocumentSession("model.py")
    good = session.update(GOOD)
    tree = weakref.ref(good.ctx.facts.tree)
    broken = session.update(GOOD + "\ndef broken(:\n")
    assert broken.stale and broken.findings and all(f.build_fix is None for f in broken.findings)
    session.drop_trees()
    del good
    gc.collect()
    assert tree() is None


def test_versions_a_session_replaces_are_freed_without_the_cycle_collector():
    """Each keystroke replaces the document's analysis: the old one (its text, its findings and
    their fix builders) is freed at once by reference counting. Its findings' builders pointed
    back at it, a cycle that kept every replaced version until the collector's next pass."""
    import gc
    import os

    from tfperf_lsp.engine import fix_for
    from tfperf_lsp.session import Rebuildable

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    path = os.path.join(root, "seed001_tf_function_decorator.py")
    text = open(path, encoding="utf-8").read()
    session = DocumentSession(path)
    gc.collect()
    gc.disable()
    try:
        for k in range(3):
            session.update(text + f"\nprobe = {k}\n")
        analysis = session.current
        finding = next(f for f in analysis.findings if f.fix_title)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, Rebuildable) or type(o).__name__ in ("Finding", "SourceText")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
    session.drop_trees()
    assert fix_for(analysis, finding) is not None  # the builder still finds its analysis
