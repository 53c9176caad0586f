"""Output equivalence: structure, dtype, shape, per-dtype tolerances, NaN/inf handling."""
import numpy as np
import pytest

from tfperf_lsp.bench.outputs import compare_outputs, tolerance


def test_identical_and_slightly_reordered_float32_sums_match():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    assert compare_outputs(a, a.copy()).match is True
    # a reordered reduction: same math, different rounding
    x = rng.standard_normal((256, 512)).astype(np.float32)
    s1 = x.sum(axis=1)
    s2 = x[:, ::-1].sum(axis=1)
    chk = compare_outputs(s1, s2)
    assert chk.match is True and chk.max_abs_err is not None


def test_a_real_float32_difference_is_reported_with_errors():
    a = np.linspace(1, 2, 100, dtype=np.float32)
    b = a.copy()
    b[7] *= 1.001
    chk = compare_outputs(a, b)
    assert chk.match is False
    assert "1 of 100 elements" in chk.reason
    assert chk.max_rel_err == pytest.approx(1e-3, rel=0.01)


def test_tf32_loosens_float32_only():
    a = np.linspace(1, 2, 100, dtype=np.float32)
    b = a * np.float32(1.0005)
    assert compare_outputs(a, b).match is False
    assert compare_outputs(a, b, tf32=True).match is True
    assert tolerance("float64", tf32=True) == tolerance("float64")


def test_half_precision_tolerances_are_loose_and_float64_tight():
    a16 = np.linspace(1, 2, 50).astype(np.float16)
    assert compare_outputs(a16, (a16.astype(np.float32) * 1.004).astype(np.float16)).match is True
    a64 = np.linspace(1, 2, 50)
    assert compare_outputs(a64, a64 * (1 + 1e-7)).match is False


def test_dtype_shape_and_structure_mismatches():
    a = np.zeros((2, 3), np.float32)
    assert "dtype differs: float32[2, 3] vs float64[2, 3]" in compare_outputs(a, a.astype(np.float64)).reason
    assert "shape differs" in compare_outputs(a, a.reshape(3, 2)).reason
    assert "structure differs" in compare_outputs((a, a), (a,)).reason
    assert "structure differs" in compare_outputs({"x": a}, {"y": a}).reason
    assert compare_outputs([a, a], (a, a)).match is True  # list vs tuple is not a difference


def test_integers_and_bools_are_exact():
    a = np.arange(10)
    assert compare_outputs(a, a.copy()).match is True
    b = a.copy()
    b[3] += 1
    chk = compare_outputs(a, b)
    assert chk.match is False and chk.max_abs_err == 1.0
    assert compare_outputs(np.array([True, False]), np.array([True, True])).match is False


def test_nan_positions_must_agree_and_infinities_must_have_the_same_sign():
    a = np.array([1.0, np.nan, np.inf], np.float32)
    assert compare_outputs(a, a.copy()).match is True
    assert "NaN positions differ" in compare_outputs(a, np.array([np.nan, 1.0, np.inf], np.float32)).reason
    assert "infinite" in compare_outputs(a, np.array([1.0, np.nan, -np.inf], np.float32)).reason


def test_near_zero_elements_use_a_scale_relative_absolute_tolerance():
    ref = np.array([1000.0, 1e-9], np.float32)
    cand = np.array([1000.0, 5e-5], np.float32)   # 5e-5 off, at scale 1000: fine
    assert compare_outputs(ref, cand).match is True


def test_nothing_comparable_is_unknown_not_a_match():
    chk = compare_outputs(None, None)
    assert chk.match is None and "nothing to compare" in chk.reason


def test_python_scalars_strings_and_values_only_mode():
    assert compare_outputs(3, 3).match is True
    assert compare_outputs("a", "b").match is False
    a = np.ones(3, np.float32)
    chk = compare_outputs(a, a * 2, values=False)   # structure/dtype/shape only
    assert chk.match is True and not chk.values_checked


def test_tensorflow_like_objects_with_numpy_method_are_converted():
    class T:
        def __init__(self, v):
            self.v = v

        def numpy(self):
            return self.v

    assert compare_outputs(T(np.ones(3)), T(np.ones(3))).match is True
    assert compare_outputs(T(np.ones(3)), T(np.zeros(3))).match is False


def test_tolerances_are_looser_for_xla_and_mixed_precision_variants():
    import numpy as np

    from tfperf_lsp.bench.outputs import compare_outputs

    ref = np.linspace(0.01, 1.0, 100, dtype=np.float32)
    fused = ref * np.float32(1 + 2e-5)  # a reordered softmax/reduction under XLA
    assert compare_outputs(ref, fused).match is False
    check = compare_outputs(ref, fused, kind="xla")
    assert check.match is True and check.rtol == 1e-4 and check.max_rel_err < 1e-4
    half = ref.astype(np.float16)  # a mixed-precision rewrite returns float16
    assert compare_outputs(ref, half).match is False  # dtype differs
    assert compare_outputs(ref, half, kind="mixed").match is True
    assert compare_outputs(ref, ref * 1.05, kind="xla").match is False  # still a real difference


def test_the_reported_relative_error_agrees_with_the_verdict_on_near_zero_elements():
    # A reordered sum: a near-zero element is off by far more than 1e-5 of itself, but by little
    # against the output's scale. It matches, and its printed error must not exceed the rtol.
    ref = np.array([1.0, 1e-4, -0.5], dtype=np.float32)
    cand = ref + np.array([0.0, 5e-8, 0.0], dtype=np.float32)
    check = compare_outputs(ref, cand)
    assert check.match is True and check.max_rel_err <= check.rtol


def test_a_match_is_exactly_a_max_relative_error_within_rtol():
    rng = np.random.default_rng(0)
    for _ in range(200):
        ref = (rng.standard_normal(50) * 10.0 ** rng.integers(-3, 3, 50)).astype(np.float32)
        cand = (ref * (1 + rng.standard_normal(50) * 10.0 ** rng.uniform(-8, -3))).astype(np.float32)
        check = compare_outputs(ref, cand)
        assert check.match is (check.max_rel_err <= check.rtol)
