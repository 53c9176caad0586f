"""The timing engine, driven by fake variants on a fake clock (deterministic, no TensorFlow)."""
import random

import pytest

from tfperf_lsp.bench import measure


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Fake:
    """A variant whose call costs `cost` seconds (+- noise) on the fake clock."""

    def __init__(self, clock, name, cost, noise=0.0, seed=0, log=None):
        self.clock, self.name, self.cost, self.noise = clock, name, cost, noise
        self.rng = random.Random(seed)
        self.calls = 0
        self.traces = 0
        self.log = log if log is not None else []

    def __call__(self):
        self.calls += 1
        self.log.append(self.name)
        self.clock.t += self.cost * (1 + self.rng.uniform(-self.noise, self.noise))
        return self.calls

    def runner(self):
        return measure.Runner(self.name, self, lambda: self.traces)


def engine(fakes, clock, syncs=None, **settings):
    hooks = measure.Hooks(clock=clock, sync=lambda out: syncs.append(out) if syncs is not None else None)
    return measure.Engine([f.runner() for f in fakes], measure.Settings(**settings), hooks)


def run_all(e):
    e.first_calls()
    e.timing()
    return e


def test_calibrates_calls_per_sample_so_the_slowest_variant_reaches_min_sample_time():
    clock = Clock()
    a, b = Fake(clock, "a", 0.002), Fake(clock, "b", 0.001)
    e = run_all(engine([a, b], clock, budget_s=3.0, min_sample_s=0.05))
    # one k for both (exact, not rounded up to 1-2-5): the slower variant's samples last 50 ms
    assert [r.calls_per_sample for r in e.runs] == [25, 25]
    assert all(t >= 0.05 * (1 - 1e-9) for t in e.runs[0].sample_totals)


def test_identical_variants_are_not_called_different_when_calibration_stalls_on_one_side():
    """Each sample pays one device sync. One side's calibration sample, stalled by a busy
    machine, gave it k=41 against the other's k=248: the sync then weighed 6x more per call on
    that side, and identical code was reported ~10% slower (CI: 'identical code 1.15x faster')."""
    clock = Clock()
    a, b = Fake(clock, "a", 0.0002, 0.01, 1), Fake(clock, "b", 0.0002, 0.01, 2)

    def sync(out):
        clock.t += 0.001                      # the device sync: 1 ms per sample

    def progress(fraction, message):
        if message == "calibrating":
            a.cost_once = 0.05                # the next call of `a` is stalled by 50 ms

    a.cost_once = 0.0
    original_call = a.__call__

    def stalled_call():
        clock.t += a.cost_once
        a.cost_once = 0.0
        return original_call()

    hooks = measure.Hooks(clock=clock, sync=sync, progress=progress)
    runners = [measure.Runner("a", stalled_call), b.runner()]
    e = measure.Engine(runners, measure.Settings(budget_s=3.0, min_sample_s=0.05), hooks)
    run_all(e)
    assert e.runs[0].calls_per_sample == e.runs[1].calls_per_sample
    assert e.comparisons()[0].verdict == "equivalent"


def test_a_clearly_faster_variant_stops_after_ten_pairs_with_speedup_two():
    from tfperf_lsp.bench import stats
    clock = Clock()
    a, b = Fake(clock, "a", 0.002, 0.01, 1), Fake(clock, "b", 0.001, 0.01, 2)
    e = run_all(engine([a, b], clock, budget_s=3.0))
    assert e.pairs == 10 and not e.single_shot
    p = stats.compare_paired(e.runs[0].samples, e.runs[1].samples)
    assert p.verdict == "faster" and p.speedup == pytest.approx(2.0, rel=0.02)
    assert e.runs[0].first_call_s == pytest.approx(0.002, rel=0.02)


def test_inconclusive_comparisons_extend_to_thirty_pairs_and_no_further():
    clock = Clock()
    # one call per sample (50 ms each), +-40% per call: never conclusive
    a, b = Fake(clock, "a", 0.05, 0.4, 1), Fake(clock, "b", 0.05, 0.4, 2)
    e = run_all(engine([a, b], clock, budget_s=10.0, max_pairs=30))
    assert e.pairs == 30
    assert len(e.runs[0].samples) == len(e.runs[1].samples) == 30


