"""TFP401: the einsum equation derived from operands and transpose flags, proven under TF.

Every combination (per-item left/right/both operands x transpose_a x transpose_b) in the
append-loop form and the comprehension form is rewritten by the rule's fix; the original and the
rewritten function run on the same random inputs and must agree with np.allclose(rtol=1e-5,
atol=1e-6) (float32; one batched kernel may round the last bit differently).
"""
import itertools
import textwrap

import numpy as np
import pytest

from tests.rules.vectorize._helpers import fixed, namespace, own

N, J, K, L = 5, 3, 4, 2
# (left varies, right varies, transpose_a, transpose_b) -> the equation the fix must use
EQUATIONS = {
    (True, False, False, False): "ijk,kl->ijl",
    (True, False, True, False): "ikj,kl->ijl",
    (True, False, False, True): "ijk,lk->ijl",
    (True, False, True, True): "ikj,lk->ijl",
    (True, True, False, False): "ijk,ikl->ijl",
    (True, True, True, False): "ikj,ikl->ijl",
    (True, True, False, True): "ijk,ilk->ijl",
    (True, True, True, True): "ikj,ilk->ijl",
    (False, True, False, False): "jk,ikl->ijl",
    (False, True, True, False): "kj,ikl->ijl",
    (False, True, False, True): "jk,ilk->ijl",
    (False, True, True, True): "kj,ilk->ijl",
}
# `for a in A` (form "elements") can make only one operand the per-item one.
CASES = [(*key, form) for key in EQUATIONS for form in ("loop", "comprehension", "elements")
         if not (form == "elements" and key[0] and key[1])]


def _source(left_varies, right_varies, ta, tb, form):
    flags = "".join(f", transpose_{side}=True" for side, on in (("a", ta), ("b", tb)) if on)
    measured = "A" if left_varies else "B"
    if form == "elements":
        left, right = ("a", "B") if left_varies else ("A", "a")
        return f"""
            import tensorflow as tf

            def f(A, B):
                return tf.stack([tf.matmul({left}, {right}{flags}) for a in {measured}])
            """
    left = "A[i]" if left_varies else "A"
    right = "B[i]" if right_varies else "B"
    if form == "comprehension":
        return f"""
            import tensorflow as tf

            def f(A, B):
                return tf.stack([tf.matmul({left}, {right}{flags}) for i in range(len({measured}))], axis=0)
            """
    return f"""
        import tensorflow as tf

        def f(A, B):
            C = []
            for i in range({measured}.shape[0]):
                C.append(tf.matmul({left}, {right}{flags}))
            return tf.stack(C)
        """


def _inputs(left_varies, right_varies, ta, tb, seed=0):
    rng = np.random.default_rng(seed)
    a_shape = (K, J) if ta else (J, K)
    b_shape = (L, K) if tb else (K, L)
    A = rng.normal(size=((N,) if left_varies else ()) + a_shape).astype("float32")
    B = rng.normal(size=((N,) if right_varies else ()) + b_shape).astype("float32")
    return A, B


@pytest.mark.parametrize("left_varies,right_varies,ta,tb,form", CASES)
def test_fix_uses_the_derived_equation(left_varies, right_varies, ta, tb, form):
    source = _source(left_varies, right_varies, ta, tb, form)
    _, findings = own("TFP401", source)
    assert len(findings) == 1 and findings[0].fix_title, [f.message for f in findings]
    after = fixed("TFP401", source)
    equation = EQUATIONS[(left_varies, right_varies, ta, tb)]
    assert f"tf.einsum('{equation}', A, B)" in after, after
    assert "for " not in after and "tf.stack" not in after
    compile(after, "<fixed>", "exec")


@pytest.mark.tf
@pytest.mark.parametrize("left_varies,right_varies,ta,tb,form", CASES)
def test_fixed_code_computes_the_same_under_tensorflow(left_varies, right_varies, ta, tb, form):
    import tensorflow as tf

    source = _source(left_varies, right_varies, ta, tb, form)
    A, B = (tf.constant(v) for v in _inputs(left_varies, right_varies, ta, tb))
    before = namespace(textwrap.dedent(source))["f"](A, B)
    after = namespace(fixed("TFP401", source))["f"](A, B)
    assert before.shape == after.shape == (N, J, L)
    np.testing.assert_allclose(after.numpy(), before.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.tf
def test_fixed_code_raises_for_another_rank_instead_of_broadcasting():
    """Rank unknown at analysis time: the explicit equation fails loudly on a rank-4 A."""
    import tensorflow as tf

    source = _source(True, False, False, False, "loop")
    f_after = namespace(fixed("TFP401", source))["f"]
    A4 = tf.random.normal([N, 2, J, K])  # the loop would broadcast B over the extra axis
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        f_after(A4, tf.random.normal([K, L]))


@pytest.mark.tf
def test_seed000_program_fix_matches_the_loop():
    """The seed article's program (smaller), module level, literal range(1000) proven by A's shape."""
    import tensorflow as tf

    source = """
        import tensorflow as tf

        A = tf.random.uniform([1000, 10, 100])
        B = tf.random.uniform([100, 100])
        C = []
        for i in range(1000):
            C.append(tf.matmul(A[i], B))
        C = tf.stack(C, axis=0)
        """
    after = fixed("TFP401", source)
    assert "C = tf.einsum('ijk,kl->ijl', A, B)" in after and "for i" not in after
    tf.keras.utils.set_random_seed(0)
    before = namespace(textwrap.dedent(source))["C"]
    tf.keras.utils.set_random_seed(0)
    result = namespace(after)["C"]
    np.testing.assert_allclose(result.numpy(), before.numpy(), rtol=1e-5, atol=1e-5)


def test_all_flag_combinations_are_covered():
    assert set(EQUATIONS) == {k for k in itertools.product([True, False], repeat=4) if k[0] or k[1]}
