"""``tfperf check`` as a whole process on real files, against pyflakes and ruff in the same run.

Row of issue 11's table: ``tfperf check`` on 300 real files    [<= pyflakes cold; <= 0.3 s warm]

The files are the first N parseable files of the shared real-world corpus, copied with their
package layout into a temporary folder (so cross-file lookups still resolve, and the cache has
somewhere to live). Cold: no cache; warm: the same command again with nothing changed.

Usage: python benchmarks/bench_cli.py [--files 300] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import child_env, copy_tree, peer, realworld_files, skipped  # noqa: E402

TFPERF = [sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main())", "check", "--format", "json", "--exit-zero"]


def timed(command: list[str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=child_env())
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    return elapsed


def cold_and_warm(command: list[str], cwd: str, cache: str, repeat: int) -> tuple[float, float]:
    colds, warms = [], []
    for _ in range(repeat):
        shutil.rmtree(os.path.join(cwd, cache), ignore_errors=True)
        colds.append(timed(command, cwd))
        warms.append(timed(command, cwd))
    return statistics.median(colds), statistics.median(warms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = realworld_files(args.files)
    if not files:
        print("no real-world corpus found: set TFPERF_REALWORLD")
        return
    with tempfile.TemporaryDirectory() as directory:
        copied = copy_tree(files, directory)
        lines = sum(open(p, encoding="utf-8").read().count("\n") + 1 for p in copied)
        print(f"{len(copied)} real files ({lines} lines) in their package layout, {os.cpu_count()} cores")
        timed(TFPERF + [copied[0]], directory)  # untimed: bytecode compiled once, as an installed tool has it
        results = {"tfperf": cold_and_warm(TFPERF + ["."], directory, ".tfperf_cache", args.repeat)}
        pyflakes = peer("pyflakes")
        if pyflakes:
            cold = statistics.median(timed(pyflakes + ["."], directory) for _ in range(args.repeat))
            results["pyflakes"] = (cold, None)  # pyflakes has no cache
        else:
            print(skipped("pyflakes"))
        ruff = peer("ruff")
        if ruff:
            results["ruff"] = cold_and_warm(ruff + ["check", "--exit-zero", "--quiet", "."], directory, ".ruff_cache", args.repeat)
        else:
            print(skipped("ruff"))
    cold, warm = results["tfperf"]
    cells = [f"tfperf cold {cold:.2f} s, warm {warm:.2f} s"]
    for name, (peer_cold, peer_warm) in results.items():
        if name == "tfperf":
            continue
        cell = f"{name} cold {peer_cold:.2f} s ({cold / peer_cold:.2f}x)"
        if peer_warm:
            cell += f", warm {peer_warm:.2f} s ({warm / peer_warm:.1f}x)"
        cells.append(cell)
    print(f"tfperf check, whole process        {' | '.join(cells)}   [goal: cold <= pyflakes; warm <= 0.3 s]")


if __name__ == "__main__":
    main()
