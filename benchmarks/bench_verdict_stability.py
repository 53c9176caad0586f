"""Do benchmark verdicts and intervals hold from one run to the next on this machine?

    python benchmarks/bench_verdict_stability.py [--runs 20] [--budget 2] [--only aa|ab]

A/A: ``--runs`` jobs of identical code on both sides (a small matmul chain). Prints the verdict
counts (goal: no "faster"/"slower", at least 75% "equivalent", or an honest "noisy-machine") and
the interval widths.

A/B: ``--runs`` jobs of one real finding (TFP401: a Python loop of matmuls stacked, rewritten as
one einsum; ``--loop``/``--size`` change the effect), planned from source as `tfperf bench` does. Prints each interval and how many of
them contain the median of all the runs' estimates (goal: at least 90%, i.e. 18 of 20).

Each job runs in a fresh worker (as in the editor), with the A/A control the worker always adds.
Runs alternate A/A and A/B so that both see the same machine load over the session.
"""
import argparse
import os
import statistics
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfperf_lsp.bench import Job, Variant, WorkerPool  # noqa: E402
from tfperf_lsp.bench.plans import build_plan  # noqa: E402
from tfperf_lsp.engine import analyze  # noqa: E402

AB_SOURCE = textwrap.dedent("""
    import tensorflow as tf
    A = tf.random.uniform([{n}, {m}, {m}])
    B = tf.random.uniform([{m}, {m}])
    C = []
    for i in range({n}):
        C.append(tf.matmul(A[i], B))
    C = tf.stack(C, axis=0)
""")


def aa_job(budget: float, seed: int) -> Job:
    prelude = ("import tensorflow as tf\nx = tf.random.uniform([64, 64])\n"
               "f = tf.function(lambda x: tf.matmul(x, x) @ x)\n")
    body = "def __tfperf_run__():\n    return f(x)\n"
    return Job(prelude=prelude, variants=[Variant("a", body), Variant("b", body)],
               budget_s=budget, seed=seed)


def ab_job(budget: float, seed: int, loop: int, size: int) -> Job:
    analysis = analyze(AB_SOURCE.format(n=loop, m=size), "/tmp/stability_example.py")
    finding = next(f for f in analysis.findings if f.code == "TFP401")
    plan = build_plan(analysis, finding, budget_s=budget, seed=seed)
    assert plan.job is not None, plan.problem
    return plan.job


def describe(kind: str, rows: list) -> None:
    if not rows:
        print(f"{kind}: no results")
        return
    verdicts = [r["verdict"] for r in rows]
    widths = [r["width"] for r in rows if r["width"] is not None]
    floors = [r["floor"] for r in rows if r["floor"] is not None]
    counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
    print(f"{kind}: {len(rows)} runs; verdicts: {counts}")
    if widths:
        print(f"{kind}: CI width (high/low - 1): median {statistics.median(widths):.1%}, "
              f"max {max(widths):.1%}")
    if floors:
        print(f"{kind}: A/A-control noise floor: median {statistics.median(floors):.1%}, "
              f"max {max(floors):.1%}")
    speedups = [r["speedup"] for r in rows]
    overall = statistics.median(speedups)
    inside = sum(1 for r in rows if r["lo"] is not None and r["lo"] <= overall <= r["hi"])
    print(f"{kind}: median speedup of all runs {overall:.3f}x; intervals containing it: "
          f"{inside}/{len(rows)}")
    if kind == "A/A":
        wrong = sum(v in ("faster", "slower") for v in verdicts)
        eq = verdicts.count("equivalent")
        noisy = verdicts.count("noisy-machine")
        ok = wrong == 0 and eq >= 0.75 * len(rows)
        print(f"A/A goal (0 faster/slower, >= {0.75 * len(rows):.0f} equivalent): "
              f"{'met' if ok else 'NOT met'} ({wrong} wrong, {eq} equivalent, {noisy} noisy-machine)")
    else:
        ok = inside >= 0.9 * len(rows)
        print(f"A/B goal (>= {0.9 * len(rows):.0f}/{len(rows)} intervals contain the median): "
              f"{'met' if ok else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--budget", type=float, default=2.0)
    ap.add_argument("--only", choices=("aa", "ab"), default=None)
    ap.add_argument("--loop", type=int, default=40, help="A/B: matmuls in the loop (fewer: a smaller effect)")
    ap.add_argument("--size", type=int, default=40, help="A/B: matrix size")
    args = ap.parse_args()
    print(f"verdict stability: {args.runs} runs each, budget {args.budget} s, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}")
    kinds = [k for k in ("aa", "ab") if args.only in (None, k)]
    rows = {k: [] for k in kinds}
    started = time.monotonic()
    with WorkerPool(timeout_s=120) as pool:
        pool.worker_info()
        for i in range(args.runs):
            for kind in kinds:
                job = aa_job(args.budget, i) if kind == "aa" else ab_job(args.budget, i, args.loop, args.size)
                t0 = time.monotonic()
                res = pool.run_job(job)
                wall = time.monotonic() - t0
                if res.verdict == "error" or not res.comparisons:
                    print(f"{kind} run {i}: {res.summary}")
                    continue
                c = res.comparisons[0]
                width = c.ci_high / c.ci_low - 1 if c.ci_low and c.ci_high else None
                ctrl = res.timing.get("control") or {}
                rows[kind].append({"verdict": c.timing_verdict, "speedup": c.speedup, "lo": c.ci_low,
                                   "hi": c.ci_high, "width": width, "floor": c.noise_floor})
                ci = f"{c.ci_low:.3f}-{c.ci_high:.3f}" if c.ci_low else "-"
                print(f"{kind} run {i:2d}: {c.speedup:.3f}x  CI {ci}  pairs {c.pairs:2d}  "
                      f"control {ctrl.get('speedup') or 0:.3f}x ({ctrl.get('verdict')})  "
                      f"{c.timing_verdict:<13} wall {wall:.1f} s  load {os.getloadavg()[0]:.1f}",
                      flush=True)
    print(f"--- {time.monotonic() - started:.0f} s in all")
    for kind in kinds:
        describe("A/A" if kind == "aa" else "A/B", rows[kind])


if __name__ == "__main__":
    main()
