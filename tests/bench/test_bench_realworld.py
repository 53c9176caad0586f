"""Benchmarks on files adapted from real code (tests/bench/realworld/): only the slice runs."""
import os
import subprocess
import sys
import textwrap

import pytest

from tfperf_lsp.bench.plans import build_plan
from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze

HERE = os.path.dirname(os.path.abspath(__file__))
CIFAR = os.path.join(HERE, "realworld", "cifar_main.py")


def plans(source, name="example.py", settings=None):
    # analysed under an application path: files under tests/ count as test code (rules are silent)
    analysis = analyze(source, os.path.join("/tmp/app", os.path.basename(name)), settings)
    return {f.code: build_plan(analysis, f) for f in analysis.findings if f.fix_title}


def cifar(declare=""):
    with open(CIFAR, encoding="utf-8") as handle:
        source = handle.read()
    if declare:
        source = source.replace("    (x_train, y_train), (x_test, y_test) =",
                                f"    # tfperf: {declare}\n    (x_train, y_train), (x_test, y_test) =")
    return source


def test_a_main_that_downloads_data_is_refused_naming_the_inputs_to_declare():
    # On a GPU: TFP805 leaves a CNN alone on a CPU or an unknown device
    found = plans("# tfperf: device=gpu cc=8.6\n" + cifar())
    for code in ("TFP701", "TFP805"):  # the map line, and compile(steps_per_execution) with its fit
        plan = found[code]
        assert plan.job is None
        assert "cifar10.load_data()" in plan.problem and "outside the file" in plan.problem
        assert "# tfperf: x_train=" in plan.problem and "y_train" in plan.problem


def test_with_declared_inputs_only_the_pipeline_slice_runs_on_synthetic_data():
    plan = plans(cifar("x_train=uint8[256,32,32,3] y_train=uint8[256,1]"))["TFP701"]
    assert plan.problem is None, plan.problem
    code = plan.job.prelude + "".join(v.source for v in plan.job.variants)
    assert "load_data" not in code and "fit(" not in code and "main" not in code
    assert "x_train = tf.cast(tf.random.uniform([256, 32, 32, 3], maxval=10, dtype=tf.int32, seed=1), tf.uint8)" in plan.job.prelude
    assert "from_tensor_slices((x_train, y_train))" in plan.job.prelude
    assert "options.experimental_optimization.map_parallelization = False" in plan.job.prelude
    original = plan.job.variants[0].source
    assert ".repeat().take(16)" in original and "num_parallel_calls" in plan.job.variants[1].source
    assert plan.elements_per_call == 16 and plan.job.meta["elements_per_call"] == 16


def test_a_file_read_in_the_slice_is_refused():
    source = textwrap.dedent("""
        import tensorflow as tf

        def load():
            with open("data.bin", "rb") as f:
                return f.read()

        @tf.function(experimental_relax_shapes=True)
        def step(x):
            return x * 2

        def main():
            raw = load()
            for _ in range(10):
                step(tf.constant(raw))

        main()
    """)
    found = plans(source, settings=Settings().with_overrides({"extend-select": ["TFP106"]}))  # opt-in
    assert found  # TFP106 (a decorator rewrite): measured through step's call in main's loop
    for plan in found.values():
        assert plan.job is None
        assert "`open('data.bin', 'rb')`, line 5" in plan.problem
        assert "declare `raw`" in plan.problem and "# tfperf: raw=float32[...]" in plan.problem


