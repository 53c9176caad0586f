"""The paired sign-test method of docs (shared/reference/benchmark-method.md), pure Python.

For pairs (A_i, B_i) of per-call times of the original A and the rewrite B measured back to back:
r_i = ln(B_i / A_i); the time ratio is exp(median r); its 95% interval comes from order
statistics of the sorted r (the sign-test interval, exact and distribution-free). The user-facing
speedup is A/B = 1/ratio (> 1 means the rewrite is faster), so its interval is the reciprocal.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

THRESHOLD = 0.03        # practical-significance band: +-3% counts as "no difference"
LEVEL = 0.95
MIN_PAIRS = 10          # honoured: fewer pairs than this and the result is a single shot
PAIR_STEP = 10          # adaptive schedule: 10 -> 20 -> 30 pairs
CONCLUSIVE = ("faster", "slower", "equivalent")
NOISY = "noisy-machine"


def binom_half_cdf(j: int, n: int) -> float:
    """P(X <= j) for X ~ Binomial(n, 1/2), exact with integers."""
    if j < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(j, n) + 1)) / 2 ** n


def sign_test_ranks(n: int, level: float = LEVEL) -> tuple[int, int, float] | None:
    """(lo, hi, coverage): 1-based order statistics whose interval covers the median with
    probability >= level, as narrow as possible. None when n is too small for that level."""
    best = None
    for k in range(1, n // 2 + 1):
        coverage = 1.0 - 2.0 * binom_half_cdf(k - 1, n)
        if coverage < level:
            break
        best = (k, n - k + 1, coverage)
    return best


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def verdict_for_ratio_ci(lo: float, hi: float, threshold: float = THRESHOLD) -> str:
    """Verdict from the interval of the time ratio B/A (rewrite / original)."""
    if hi < 1.0 - threshold:
        return "faster"
    if lo > 1.0 + threshold:
        return "slower"
    if lo >= 1.0 - threshold and hi <= 1.0 + threshold:
        return "equivalent"
    return "inconclusive"


@dataclass(frozen=True)
class Paired:
    n: int
    ratio: float                 # B/A time ratio (median)
    ratio_low: float | None
    ratio_high: float | None
    coverage: float | None
    verdict: str
    noise_floor: float | None = None   # |ln| of the A/A control's ratio: the interval is widened by it
    control: "Paired | None" = None    # the A/A control's own comparison

    @property
    def speedup(self) -> float:
        return 1.0 / self.ratio

    @property
    def speedup_low(self) -> float | None:
        return None if self.ratio_high is None else 1.0 / self.ratio_high

    @property
    def speedup_high(self) -> float | None:
        return None if self.ratio_low is None else 1.0 / self.ratio_low


def compare_paired(a: Sequence[float], b: Sequence[float], threshold: float = THRESHOLD,
                   level: float = LEVEL, control: Sequence[float] | None = None) -> Paired:
    """a[i], b[i]: per-call times of the original and the rewrite in pair i.

    ``control[i]``: a second, independent copy of the original timed in the same round (an A/A
    control). Identical code should give a ratio of 1; how far it is from 1 in this run is the
    noise floor of this run (contention, memory layout, frequency changes the sign test cannot
    see, because they move whole runs rather than single pairs). The A/B interval is widened by
    it on both sides, and when the control itself cannot show that identical code runs at the
    same speed and the widened interval decides nothing, the verdict is "noisy-machine" rather
    than a false precision."""
    if control is not None:
        ctrl = compare_paired(a, control, threshold, level)
        raw = compare_paired(a, b, threshold, level)
        if raw.ratio_low is None or raw.ratio_high is None:
            return raw
        noise = abs(math.log(ctrl.ratio))
        lo, hi = raw.ratio_low * math.exp(-noise), raw.ratio_high * math.exp(noise)
        verdict = verdict_for_ratio_ci(lo, hi, threshold)
        if verdict == "inconclusive" and ctrl.verdict != "equivalent":
            verdict = NOISY
        return Paired(raw.n, raw.ratio, lo, hi, raw.coverage, verdict, noise, ctrl)
    if len(a) != len(b):
        raise ValueError(f"paired samples need equal lengths, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError("no pairs")
    if any(not (x > 0) for x in list(a) + list(b)):
        raise ValueError("times must be positive")
    r = sorted(math.log(y / x) for x, y in zip(a, b))
    ratio = math.exp(median(r))
    ranks = sign_test_ranks(len(r), level)
    if ranks is None:
        return Paired(len(r), ratio, None, None, None, "inconclusive")
    lo_i, hi_i, coverage = ranks
    lo, hi = math.exp(r[lo_i - 1]), math.exp(r[hi_i - 1])
    return Paired(len(r), ratio, lo, hi, coverage, verdict_for_ratio_ci(lo, hi, threshold))


def pair_stages(max_pairs: int) -> list[int]:
    """Targets of the adaptive schedule: 10, 20, 30, ... capped by max_pairs (>= MIN_PAIRS)."""
    cap = max(MIN_PAIRS, max_pairs)
    stages = list(range(PAIR_STEP, cap + 1, PAIR_STEP))
    if not stages or stages[-1] != cap:
        stages.append(cap)
    return stages


def initial_pairs(pair_time_s: float, budget_s: float, max_pairs: int) -> int | None:
    """How many pairs to run first; None means 'single shot' (MIN_PAIRS pairs do not fit in 3x
    the budget). The minimum is honoured: never fewer than MIN_PAIRS pairs with an interval."""
    first = max(MIN_PAIRS, pair_stages(max_pairs)[0])
    if pair_time_s <= 0:
        return first
    if MIN_PAIRS * pair_time_s <= 3.0 * budget_s:
        return max(MIN_PAIRS, min(first, int(budget_s // pair_time_s)))
    return None


def next_target(n_done: int, verdicts: Sequence[str], elapsed_s: float, budget_s: float,
                max_pairs: int) -> int:
    """After n_done pairs: the new pair target, or n_done to stop. Extends to the next stage
    only while some comparison is inconclusive and the extra pairs fit in the remaining budget
    (estimated from the time per pair so far)."""
    if all(v in CONCLUSIVE for v in verdicts) or n_done <= 0:
        return n_done
    per_pair = elapsed_s / n_done
    for stage in pair_stages(max_pairs):
        if stage > n_done:
            return stage if elapsed_s + (stage - n_done) * per_pair <= budget_s else n_done
    return n_done


def describe(samples: Sequence[float]) -> dict:
    """median/mean/stdev/cv/min/max of per-call times."""
    if not samples:
        return {"median_s": None, "mean_s": None, "stdev_s": None, "cv": None,
                "min_s": None, "max_s": None}
    mean = statistics.fmean(samples)
    stdev = statistics.stdev(samples) if len(samples) > 1 else 0.0
    return {"median_s": statistics.median(samples), "mean_s": mean, "stdev_s": stdev,
            "cv": stdev / mean if mean > 0 else None, "min_s": min(samples), "max_s": max(samples)}


def instability_warnings(name: str, samples: Sequence[float]) -> list[str]:
    """pyperf's and timeit's 'this may be unstable' rules on one variant's samples."""
    if len(samples) < 2:
        return []
    d = describe(samples)
    mean, out = d["mean_s"], []
    if d["cv"] is not None and d["cv"] >= 0.10:
        out.append(f"{name}: unstable timing (std dev {d['cv']:.0%} of the mean)")
    if mean > 0 and (d["min_s"] <= 0.5 * mean or d["max_s"] >= 1.5 * mean):
        out.append(f"{name}: unstable timing (min or max is 50% or more away from the mean)")
    if d["min_s"] > 0 and d["max_s"] >= 4.0 * d["min_s"]:
        out.append(f"{name}: unstable timing (slowest sample {d['max_s'] / d['min_s']:.1f}x the fastest)")
    return out
