"""How much does an A/A benchmark (identical code on both sides) spread on this machine?

    python benchmarks/bench_worker_aa_spread.py [--runs 8] [--budget 3] [--min-sample 0.05]
        [--size 64]

Runs the same job N times through a WorkerPool (warm spare) and prints, per run, the speedup
estimate (ideal 1.00), its 95% interval, the interval width, the pairs used and the verdict
(ideal "equivalent"), then the spread over runs. A wide interval or "inconclusive" on A/A
means the machine is too noisy for the 3% threshold at that budget.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfperf_lsp.bench import Job, Variant, WorkerPool  # noqa: E402


def aa_job(size: int, budget: float, min_sample: float, seed: int) -> Job:
    prelude = (f"import tensorflow as tf\nx = tf.random.uniform([{size}, {size}])\n"
               "f = tf.function(lambda x: tf.matmul(x, x) @ x)\n")
    body = "def __tfperf_run__():\n    return f(x)\n"
    return Job(prelude=prelude, variants=[Variant("a", body), Variant("b", body)],
               budget_s=budget, min_sample_s=min_sample, seed=seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--min-sample", type=float, default=0.05)
    ap.add_argument("--size", type=int, default=64)
    args = ap.parse_args()
    print(f"A/A spread: {args.runs} runs, budget {args.budget} s, min sample {args.min_sample} s, "
          f"{args.size}x{args.size} matmul chain, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}")
    rows = []
    with WorkerPool() as pool:
        pool.worker_info()
        for i in range(args.runs):
            t0 = time.monotonic()
            res = pool.run_job(aa_job(args.size, args.budget, args.min_sample, seed=i))
            wall = time.monotonic() - t0
            if res.verdict == "error":
                print(f"run {i}: {res.summary}")
                continue
            c = res.comparisons[0]
            width = c.ci_high - c.ci_low
            rows.append((c.speedup, width, c.pairs, c.verdict))
            print(f"run {i}: speedup {c.speedup:.3f}  CI {c.ci_low:.3f}-{c.ci_high:.3f} "
                  f"(width {width * 100:.1f}%)  pairs {c.pairs:2d}  k {res.variants[0].calls_per_sample}"
                  f"  per call {res.variants[0].median_s * 1e6:.0f} us  {c.verdict:<12} wall {wall:.1f} s")
    if rows:
        speedups = [r[0] for r in rows]
        widths = [r[1] for r in rows]
        verdicts = [r[3] for r in rows]
        print(f"speedup: median {statistics.median(speedups):.3f}, min {min(speedups):.3f}, "
              f"max {max(speedups):.3f}")
        print(f"CI width: median {statistics.median(widths) * 100:.1f}%, max {max(widths) * 100:.1f}%")
        print("verdicts: " + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts))))
        print(f"false 'faster'/'slower' on identical code: "
              f"{sum(v in ('faster', 'slower') for v in verdicts)} of {len(verdicts)}")


if __name__ == "__main__":
    main()
