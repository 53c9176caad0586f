"""Overhead of `tfperf observe`: wall time of the same program run plainly and under observation,
alternated (plain, observed, plain, ...) so that machine load hits both alike. Prints the median
of the per-pair ratios (goal: observed / plain <= 1.2).

The program is a small custom training loop over a tf.data pipeline: a tf.function step called
every batch, a .numpy() read every step, a Python-float retrace at the start: every hook the
recorder installs is on the hot path.

A second program runs Keras fit over a tf.data pipeline (the step wrapper, its eager next() per
step). --compare ROOT times observe from another checkout in the same rounds (before/after).

Run: .venv/bin/python benchmarks/bench_observe_overhead.py [--runs 3] [--steps 400] [--program loop|fit|all]
     [--compare /path/to/old/checkout]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOOP_PROGRAM = """
import sys
import numpy as np
import tensorflow as tf

steps = int(sys.argv[1])
x = np.random.rand(steps * 32, 64).astype("float32")
y = np.random.rand(steps * 32, 1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(2)
model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(128, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


@tf.function
def scaled(v, factor):
    return v * factor


for factor in (0.5, 1.0, 2.0):
    scaled(tf.ones([4]), factor)
losses = []
for xb, yb in dataset:
    losses.append(train_step(xb, yb).numpy())
print(len(losses), float(np.mean(losses)))
"""

# Keras fit over a tf.data pipeline with small steps: the step wrapper and its eager next() per
# step are on the hot path.
FIT_PROGRAM = """
import sys
import numpy as np
import tensorflow as tf

steps = int(sys.argv[1])
x = np.random.rand(steps * 32, 64).astype("float32")
y = np.random.rand(steps * 32, 1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(2)
model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(128, activation="relu"),
                             tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
history = model.fit(dataset, epochs=2, verbose=0)
print(history.history["loss"][-1])
"""
PROGRAMS = {"loop": LOOP_PROGRAM, "fit": FIT_PROGRAM}


CPU: list[float] = []  # CPU seconds (user + sys, the process and what it waited for) of each timed run


def timed(argv, env, cwd=ROOT) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"run failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--program", choices=[*PROGRAMS, "all"], default="all")
    parser.add_argument("--compare", metavar="ROOT", default=None,
                        help="also time observe from another checkout (e.g. the previous commit), "
                             "in the same rounds: plain, observed, observed from ROOT")
    args = parser.parse_args()
    names = list(PROGRAMS) if args.program == "all" else [args.program]
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "TFPERF_OBSERVE_DIR": os.path.join(folder, "store")}
        for name in names:
            program = os.path.join(folder, f"{name}.py")
            with open(program, "w") as f:
                f.write(PROGRAMS[name])
            plain_argv = [sys.executable, program, str(args.steps)]
            observed_argv = [sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main(sys.argv[1:]))",
                             "observe", "--no-store", "--", sys.executable, program, str(args.steps)]
            variants = {"observed": (observed_argv, {**env, "PYTHONPATH": ROOT}, ROOT)}
            if args.compare:
                compare = os.path.abspath(args.compare)
                variants["compare"] = (observed_argv, {**env, "PYTHONPATH": compare}, compare)
            times: dict[str, list[float]] = {"plain": [], **{k: [] for k in variants}}
            cpu: dict[str, list[float]] = {k: [] for k in times}
            for _ in range(args.runs):
                times["plain"].append(timed(plain_argv, env))
                cpu["plain"].append(CPU[-1])
                for key, (argv, variant_env, cwd) in variants.items():
                    times[key].append(timed(argv, variant_env, cwd))
                    cpu[key].append(CPU[-1])
            print(f"== {name}: {args.steps} steps, {args.runs} rounds")
            for key, values in times.items():
                label = key if key != "compare" else f"observed from {args.compare}"
                print(f"{label:>10}: median {statistics.median(values):.2f} s  ({', '.join(f'{t:.2f}' for t in values)})")
            # Each observed run is compared with the plain run of its round: on a shared
            # machine the load drifts between rounds more than within one.
            for key in variants:
                pairs = [b / a for a, b in zip(times["plain"], times[key])]
                label = "observed" if key == "observed" else f"from {args.compare}"
                print(f"  ratio {label}/plain: median {statistics.median(pairs):.3f}x, max {max(pairs):.3f}x "
                      f"(pairs {', '.join(f'{r:.3f}' for r in pairs)}; goal <= 1.2x)")
                # CPU time moves far less with the machine's load than wall time does.
                cpu_pairs = [b / a for a, b in zip(cpu["plain"], cpu[key])]
                print(f"  CPU-time ratio {label}/plain: median {statistics.median(cpu_pairs):.3f}x, "
                      f"max {max(cpu_pairs):.3f}x (pairs {', '.join(f'{r:.3f}' for r in cpu_pairs)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
