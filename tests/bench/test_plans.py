"""Finding -> Job: which code runs, on which inputs (no TensorFlow needed to build a plan)."""
import ast
import textwrap

from tfperf_lsp.bench.plans import build_plan
from tfperf_lsp.engine import analyze


def plan_for(code, rule, **options):
    code = textwrap.dedent(code)
    analysis = analyze(code, "/tmp/example.py")
    finding = next(f for f in analysis.findings if f.code == rule)
    return build_plan(analysis, finding, **options)


def run_source(plan, name):
    return next(v.source for v in plan.job.variants if v.name == name)


V1 = """
import tensorflow as tf
A = tf.random.uniform([1000, 10, 100])
B = tf.random.uniform([100, 100])
C = []
for i in range(1000):
    C.append(tf.matmul(A[i], B))
C = tf.stack(C, axis=0)
print(C.shape)
"""


def test_rewrite_plan_runs_the_touched_statements_before_and_after():
    plan = plan_for(V1, "TFP401")
    assert plan.problem is None
    assert "A = tf.random.uniform([1000, 10, 100])" in plan.job.prelude
    original, rewritten = run_source(plan, "original"), run_source(plan, "rewritten")
    assert "C.append(tf.matmul(A[i], B))" in original and "tf.stack" in original
    assert "tf.einsum" in rewritten and "append" not in rewritten
    assert "print" not in original  # only the statements the rewrite is about
    for source in (original, rewritten):
        assert "def __tfperf_run__(A=A, B=B):" in source
        assert "return (C,)" in source
        ast.parse(source)
    assert plan.job.inputs == "A: float32[1000,10,100]; B: float32[100,100]"


def test_large_inputs_are_scaled_consistently_and_loops_follow():
    big = V1.replace("[1000, 10, 100]", "[1000, 100, 1000]").replace("[100, 100]", "[1000, 1000]")
    plan = plan_for(big, "TFP401", max_input_mb=16)
    dim_map = plan.inputs.dim_map
    assert dim_map and all(new < old for old, new in dim_map.items())
    a = next(s for s in plan.inputs.specs if s.name == "A")
    b = next(s for s in plan.inputs.specs if s.name == "B")
    assert a.shape[2] == b.shape[0]  # the contracted dimension still agrees
    assert 4 * (a.shape[0] * a.shape[1] * a.shape[2] + b.shape[0] * b.shape[1]) <= 16 * 2**20
    assert f"range({dim_map[1000]})" in run_source(plan, "original")
    assert "scaled: 1000->" in plan.job.inputs


def test_missing_inputs_are_named_with_the_declaration_to_add():
    code = V1.replace("A = tf.random.uniform([1000, 10, 100])", "A = load_from_disk()").replace("range(1000)", "range(A.shape[0])")
    plan = plan_for(code, "TFP401")
    assert plan.job is None
    assert "`A`" in plan.problem and "# tfperf: A=float32[...]" in plan.problem


def test_declaration_comment_supplies_shapes():
    code = V1.replace("A = tf.random.uniform([1000, 10, 100])", "A = load_from_disk()  # tfperf: A=float32[50,8,100]")
    code = code.replace("range(1000)", "range(A.shape[0])")
    plan = plan_for(code, "TFP401")
    assert plan.problem is None
    assert "A = tf.random.uniform([50, 8, 100], dtype=tf.float32, seed=1)" in plan.job.prelude
    assert "load_from_disk" not in plan.job.prelude


def test_inputs_of_a_function_come_from_its_call_site():
    code = """
    import tensorflow as tf

    def batched(A, B):
        C = []
        for i in range(A.shape[0]):
            C.append(tf.matmul(A[i], B))
        return tf.stack(C)

    left = tf.ones([4, 3, 5])
    right = tf.ones([5, 2])
    out = batched(left, right)
    """
    analysis = analyze(textwrap.dedent(code), "/tmp/example.py")
    rewrites = [f for f in analysis.findings if f.code == "TFP401" and f.fix_title]
    if not rewrites:  # the vectorize rule keeps this shape as a hint: nothing to compare then
        return
    plan = build_plan(analysis, rewrites[0])
    assert plan.problem is None, plan.problem
    assert "left = tf.ones([4, 3, 5])" in plan.job.prelude


RETRACE = """
import tensorflow as tf

@tf.function
def step(x, i):
    return x * tf.cast(i, tf.float32)

x = tf.ones([8])
for i in range(20):
    step(x, i)
"""


def test_retrace_plans_trace_from_scratch_on_every_call():
    plan = plan_for(RETRACE, "TFP101")
    original = run_source(plan, "original")
    body = original[original.index("def __tfperf_run__"):]
    assert "@tf.function" in body  # the function is re-created inside the timed call
    assert "tf.constant(i" in run_source(plan, "rewritten")


def test_graph_opportunity_compares_eager_graph_and_xla_with_timeit_call():
    code = """
    import timeit
    import tensorflow as tf

    x = tf.random.uniform([32, 32])

    def costly(x):
        aux = tf.eye(32)
        for i in range(1, 30):
            aux = tf.matmul(x, aux) / i
        return aux

    print(timeit.timeit(stmt="costly(x)", number=10, globals=globals()))
    """
    plan = plan_for(code, "TFP303")
    assert [v.name for v in plan.job.variants] == ["eager", "tf.function", "tf.function+XLA"]
    assert "def costly(x):" in plan.job.prelude and "x = tf.random.uniform([32, 32])" in plan.job.prelude
    assert "return costly(x)" in run_source(plan, "eager")
    assert "jit_compile=True" in run_source(plan, "tf.function+XLA")


def test_a_function_never_called_cannot_be_benchmarked():
    code = """
    import tensorflow as tf

    def costly(x):
        for i in range(1, 30):
            x = tf.matmul(x, x)
        return x
    """
    analysis = analyze(textwrap.dedent(code) + "for _ in range(3):\n    pass\n", "/tmp/x.py")
    assert not [f for f in analysis.findings if f.code == "TFP303"]  # not hot: not flagged at all

