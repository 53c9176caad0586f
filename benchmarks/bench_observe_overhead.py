"""Overhead of `tfperf observe`: wall time of the same program run plainly and under observation,
alternated (plain, observed, plain, ...) so that machine load hits both alike. Prints the median
of the per-pair ratios (goal: observed / plain <= 1.2).

The program is a small custom training loop over a tf.data pipeline: a tf.function step called
every batch, a .numpy() read every step, a Python-float retrace at the start: every hook the
recorder installs is on the hot path.

Run: .venv/bin/python benchmarks/bench_observe_overhead.py [--runs 3] [--steps 400]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
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


def timed(argv, env) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"run failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        program = os.path.join(folder, "train.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "TFPERF_OBSERVE_DIR": os.path.join(folder, "store")}
        plain_argv = [sys.executable, program, str(args.steps)]
        observed_argv = [sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main(sys.argv[1:]))",
                         "observe", "--no-store", "--", sys.executable, program, str(args.steps)]
        plain, observed = [], []
        for _ in range(args.runs):
            plain.append(timed(plain_argv, env))
            observed.append(timed(observed_argv, env))
    p, o = statistics.median(plain), statistics.median(observed)
    # Each observed run is compared with the plain run just before it: on a shared machine the
    # load drifts between pairs more than within one.
    pairs = [b / a for a, b in zip(plain, observed)]
    print(f"plain    : median {p:.2f} s  ({', '.join(f'{t:.2f}' for t in plain)})")
    print(f"observed : median {o:.2f} s  ({', '.join(f'{t:.2f}' for t in observed)})")
    print(f"pair ratios: {', '.join(f'{r:.3f}' for r in pairs)}")
    print(f"ratio observed/plain: {statistics.median(pairs):.3f}x median of pairs (goal <= 1.2x), "
          f"{args.steps} steps, {args.runs} runs each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
