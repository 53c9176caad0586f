"""`tfperf bench` on the shipped seed example: JSON as documented, the seed's claim reproduced."""
import json
import os
import subprocess
import sys

import pytest

from timing_claims import skip_if_too_noisy_to_time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED001 = os.path.join(ROOT, "examples", "seed001_tf_function_decorator.py")


def tfperf(*args, cache):
    env = {**os.environ, "TFPERF_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "tfperf_lsp.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


def line_of(code):
    out = subprocess.run([sys.executable, "-m", "tfperf_lsp.cli", "check", "--format", "json", SEED001], capture_output=True, text=True, cwd=ROOT)
    return next(f["location"]["row"] for f in json.loads(out.stdout) if f["code"] == code)


@pytest.mark.tf
@pytest.mark.slow
def test_seed001_eager_vs_tf_function_json(tmp_path):
    line = line_of("TFP303")
    run = tfperf("bench", SEED001, "--line", str(line), "--format", "json", "--budget", "1.5", "--timeout", "600", cache=tmp_path)
    assert run.returncode == 0, run.stderr
    [entry] = json.loads(run.stdout)["results"]
    for key in ("code", "category", "filename", "location", "verdict", "speedup", "ci95", "outputs_match",
                "max_abs_err", "variants", "device", "tf_version", "inputs", "warnings", "error"):
        assert key in entry, key
    assert entry["code"] == "TFP303" and entry["location"]["row"] == line
    assert [v["name"] for v in entry["variants"]] == ["eager", "tf.function", "tf.function+XLA"]
    for variant in entry["variants"]:
        assert variant["median_s"] > 0 and variant["first_call_s"] > 0
    assert entry["outputs_match"] is True
    assert entry["inputs"] == [{"name": "x", "shape": [100, 100], "dtype": "float32", "source": "assignment", "scale": 1.0}]
    assert entry["device"].startswith(("CPU", "GPU"))
    # Cached: the second run answers from disk at once and says so.
    again = tfperf("bench", SEED001, "--line", str(line), "--budget", "1.5", "--timeout", "600", cache=tmp_path)
    assert "cached result" in again.stdout
    # The seed's speed claim, where this machine can time it at all: the engine says when it
    # cannot (its A/A control differs beyond the 3% band, or the calls allowed no timed pairs).
    graph = next(c for c in entry["comparisons"] if c["candidate"] == "tf.function")
    single_shot = any(variant["samples"] == 0 for variant in entry["variants"])  # no timed pairs
    skip_if_too_noisy_to_time(graph["verdict"], single_shot, graph["verdict"])
    assert all(variant["samples"] >= 6 for variant in entry["variants"])
    assert graph["verdict"] == "faster" and graph["speedup"] > 1.5  # the seed's claim: ~5x


def test_nothing_to_benchmark_at_a_line(tmp_path):
    run = tfperf("bench", SEED001, "--line", "1", cache=tmp_path)
    assert run.returncode == 2 and "no finding to benchmark on line 1" in run.stderr
