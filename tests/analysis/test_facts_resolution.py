"""Which def a name calls: module-level code runs in order (a notebook defines a function again
in a later cell), code inside a def runs after the whole module."""
import ast
import textwrap

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.hotness import HotCode
from tfperf_lsp.analysis.source import SourceText

CODE = textwrap.dedent(
    """\
    def step(x):
        return 1

    first = step(0)

    def step(x):
        return 2

    second = step(0)

    def later():
        return step(0)
    """
)


def facts_of(code: str) -> ModuleFacts:
    source = SourceText(code)
    return ModuleFacts(source.parse(), source)


def test_a_module_level_call_runs_the_def_above_it_and_a_call_in_a_def_the_last_one():
    facts = facts_of(CODE)
    defs = [s for s in facts.tree.body if isinstance(s, ast.FunctionDef) and s.name == "step"]
    calls = {facts.statement_of(c).lineno: c for c in facts.calls if isinstance(c.func, ast.Name) and c.func.id == "step"}
    assert facts.resolve_def(calls[4].func, calls[4]) is defs[0]
    assert facts.resolve_def(calls[9].func, calls[9]) is defs[1]
    assert facts.resolve_def(calls[12].func, calls[12]) is defs[1]


def test_literal_loop_counts_multiply_and_unknown_counts_stay_unknown():
    hot = HotCode(facts_of(textwrap.dedent(
        """\
        EPOCHS = 5
        data = dataset.batch(4).take(6)
        for epoch in range(EPOCHS):
            for x in data:
                step(x)
        for x in dataset:
            step(x)
        step(0)
        def f():
            step(1)
        """
    )), None)
    calls = {c.lineno: c for c in hot.facts.calls if isinstance(c.func, ast.Name) and c.func.id == "step"}
    assert hot.runs_at_most(calls[5]) == 30
    assert hot.runs_at_most(calls[7]) is None  # a dataset of unknown length
    assert hot.runs_at_most(calls[8]) == 1
    assert hot.runs_at_most(calls[10]) is None  # its callers decide


def test_a_loop_that_breaks_at_a_literal_index_runs_at_most_that_many_times():
    hot = HotCode(facts_of(textwrap.dedent(
        """\
        for idx, (img, mask) in enumerate(generator):
            show(model.predict(img))
            if idx == 29:
                break
        for i, x in enumerate(range(10)):
            if i >= 50:
                break
            step(x)
        for i, x in enumerate(dataset):
            if i == limit:
                break
            step(x)
        """
    )), None)
    calls = {c.lineno: c for c in hot.facts.calls if isinstance(c.func, ast.Name) and c.func.id in ("show", "step")}
    assert hot.runs_at_most(calls[2]) == 30
    assert hot.runs_at_most(calls[8]) == 10  # the iterable is shorter than the bound
    assert hot.runs_at_most(calls[12]) is None  # not a literal


def test_a_parameter_holds_what_its_callers_pass_not_a_global_of_its_name():
    facts = facts_of(textwrap.dedent(
        """\
        model = make_vectorizer()
        net = build_net()

        def run(model):
            return model(1)

        run(net)

        def unknown(model):
            return model(1)

        def disagree(m):
            return m(1)

        disagree(net)
        disagree(model)
        """
    ))
    uses = {c.func.id + str(c.lineno): c.func for c in facts.calls if isinstance(c.func, ast.Name) and c.func.id in ("model", "m")}
    net_assignment = facts.tree.body[1]
    assert facts.reaching_assignment(uses["model5"]) is net_assignment  # run(net)
    assert facts.reaching_assignment(uses["model10"]) is None  # never called here: not the global `model`
    assert facts.reaching_assignment(uses["m13"]) is None  # callers pass different models


def test_a_def_that_rebinds_an_assigned_name_is_what_later_calls_run():
    facts = facts_of(textwrap.dedent(
        """\
        import tensorflow as tf

        def cube(x):
            return x ** 3

        tf_cube = tf.function(cube)
        first = tf_cube(2)

        @tf.function
        def tf_cube(x):
            return x ** 3

        second = tf_cube(3)
        """
    ))
    calls = [c for c in facts.calls if isinstance(c.func, ast.Name) and c.func.id == "tf_cube"]
    wrapped, decorated = facts.tf_functions[1], facts.tf_functions[0]
    assert {fn.name for fn in facts.tf_functions} == {"tf_cube"}
    assert decorated.node is not None and wrapped.node is not None and decorated.stmt is decorated.node
    assert facts.resolve_tf_function(calls[0].func, calls[0]) is wrapped
    assert facts.resolve_tf_function(calls[1].func, calls[1]) is decorated