def test_the_pairs_stay_within_the_budget():
    clock = Clock()
    a, b = Fake(clock, "a", 0.05, 0.4, 1), Fake(clock, "b", 0.05, 0.4, 2)  # inconclusive
    e = run_all(engine([a, b], clock, budget_s=1.5))
    # one pair is 2 x 0.05 s; 10 pairs = 1 s; 20 would need 2 s > 1.5 s
    assert e.pairs == 10
    assert e.pairs_wall_s <= 1.5


def test_a_tight_budget_shrinks_calls_per_sample_first():
    clock = Clock()
    a, b = Fake(clock, "a", 0.01), Fake(clock, "b", 0.01)
    e = run_all(engine([a, b], clock, budget_s=0.5))
    assert e.pairs == 10
    assert [r.calls_per_sample for r in e.runs] == [2, 2]
    assert e.pairs_wall_s <= 0.5 + 1e-9


def test_slow_calls_run_at_least_ten_pairs_with_a_warning():
    clock = Clock()
    a, b = Fake(clock, "a", 0.1), Fake(clock, "b", 0.1)
    e = run_all(engine([a, b], clock, budget_s=1.0))
    assert e.pairs == 10 and not e.single_shot  # the documented minimum, even over budget
    assert any("too small" in w for w in e.warnings)


def test_calls_too_long_for_six_pairs_in_three_budgets_are_a_single_shot():
    clock = Clock()
    a, b = Fake(clock, "a", 0.5), Fake(clock, "b", 0.5)
    e = run_all(engine([a, b], clock, budget_s=1.0))
    assert e.single_shot and e.pairs == 0
    assert measure.single_shot_time(e.runs[0]) == pytest.approx(0.5)


def test_a_call_longer_than_the_budget_is_a_single_shot_after_one_warmup_call():
    clock = Clock()
    a, b = Fake(clock, "a", 2.0), Fake(clock, "b", 1.0)
    e = run_all(engine([a, b], clock, budget_s=1.0))
    assert e.single_shot
    assert a.calls == 2  # first call + the reference's second call, nothing more


class Stalling(Fake):
    """A fast variant whose call number `stall_at` is stalled (a busy machine) for `stall_s`."""

    def __init__(self, clock, name, cost, stall_at, stall_s):
        super().__init__(clock, name, cost)
        self.stall_at, self.stall_s = stall_at, stall_s

    def __call__(self):
        if self.calls + 1 == self.stall_at:
            self.clock.t += self.stall_s
        return super().__call__()


def test_one_stalled_warmup_call_among_fast_ones_is_not_a_single_shot():
    clock = Clock()
    a, b = Stalling(clock, "a", 0.005, stall_at=4, stall_s=1.5), Fake(clock, "b", 0.002)
    e = run_all(engine([a, b], clock, budget_s=1.0))
    assert max(e.runs[0].warmup_times) > 1.0  # the stall happened during warm-up
    assert not e.single_shot and e.pairs >= 10


def test_warmup_is_three_calls_and_point_two_seconds_capped_at_two_seconds():
    clock = Clock()
    fast, slow = Fake(clock, "fast", 0.001), Fake(clock, "slow", 0.9)
    e = engine([fast, slow], clock, budget_s=10.0)
    e.first_calls()
    e.warmup()
    assert abs(len(e.runs[0].warmup_times) - 200) <= 1  # 0.2 s of 1 ms calls (float sums)
    assert len(e.runs[1].warmup_times) == 3         # 3 calls, 2.7 s: past the cap, but >= 3
    clock2 = Clock()
    mid = [Fake(clock2, "a", 0.1), Fake(clock2, "b", 0.1)]
    e2 = engine(mid, clock2, budget_s=10.0)
    e2.first_calls()
    e2.warmup()
    assert len(e2.runs[1].warmup_times) == 3


def test_pairs_are_interleaved_in_a_seeded_random_order():
    def order(seed):
        clock, log = Clock(), []
        fakes = [Fake(clock, "a", 0.01, log=log), Fake(clock, "b", 0.01, log=log)]
        e = engine(fakes, clock, budget_s=1.0, min_sample_s=0.01, seed=seed)
        e.first_calls()
        e.warmup()
        n0 = e.calibrate()
        del log[:]
        e.run_pairs(n0)
        return [log[i] for i in range(0, len(log))]  # k == 1: one entry per sample

    first = order(3)
    pairs = [tuple(first[i:i + 2]) for i in range(0, len(first), 2)]
    assert set(pairs) == {("a", "b"), ("b", "a")}   # both orders occur
    assert order(3) == first                         # same seed, same order
    assert order(4) != first


