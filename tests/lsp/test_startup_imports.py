"""What the server has imported by the time it publishes its first diagnostics.

LibCST (fixes), jedi (cross-file lookups), numpy (benchmark inputs) and TensorFlow (never in
the server) and the benchmark planner are not needed to show the first findings, and each costs start-up time.
"""
import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """\
    import json, sys, tempfile, os
    from tfperf_lsp.lsp.server import create_server

    root = tempfile.mkdtemp()
    path = os.path.join(root, "train.py")
    text = (
        "import tensorflow as tf\\n"
        "from time import time\\n"
        "@tf.function\\n"
        "def step(x, i):\\n"
        "    return x * i\\n"
        "for i in range(10):\\n"
        "    step(tf.ones([2]), i)\\n"
        "    time()\\n"
    )
    open(path, "w").write(text)
    server = create_server()
    server.state.set_roots([root])
    result = server.state.analyze("file://" + path, 1, text)
    print(json.dumps({"codes": [f.code for f in result.analysis.findings], "modules": sorted(sys.modules)}))
    """
)


def test_first_diagnostics_need_no_libcst_jedi_numpy_or_tensorflow():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    assert "TFP101" in report["codes"]  # the analysis really ran
    top_level = {m.split(".")[0] for m in report["modules"]}
    assert not top_level & {"libcst", "jedi", "parso", "numpy", "tensorflow"}
    # The benchmark planner (input inference, rewrites) loads with the first benchmark only.
    assert not {"tfperf_lsp.bench.plans", "tfperf_lsp.bench.inputs"} & set(report["modules"])