def test_the_two_branches_of_an_if_are_exclusive_and_a_join_is_not():
    import ast as _ast

    from tfperf_lsp.analysis.facts import ModuleFacts
    from tfperf_lsp.analysis.source import SourceText

    code = ("if training:\n    ds = ds.repeat()\n    a = 1\nelse:\n    ds = ds.map(f)\n"
            "    if x:\n        b = 2\n    else:\n        c = 3\nds = ds.batch(2)\n")
    facts = ModuleFacts(_ast.parse(code), SourceText(code))
    stmts = {getattr(n, "lineno", 0): n for n in _ast.walk(facts.tree) if isinstance(n, _ast.Assign)}
    assert facts.in_exclusive_branches(stmts[2], stmts[5])  # if body / else
    assert not facts.in_exclusive_branches(stmts[2], stmts[3])  # the same branch
    assert facts.in_exclusive_branches(stmts[7], stmts[9])  # a nested if/else
    assert facts.in_exclusive_branches(stmts[3], stmts[9])  # the outer branches, one nested deeper
    assert not facts.in_exclusive_branches(stmts[2], stmts[10])  # after the if: both branches flow in


def test_a_name_rebound_from_itself_reads_the_binding_before_the_statement():
    facts = facts_of("x = layer_a(inputs)\nx = layer_b(x)\ny = x\n")
    first, second, third = facts.tree.body
    used_in_second = second.value.args[0]
    assert facts.reaching_assignment(used_in_second) is first  # x = layer_b(x) reads the first x
    assert facts.reaching_assignment(third.value) is second


def test_a_global_in_a_def_reads_what_its_module_level_callers_see():
    """A notebook trains with ``train_step`` while ``model = build()`` holds; a later cell saves
    and reloads ``model``. A caller from another def runs after the module: it sees the last."""
    code = textwrap.dedent(
        """\
        model = build()

        def train_step(x):
            return model(x)

        for x in data:
            train_step(x)

        model = load_model("saved")

        def evaluate(x):
            return model(x)

        evaluate(1)

        def main():
            evaluate(2)

        evaluate(3)
        """
    )
    facts = facts_of(code)
    built, step, _, loaded, evaluate = facts.tree.body[:5]
    in_step = next(n for n in ast.walk(step) if isinstance(n, ast.Name) and n.id == "model")
    in_evaluate = next(n for n in ast.walk(evaluate) if isinstance(n, ast.Name) and n.id == "model")
    assert facts.reaching_assignment(in_step) is built  # the loop above the reload calls it
    assert facts.reaching_assignment(in_evaluate) is loaded  # callers below the reload (and main)


def test_a_global_read_by_callers_on_both_sides_of_a_rebinding_is_the_last():
    code = "model = a()\n\ndef run():\n    return model\n\nrun()\nmodel = b()\nrun()\n"
    facts = facts_of(code)
    first, fn, _, second, _ = facts.tree.body
    use = fn.body[0].value
    assert facts.reaching_assignment(use) is second  # the callers disagree: the last, as before


def test_a_global_read_in_a_def_another_def_also_calls_is_the_last():
    code = "model = a()\n\ndef run():\n    return model\n\nrun()\n\ndef main():\n    run()\n\nmodel = b()\nmain()\n"
    facts = facts_of(code)
    first, fn, _, _, second, _ = facts.tree.body
    assert facts.reaching_assignment(fn.body[0].value) is second  # main() runs it after b()


def test_a_method_called_on_an_object_built_in_the_same_expression_is_a_call_of_it():
    facts = facts_of(textwrap.dedent(
        """\
        class Agent:
            def train(self):
                return 1

        for episode in range(100):
            Agent().train()
        Other().train()
        """
    ))
    train = facts.tree.body[0].body[0]
    [call] = facts.calls_by_def[train]  # ``Other().train()`` is not Agent's
    assert call.lineno == 6
    assert facts.is_called_repeatedly(train)
