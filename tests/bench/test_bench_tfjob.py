"""Worker-side helpers that do not need TensorFlow: finding tf.functions, user tracebacks."""
import types

from tfperf_lsp.bench import tfjob


class FakeFunction:
    """Anything whose type has experimental_get_tracing_count counts as a tf.function."""

    def __init__(self, n):
        self.n = n

    def experimental_get_tracing_count(self):
        return self.n


def test_find_functions_reaches_namespace_attributes_classes_and_closures():
    top, attr, cls_attr, closed = FakeFunction(1), FakeFunction(10), FakeFunction(100), FakeFunction(1000)

    class Model:
        step = cls_attr

    model = Model()
    model.predict_function = attr

    def make_run():
        def __tfperf_run__():
            return closed
        return __tfperf_run__

    run = make_run()
    ns = {"f": top, "m": model, "Model": Model, "types": types, "__tfperf_run__": run, "x": 3}
    found = tfjob.find_functions(ns, run)
    assert {id(f) for f in found} == {id(top), id(attr), id(cls_attr), id(closed)}
    assert tfjob.trace_counter(ns, run)() == 1111
    ns["g"] = top  # the same function under two names counts once
    assert tfjob.trace_counter(ns, run)() == 1111


def test_a_counter_that_raises_counts_as_zero():
    class Broken(FakeFunction):
        def experimental_get_tracing_count(self):
            raise RuntimeError("no")

    ns = {"a": Broken(5), "b": FakeFunction(2)}
    assert tfjob.trace_counter(ns, None)() == 2


def test_user_error_keeps_only_the_users_frames_with_their_lines():
    ns = {}
    tfjob.exec_user("def helper():\n    return 1 / 0\n", "prelude", ns)
    tfjob.exec_user("def __tfperf_run__():\n    x = 1\n    return helper()\n", "rewritten", ns)
    try:
        ns["__tfperf_run__"]()
    except ZeroDivisionError as e:
        info = tfjob.user_error("rewritten", "timing", e)
    assert info.message == "ZeroDivisionError: division by zero"
    assert [(f.where, f.line, f.code) for f in info.frames] == [
        ("rewritten", 3, "return helper()"), ("prelude", 2, "return 1 / 0")]
    assert info.traceback.splitlines() == [
        "Traceback (your code, most recent call last):",
        "  rewritten, line 3: return helper()",
        "  prelude, line 2: return 1 / 0",
        "ZeroDivisionError: division by zero",
    ]
    assert info.variant == "rewritten" and info.phase == "timing"


def test_huge_exception_messages_are_cut():
    info = tfjob.user_error("v", "timing", ValueError("x" * 10000))
    assert len(info.message) < 2100 and "more characters" in info.message
