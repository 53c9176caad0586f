"""The paired sign-test method: order statistics, verdicts, the adaptive schedule, warnings."""
import math
import random

import pytest

from tfperf_lsp.bench import stats

# benchmark-method.md, "Deciding rewrite is faster": n -> (lo, hi, coverage %)
TABLE = {6: (1, 6, 96.9), 10: (2, 9, 97.9), 12: (3, 10, 96.1), 15: (4, 12, 96.5),
         20: (6, 15, 95.9), 30: (10, 21, 95.7)}


@pytest.mark.parametrize("n", sorted(TABLE))
def test_order_statistics_match_the_reference_table(n):
    lo, hi, coverage = stats.sign_test_ranks(n)
    assert (lo, hi) == TABLE[n][:2]
    assert round(coverage * 100, 1) == TABLE[n][2]


def test_order_statistics_for_every_n_have_at_least_95_percent_and_are_the_narrowest():
    for n in range(6, 101):
        lo, hi, coverage = stats.sign_test_ranks(n)
        assert hi == n - lo + 1
        assert coverage >= 0.95
        # one rank narrower would drop below 95%
        assert 1 - 2 * stats.binom_half_cdf(lo, n) < 0.95


def test_too_few_pairs_have_no_interval():
    assert stats.sign_test_ranks(5) is None
    p = stats.compare_paired([1.0] * 5, [0.5] * 5)
    assert p.ratio_low is None and p.verdict == "inconclusive"
    assert p.speedup == pytest.approx(2.0)


def _pairs(ratio, noise, n=10, seed=1):
    rng = random.Random(seed)
    a = [1e-3 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(n)]
    b = [x * ratio * (1 + rng.uniform(-noise, noise)) for x in a]
    return a, b


def test_a_rewrite_twice_as_fast_is_faster_with_speedup_about_2():
    a, b = _pairs(0.5, 0.02)
    p = stats.compare_paired(a, b)
    assert p.verdict == "faster"
    assert p.speedup == pytest.approx(2.0, rel=0.03)
    assert p.speedup_low <= p.speedup <= p.speedup_high
    # the speedup interval is the reciprocal of the time-ratio interval
    assert p.speedup_low == pytest.approx(1 / p.ratio_high)


def test_a_slower_rewrite_is_slower():
    assert stats.compare_paired(*_pairs(1.5, 0.02)).verdict == "slower"


def test_the_same_speed_with_little_noise_is_equivalent():
    assert stats.compare_paired(*_pairs(1.0, 0.005)).verdict == "equivalent"


def test_a_noisy_comparison_near_one_is_inconclusive():
    assert stats.compare_paired(*_pairs(1.0, 0.3)).verdict == "inconclusive"


def test_a_two_percent_gain_is_not_called_faster():
    # inside the 3% band: a real but practically irrelevant difference
    assert stats.compare_paired(*_pairs(0.98, 0.002)).verdict == "equivalent"


@pytest.mark.parametrize("lo,hi,verdict", [
    (0.80, 0.969, "faster"), (0.80, 0.97, "inconclusive"), (1.031, 1.2, "slower"),
    (0.97, 1.03, "equivalent"), (0.96, 1.01, "inconclusive"), (0.99, 1.05, "inconclusive"),
])
def test_verdict_boundaries(lo, hi, verdict):
    assert stats.verdict_for_ratio_ci(lo, hi) == verdict


def test_the_interval_covers_the_true_ratio_at_least_95_percent_of_the_time():
    rng = random.Random(7)
    misses = 0
    trials = 2000
    for _ in range(trials):
        a = [rng.lognormvariate(0, 0.1) for _ in range(10)]
        b = [x * 0.8 * rng.lognormvariate(0, 0.1) for x in a]
        p = stats.compare_paired(a, b)
        misses += not (p.ratio_low <= 0.8 <= p.ratio_high)
    assert misses / trials < 0.05


def test_paired_input_errors():
    with pytest.raises(ValueError, match="equal lengths"):
        stats.compare_paired([1, 2], [1])
    with pytest.raises(ValueError, match="positive"):
        stats.compare_paired([1, 0], [1, 1])


def test_adaptive_schedule_extends_only_while_inconclusive_and_within_budget():
    assert stats.pair_stages(30) == [10, 20, 30]
    assert stats.pair_stages(25) == [10, 20, 25]
    assert stats.pair_stages(8) == [10]  # the minimum of 10 pairs is honoured
    # conclusive: stop
    assert stats.next_target(10, ["faster"], 1.0, 3.0, 30) == 10
    # inconclusive, 10 more pairs fit: extend to 20, then 30
    assert stats.next_target(10, ["inconclusive"], 1.0, 3.0, 30) == 20
    assert stats.next_target(20, ["inconclusive"], 2.0, 3.0, 30) == 30
    # never past 30 (max_pairs)
    assert stats.next_target(30, ["inconclusive"], 1.0, 10.0, 30) == 30
    # the next stage would overrun the budget: stop
    assert stats.next_target(10, ["inconclusive"], 2.5, 3.0, 30) == 10
    # one inconclusive comparison among several keeps going
    assert stats.next_target(10, ["faster", "inconclusive"], 1.0, 3.0, 30) == 20


def test_initial_pairs_fit_the_budget_or_fall_back_to_a_single_shot():
    assert stats.initial_pairs(0.1, 3.0, 30) == 10
    # the minimum of 10 pairs is honoured: 7 pairs fit the budget, 10 run (they fit in 3x)
    assert stats.initial_pairs(0.4, 3.0, 30) == 10
    assert stats.initial_pairs(0.9, 3.0, 30) == 10
    assert stats.initial_pairs(1.0, 3.0, 30) is None   # 10 pairs overrun 3x: single shot


def test_describe_and_instability_warnings():
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    assert stats.instability_warnings("a", steady) == []
    d = stats.describe(steady)
    assert d["median_s"] == pytest.approx(1.0) and d["cv"] < 0.02
    noisy = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0]  # max is 71% above the mean
    w = stats.instability_warnings("a", noisy)
    assert any("std dev" in x for x in w)
    assert any("50%" in x for x in w)
    spiky = [1.0] * 20 + [4.5]
    assert any("4.5x the fastest" in x for x in stats.instability_warnings("a", spiky))
    assert stats.describe([])["median_s"] is None
    assert math.isclose(stats.describe([2.0])["stdev_s"], 0.0)


def test_an_aa_control_widens_the_interval_and_says_noisy_machine():
    a = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0] * 2
    # the rewrite is 2% slower than the original: within the 3% band
    b = [x * 1.02 for x in a]
    quiet = [x * 1.0 for x in a]  # the control agrees with the original: noise floor 0
    p = stats.compare_paired(a, b, control=quiet)
    assert p.noise_floor == 0 and p.control.verdict == "equivalent"
    assert p.verdict == "equivalent"
    # the copy of identical code runs 6% slower in this run: the machine cannot resolve 3%
    loud = [x * (1.06 if i % 3 else 1.07) for i, x in enumerate(a)]
    p = stats.compare_paired(a, b, control=loud)
    assert p.noise_floor > 0.05 and p.control.verdict == "slower"
    assert p.verdict == "noisy-machine"
    assert p.ratio_low <= 1.02 * 0.95 and p.ratio_high >= 1.02 * 1.05  # widened both ways
    # a large effect survives the widening
    fast = [x * 0.5 for x in a]
    assert stats.compare_paired(a, fast, control=loud).verdict == "faster"
