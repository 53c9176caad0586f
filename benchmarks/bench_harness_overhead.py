"""What does the measuring harness itself cost?

    python benchmarks/bench_harness_overhead.py

1. per call: an empty `__tfperf_run__` (returns None) timed through the full worker sampling
   path (first call, warm-up, calibration, interleaved pairs, trace counting, device sync).
   Its per-call time is the loop + Python call overhead added to every call of user code.
2. per sample: each sample ends with one `tf.test.experimental.sync_devices()`; its cost is
   measured as the difference between an empty call and a call that syncs, and shown as a
   fraction of the default 50 ms sample.
3. for scale: one tiny eager op.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfperf_lsp.bench import Job, Variant, WorkerPool  # noqa: E402

EMPTY = "def __tfperf_run__():\n    return None\n"
SYNC = "def __tfperf_run__():\n    tf.test.experimental.sync_devices()\n"
TINY = "def __tfperf_run__():\n    return one + 1.0\n"


def job(body_a, body_b, min_sample=0.05):
    return Job(prelude="import tensorflow as tf\none = tf.constant(1.0)\n",
               variants=[Variant("a", body_a), Variant("b", body_b)],
               budget_s=2.0, min_sample_s=min_sample, compare=False)


def run(pool, j):
    res = pool.run_job(j)
    if res.verdict == "error":
        sys.exit(res.summary)
    return res


def main():
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    with WorkerPool() as pool:
        pool.worker_info()
        for min_sample in (0.001, 0.05):
            res = run(pool, job(EMPTY, EMPTY, min_sample))
            for v in res.variants:
                print(f"empty call, {min_sample * 1e3:4.0f} ms samples, k = {v.calls_per_sample:8d}: "
                      f"median {v.median_s * 1e9:5.1f} ns, min {v.min_s * 1e9:5.1f} ns per call")
        res = run(pool, job(EMPTY, SYNC))
        empty, sync = res.variants
        cost = sync.median_s - empty.median_s
        print(f"one device sync (paid once per sample): {cost * 1e6:.1f} us = "
              f"{cost / 0.05:.3%} of a 50 ms sample")
        tiny = run(pool, job(TINY, TINY)).variants[0]
        print(f"for scale: one tiny eager op (`one + 1.0`): {tiny.median_s * 1e6:.2f} us per call; "
              f"the per-call harness overhead is {empty.median_s / tiny.median_s:.2%} of it")


if __name__ == "__main__":
    main()
