"""Is the warm-up long enough, or longer than it needs to be? Measured, not guessed.

    python benchmarks/bench_warmup.py [--reps 8] [--long 0.2] [--short 0.1] [--budget 0.2]

The timing engine warms each variant up for >= 3 calls and >= a minimum time before it
calibrates and times interleaved pairs (bench/measure.py: 0.2 s on a GPU, ``CPU_WARMUP_MIN_S``
on a CPU, set from this script's figures). This script runs real benchmark jobs (planned from
source as the editor's code action plans them) with a longer and a shorter warm-up, alternating, each run in a fresh process (as a job runs in a fresh worker), and
prints per job:
- the median speedup estimate with each warm-up, and their ratio (the bias a shorter warm-up
  would bring; the practical threshold of a verdict is 3%);
- how often each gave the same verdict, and the A/A control's verdicts (never "faster"/"slower");
- the time from job start to result with each.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_worker_latency import REWRITE, THREE  # the same jobs as the latency rows

with open(os.path.join(ROOT, "examples", "seed001_tf_function_decorator.py"), encoding="utf-8") as _seed:
    SEED001 = _seed.read()

JOBS = {
    "TFP401 loop of matmuls -> einsum": ("TFP401", REWRITE),
    "TFP402 per-row reduce_mean -> one reduction": ("TFP402", SEED001),
    "TFP303 eager -> tf.function -> XLA": ("TFP303", THREE),  # its first finding, costly()
}

# One run in a fresh process: plan the finding, run the job with the given warm-up, print JSON.
CHILD = textwrap.dedent("""\
    import json, os, sys, time
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, {root!r})
    import tensorflow as tf
    from tfperf_lsp.bench import measure, tfjob
    from tfperf_lsp.bench.plans import build_plan
    from tfperf_lsp.bench.protocol import Device
    from tfperf_lsp.engine import analyze
    path, code, warmup, budget = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    measure.CPU_WARMUP_MIN_S = warmup  # what tfjob warms up with on a CPU
    build = measure.Settings  # and on a GPU
    measure.Settings = lambda *a, **k: build(*a, **{{"warmup_min_s": warmup, **k}})
    analysis = analyze(open(path).read(), path)
    finding = next(f for f in analysis.findings if f.code == code)
    job = build_plan(analysis, finding, budget_s=budget).job
    started = time.perf_counter()
    result = tfjob.run_job(tf, job, Device("cpu", "cpu"), lambda *a: None)
    elapsed = time.perf_counter() - started
    comparisons = [[c.speedup, c.verdict] for c in result.comparisons]
    control = (result.timing or {{}}).get("control") or {{}}
    print(json.dumps({{"elapsed": elapsed, "comparisons": comparisons, "control": control.get("verdict")}}))
""")


def run_once(path: str, code: str, warmup: float, budget: float) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT), path, code, str(warmup), str(budget)],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--long", type=float, default=0.2, help="the longer warm-up's minimum seconds")
    parser.add_argument("--short", type=float, default=0.1, help="the shorter warm-up's minimum seconds")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds of timed pairs (the editor's quick setting)")
    args = parser.parse_args()
    long_s = args.long
    print(f"{args.reps} runs per setting, alternating; warm-up >= 3 calls and >= {long_s:g} s vs >= {args.short:g} s; "
          f"budget {args.budget:g} s; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        for label, (code, source) in JOBS.items():
            path = os.path.join(folder, "job.py")
            with open(path, "w") as handle:
                handle.write(source)
            runs: dict[float, list[dict]] = {long_s: [], args.short: []}
            for _ in range(args.reps):
                for warmup in (long_s, args.short):
                    runs[warmup].append(run_once(path, code, warmup, args.budget))
            print(label)
            for index in range(len(runs[long_s][0]["comparisons"])):
                medians = {w: statistics.median(r["comparisons"][index][0] for r in rs) for w, rs in runs.items()}
                verdicts = {w: [r["comparisons"][index][1] for r in rs] for w, rs in runs.items()}
                bias = medians[args.short] / medians[long_s]
                print(f"  comparison {index + 1}: median speedup {medians[long_s]:.3g}x (warm-up {long_s:g} s) vs "
                      f"{medians[args.short]:.3g}x ({args.short:g} s): ratio {bias:.3f}; verdicts "
                      + "; ".join(f"{w:g} s: " + ",".join(sorted(set(v))) for w, v in verdicts.items()))
            for warmup, rs in runs.items():
                controls = [r["control"] for r in rs]
                print(f"  warm-up {warmup:g} s: job {statistics.median(r['elapsed'] for r in rs):.2f} s median; "
                      f"A/A control verdicts {','.join(str(c) for c in controls)}")


if __name__ == "__main__":
    main()
