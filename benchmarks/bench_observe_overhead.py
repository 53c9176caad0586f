"""Overhead of `tfperf observe`: the same program run plainly and under observation, alternated in
rounds so that machine load hits both alike (the order within a round alternates too, after one
untimed warm-up run of each). Per round, observed / plain of wall time and of CPU time (user +
system of the whole process tree: the `tfperf` CLI and the observed program; CPU time moves far
less with the load of a shared machine). Prints the median pair ratio with its spread, and the
median difference in seconds. Goal: the median pair ratio of the realistic programs (loop, fit)
<= 1.2.

The program is a small custom training loop over a tf.data pipeline: a tf.function step called
every batch, a .numpy() read every step, a Python-float retrace at the start: every hook the
recorder installs is on the hot path.

A second program runs Keras fit over a tf.data pipeline (the step wrapper, its eager next() per
step). A third, `import`, only imports TensorFlow and adds 1 + 1: not a goal row, it shows the
fixed cost per run (the CLI process, the recorder's setup, the report), so that a reader can
tell the fixed part of the realistic programs' overhead from the per-step part.
--compare ROOT times observe from another checkout in the same rounds (before/after).
Observed runs store their facts (as `tfperf observe` does by default) in a temporary folder;
--no-store passes --no-store.

Run: .venv/bin/python benchmarks/bench_observe_overhead.py [--runs 5] [--steps 400]
     [--program loop|fit|import|all] [--compare /path/to/old/checkout] [--no-store]
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

# The data and model both training programs share.
SETUP = """
import sys
import numpy as np
import tensorflow as tf

steps = int(sys.argv[1])
x = np.random.rand(steps * 32, 64).astype("float32")
y = np.random.rand(steps * 32, 1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(2)
model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(128, activation="relu"),
                             tf.keras.layers.Dense(1)])
"""

LOOP_PROGRAM = SETUP + """optimizer = tf.keras.optimizers.SGD(0.01)


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
FIT_PROGRAM = SETUP + """model.compile(optimizer="sgd", loss="mse")
history = model.fit(dataset, epochs=2, verbose=0)
print(history.history["loss"][-1])
"""
IMPORT_PROGRAM = """
import tensorflow as tf
print(float(tf.constant(1.0) + 1.0))
"""
PROGRAMS = {"loop": LOOP_PROGRAM, "fit": FIT_PROGRAM, "import": IMPORT_PROGRAM}
REALISTIC = ("loop", "fit")  # the goal rows; `import` is the fixed cost


def timed(argv, env, cwd=ROOT) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the process and every descendant it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"run failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    return elapsed, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def spread(values: list[float]) -> str:
    """median [min-max] (quartiles q1-q3 from 4 values on)."""
    text = f"{statistics.median(values):.3f}x [{min(values):.3f}-{max(values):.3f}"
    if len(values) >= 4:
        q1, _, q3 = statistics.quantiles(values, n=4)
        text += f"; q1-q3 {q1:.3f}-{q3:.3f}"
    return text + "]"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="timed rounds per program")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--program", choices=[*PROGRAMS, "all"], default="all")
    parser.add_argument("--compare", metavar="ROOT", default=None,
                        help="also time observe from another checkout (e.g. the previous commit), "
                             "in the same rounds: plain, observed, observed from ROOT")
    parser.add_argument("--no-store", action="store_true", help="observe with --no-store")
    args = parser.parse_args()
    names = list(PROGRAMS) if args.program == "all" else [args.program]
    goal: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "TFPERF_OBSERVE_DIR": os.path.join(folder, "store")}
        for name in names:
            program = os.path.join(folder, f"{name}.py")
            with open(program, "w") as f:
                f.write(PROGRAMS[name])
            plain_argv = [sys.executable, program, str(args.steps)]
            observed_argv = [sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main(sys.argv[1:]))",
                             "observe", *(["--no-store"] if args.no_store else []), "--",
                             sys.executable, program, str(args.steps)]
            variants = {"plain": (plain_argv, env, ROOT), "observed": (observed_argv, {**env, "PYTHONPATH": ROOT}, ROOT)}
            if args.compare:
                compare = os.path.abspath(args.compare)
                variants["compare"] = (observed_argv, {**env, "PYTHONPATH": compare}, compare)
            for argv, variant_env, cwd in variants.values():  # warm-up: file caches, first-run effects
                timed(argv, variant_env, cwd)
            wall: dict[str, list[float]] = {k: [] for k in variants}
            cpu: dict[str, list[float]] = {k: [] for k in variants}
            keys = list(variants)
            for round_ in range(args.runs):
                for key in (keys if round_ % 2 == 0 else keys[::-1]):
                    w, c = timed(*variants[key])
                    wall[key].append(w)
                    cpu[key].append(c)
            kind = "goal row" if name in REALISTIC else "fixed cost per run, not a goal row"
            steps = f"{args.steps} steps, " if name in REALISTIC else ""
            print(f"== {name} ({kind}): {steps}{args.runs} rounds")
            for key in variants:
                label = key if key != "compare" else f"observed from {args.compare}"
                print(f"  {label}: wall median {statistics.median(wall[key]):.2f} s ({', '.join(f'{t:.2f}' for t in wall[key])}); "
                      f"CPU median {statistics.median(cpu[key]):.2f} s ({', '.join(f'{t:.2f}' for t in cpu[key])})")
            # Each observed run is compared with the plain run of its round: on a shared
            # machine the load drifts between rounds more than within one.
            for key in keys[1:]:
                label = "observed" if key == "observed" else f"from {args.compare}"
                wall_pairs = [b / a for a, b in zip(wall["plain"], wall[key])]
                cpu_pairs = [b / a for a, b in zip(cpu["plain"], cpu[key])]
                wall_diff = statistics.median(b - a for a, b in zip(wall["plain"], wall[key]))
                cpu_diff = statistics.median(b - a for a, b in zip(cpu["plain"], cpu[key]))
                print(f"  {label}/plain  wall: {spread(wall_pairs)}, median +{wall_diff:.3f} s")
                print(f"  {label}/plain  CPU:  {spread(cpu_pairs)}, median +{cpu_diff:.3f} s")
                if name in REALISTIC:
                    goal.setdefault(key, {})[f"{name} wall"] = statistics.median(wall_pairs)
                    goal.setdefault(key, {})[f"{name} CPU"] = statistics.median(cpu_pairs)
    for key, rows in goal.items():
        label = "observed" if key == "observed" else f"from {args.compare}"
        worst = max(rows.values())
        print(f"goal ({label}): median pair ratio <= 1.2x: "
              + ", ".join(f"{k} {v:.3f}x" for k, v in rows.items())
              + f" -> {'met' if worst <= 1.2 else 'NOT met'} (worst median {worst:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
