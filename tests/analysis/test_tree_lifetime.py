"""An analysis that is dropped frees its syntax tree at once (reference counting), instead of
leaving it to the cycle collector: a cyclic tree waits for a full collection, which then runs
in the middle of the next keystroke's parse and doubles it."""
import ast
import gc
import glob
import os

from tfperf_lsp.engine import analyze

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _syntax_nodes_left_to_the_collector(text: str) -> tuple[int, int]:
    gc.collect()
    gc.disable()
    try:
        analysis = analyze(text, "train.py")
        nodes = sum(1 for _ in ast.walk(analysis.ctx.facts.tree))
        del analysis
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = sum(isinstance(o, ast.AST) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    return nodes, left


def test_a_dropped_analysis_leaves_almost_no_syntax_nodes_to_the_cycle_collector():
    text = "\n\n".join(open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(EXAMPLES, "*.py"))))
    nodes, left = _syntax_nodes_left_to_the_collector(text)
    assert nodes > 5000
    # A few input-pipeline steps link parent and children (a handful of calls); a cached walk
    # that held its own node made a third of the tree cyclic.
    assert left < nodes * 0.05, (left, nodes)