def test_one_device_sync_per_sample_not_per_call():
    clock, syncs = Clock(), []
    a, b = Fake(clock, "a", 0.001), Fake(clock, "b", 0.001)
    e = engine([a, b], clock, syncs=syncs, budget_s=3.0)
    e.first_calls()
    e.warmup()
    n0 = e.calibrate()
    before_syncs, before_calls = len(syncs), a.calls + b.calls
    e.run_pairs(n0)
    assert len(syncs) - before_syncs == 2 * e.pairs
    assert a.calls + b.calls - before_calls == 2 * e.pairs * 50


def test_traces_are_attributed_to_phases():
    clock = Clock()

    class Tracing(Fake):
        def __call__(self):
            out = Fake.__call__(self)
            if self.calls == 1 or self.calls == 400:  # first call, then once while timing
                self.traces += 1
            return out

    a, b = Fake(clock, "a", 0.001), Tracing(clock, "b", 0.001)
    e = run_all(engine([a, b], clock, budget_s=3.0))
    assert e.runs[1].traces_first_call == 1
    assert e.runs[1].traces_during_timing == 1
    assert e.runs[1].traces_total == 2
    assert e.runs[0].traces_during_timing == 0


def test_an_exception_names_the_variant_and_the_phase():
    clock = Clock()

    class Boom(Fake):
        def __call__(self):
            if self.calls >= 5:
                raise ValueError("boom")
            return Fake.__call__(self)

    e = engine([Fake(clock, "a", 0.001), Boom(clock, "b", 0.001)], clock)
    e.first_calls()
    with pytest.raises(measure.UserCodeError) as info:
        e.timing()
    assert info.value.variant == "b" and info.value.phase == "warmup"
    assert isinstance(info.value.exc, ValueError)


def test_progress_is_monotonic_and_below_one_until_done():
    clock, seen = Clock(), []
    fakes = [Fake(clock, "a", 0.001), Fake(clock, "b", 0.001)]
    hooks = measure.Hooks(clock=clock, progress=lambda f, m: seen.append(f))
    e = measure.Engine([f.runner() for f in fakes], measure.Settings(budget_s=1.0), hooks)
    e.first_calls()
    e.timing()
    assert seen == sorted(seen) and all(0 <= f < 1 for f in seen)
    assert len(seen) > 5


def test_calls_for_uses_one_two_five_steps():
    assert measure._calls_for(0.002, 0.05) == 50
    assert measure._calls_for(0.02, 0.05) == 5
    assert measure._calls_for(0.1, 0.05) == 1
    assert measure._calls_for(0.0004, 0.05) == 200
    assert measure._calls_for(0.02, 0.05, above=5) == 10


def test_a_small_budget_calibrates_the_samples_it_will_time_not_longer_ones():
    """With the editor's 0.2 s budget, 10 pairs of 2 variants afford 10 ms samples: calibrating
    50 ms samples first (then cutting them) spent 0.1 s more for the same calls per sample."""
    clock = Clock()
    a, b = Fake(clock, "a", 0.001), Fake(clock, "b", 0.001)
    e = engine([a, b], clock, budget_s=0.2, min_sample_s=0.05)
    e.first_calls()
    e.warmup()
    started = clock.t
    n0 = e.calibrate()
    spent = clock.t - started
    assert [r.calls_per_sample for r in e.runs] == [10, 10]  # 10 ms samples: 10 pairs fill 0.2 s
    assert n0 == 10 and spent < 0.05  # two 10 ms calibration samples, not two of 50 ms
    e.run_pairs(n0)
    assert all(t >= 0.01 * (1 - 1e-9) for r in e.runs for t in r.sample_totals)


def test_a_large_budget_still_calibrates_min_sample_s():
    clock = Clock()
    a, b = Fake(clock, "a", 0.001), Fake(clock, "b", 0.001)
    e = engine([a, b], clock, budget_s=3.0, min_sample_s=0.05)
    e.first_calls()
    e.warmup()
    e.calibrate()
    assert [r.calls_per_sample for r in e.runs] == [50, 50]
