"""How long from submitting a job to its result: warm spare vs cold start?

    python benchmarks/bench_worker_latency.py [--repeat 3]

Cold: a pool without a spare starts a worker for the job (Python start + TensorFlow import).
Warm: the spare is started and ready (TensorFlow imported) before the job is submitted.
The job is tiny (budget 0.2 s) so the difference is the start-up cost the spare hides.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfperf_lsp.bench import Job, Variant, WorkerPool  # noqa: E402

BODY = "def __tfperf_run__():\n    return x + 1.0\n"
JOB = Job(prelude="import tensorflow as tf\nx = tf.ones([8])\n",
          variants=[Variant("a", BODY), Variant("b", BODY)], budget_s=0.2, min_sample_s=0.01)


def timed(pool):
    t0 = time.monotonic()
    res = pool.run_job(JOB)
    if res.verdict == "error":
        sys.exit(res.summary)
    return time.monotonic() - t0, res.timing["wall_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cold, warm, ready, inside = [], [], [], []
    for _ in range(args.repeat):
        with WorkerPool(keep_spare=False) as pool:
            total, job_s = timed(pool)
            cold.append(total)
            inside.append(job_s)
        with WorkerPool(keep_spare=False) as pool:
            t0 = time.monotonic()
            pool.start_spare()
            pool.worker_info()          # waits for `ready`: TensorFlow imported
            ready.append(time.monotonic() - t0)
            total, job_s = timed(pool)
            warm.append(total)
            inside.append(job_s)
    med = statistics.median
    print(f"{args.repeat} runs each, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"worker start to ready (Python + TensorFlow import): median {med(ready):.2f} s")
    print(f"cold start, submit -> result: median {med(cold):.2f} s  (all: "
          + ", ".join(f"{x:.2f}" for x in cold) + ")")
    print(f"warm spare, submit -> result: median {med(warm):.2f} s  (all: "
          + ", ".join(f"{x:.2f}" for x in warm) + ")")
    print(f"time inside the worker for the job itself: median {med(inside):.2f} s")
    print(f"the spare saves {med(cold) - med(warm):.2f} s per benchmark")


if __name__ == "__main__":
    main()