def test_the_worker_blocks_internet_sockets_before_user_code(tmp_path):
    # A child interpreter: the audit hook cannot be removed once added.
    script = textwrap.dedent("""
        import socket, urllib.request
        from tfperf_lsp.bench.safety import block_network
        block_network()
        socket.socket(socket.AF_UNIX).close()  # pipes and local sockets still work
        for attempt in (lambda: socket.create_connection(("127.0.0.1", 9)),
                        lambda: socket.getaddrinfo("example.com", 80),
                        lambda: urllib.request.urlopen("http://example.com/cifar-10.tar.gz")):
            try:
                attempt()
            except PermissionError as exc:
                assert "network access is blocked" in str(exc)
            else:
                raise SystemExit("not blocked")
        print("blocked")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(HERE))})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "blocked"


@pytest.mark.tf
def test_a_download_in_a_job_fails_closed_and_writes_nothing(tmp_path):
    from tfperf_lsp.bench import Job, Variant, WorkerPool

    home = tmp_path / "home"
    home.mkdir()
    prelude = "import tensorflow as tf\n(x, y), _ = tf.keras.datasets.mnist.load_data()\n"
    job = Job(prelude=prelude, variants=[Variant("a", "def __tfperf_run__():\n    return 1\n"),
                                         Variant("b", "def __tfperf_run__():\n    return 1\n")], budget_s=0.5)
    env = {"HOME": str(home), "KERAS_HOME": str(home / ".keras")}
    with WorkerPool(env=env, keep_spare=False, timeout_s=300) as pool:  # room for a loaded machine
        result = pool.run_job(job)
    assert result.verdict == "error"
    assert "network access is blocked" in result.error.message
    # Keras writes its keras.json config on import; nothing else may appear (no datasets/ files)
    downloaded = [p for p in home.rglob("*") if p.is_file() and p.name != "keras.json"]
    assert not downloaded, downloaded


@pytest.mark.tf
def test_a_pipeline_finding_is_measured_in_elements_per_second():
    from tfperf_lsp.bench import WorkerPool
    from tfperf_lsp.bench.report import hover_lines

    plan = plans(cifar("x_train=uint8[64,32,32,3] y_train=uint8[64,1]").replace("batch(128)", "batch(8)"))["TFP701"]
    assert plan.problem is None, plan.problem
    plan.job.budget_s = 0.5
    with WorkerPool(keep_spare=False, timeout_s=300) as pool:  # room for a loaded machine
        result = pool.run_job(plan.job)
    assert result.verdict != "error", result.summary
    assert result.timing["elements_per_call"] == 16
    lines = hover_lines(result)
    assert any("elements/s" in line and line.startswith("original") for line in lines)
    assert any("elements/s" in line and line.startswith("rewritten") for line in lines)
    assert "each call iterates 16 elements of the dataset (synthetic inputs)" in lines


def realworld_plan(name, code):
    path = os.path.join(HERE, "realworld", name)
    with open(path, encoding="utf-8") as handle:
        return plans(handle.read(), path)[code]


METHODS = [  # file, finding, what is timed, where the instance comes from
    ("pyramid_layer.py", "TFP402", "tfperf_instance__(inputs)", "PyramidScore(bins=[1, 2, 4])"),
    ("subclassed_model.py", "TFP401", "tfperf_instance__(features)", "ItemTower(units=32)"),
    ("train_step_model.py", "TFP402", "tfperf_instance__.train_step(data)", "Classifier(classes=10)"),
]


@pytest.mark.parametrize("name,code,timed,ctor", METHODS)
def test_methods_are_planned_from_an_instance_built_once(name, code, timed, ctor):
    plan = realworld_plan(name, code)
    assert plan.problem is None, plan.problem
    original, rewritten = (v.source for v in plan.job.variants)
    for source in (original, rewritten):
        assert f"tfperf_instance__ = {ctor}" in source
        assert f"tfperf_built__ = {timed}" in source       # built once, before timing
        assert f"    return {timed}" in source              # the method is what is timed
    assert "for " in original.split("tfperf_instance__ =")[0]          # the loop as written
    assert "for " not in rewritten.split("tfperf_instance__ =")[0]     # and rewritten
    assert "main()" not in original + plan.job.prelude


def test_a_method_without_an_instance_names_the_declaration():
    source = textwrap.dedent("""
        import tensorflow as tf

        class Score(tf.keras.layers.Layer):
            def call(self, inputs):
                score = 0.0
                for row in inputs:
                    score += tf.reduce_mean(row)
                return score
    """)
    plan = plans(source)["TFP402"]
    assert plan.job is None
    assert "# tfperf: model=Score(...)" in plan.problem


@pytest.mark.tf
@pytest.mark.parametrize("name,code,timed,ctor", METHODS)
def test_methods_are_benchmarked_in_the_worker(name, code, timed, ctor):
    from tfperf_lsp.bench import WorkerPool

    plan = realworld_plan(name, code)
    plan.job.budget_s = 0.5
    with WorkerPool(keep_spare=False, timeout_s=300) as pool:  # room for a loaded machine
        result = pool.run_job(plan.job)
    assert result.verdict != "error", result.summary
    assert result.outputs_match is True, result.summary
    assert [v.name for v in result.variants] == ["original", "rewritten"]
