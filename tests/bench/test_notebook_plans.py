"""Benchmarks from a notebook cell: the same plans, built on the notebook's module, so inputs come
from earlier cells' literal constructors; nothing else of the notebook runs."""
from tfperf_lsp.bench.plans import build_plan
from tfperf_lsp.engine import analyze
from tfperf_lsp.lsp.notebooks import _view, module_finding
from tfperf_lsp.notebook import build

SETUP = "import tensorflow as tf\nhistory = expensive_training_run()\n\n@tf.function\ndef f(x, step):\n    return x * 2.0 + tf.cast(step, tf.float32)\n"
LOOP = "for step in range(3):\n    f(x, step)\n"


def plan_for_loop(inputs_cell: str):
    cells = [(0, SETUP), (1, "%time " + "nothing()\n" + inputs_cell), (2, LOOP)]
    book = build(cells)
    module = analyze(book.text, "nb.ipynb")
    view = _view(module, book, book.cells[2], LOOP)
    finding = next(f for f in view.findings if f.code == "TFP101")
    assert finding.span.start.line == 1  # in the cell's own coordinates
    return build_plan(*module_finding(view, finding))


def test_inputs_come_from_an_earlier_cells_constructor():
    plan = plan_for_loop("x = tf.ones([4])\n")
    assert plan.job is not None, plan.problem
    code = plan.job.prelude + "".join(v.source for v in plan.job.variants)
    assert "tf.ones([4])" in code
    assert "expensive_training_run" not in code  # never the whole notebook


def test_state_that_cannot_be_rebuilt_is_refused_with_the_reason():
    plan = plan_for_loop("x = load_dataset()\n")
    assert plan.job is None and plan.problem.startswith("cannot benchmark") and "x" in plan.problem
