"""tfperf observe on real programs (TensorFlow): trace counts equal TensorFlow's own counter, the
culprit is the right argument, syncs and stalls are at the right lines, limits hold."""
import json
import os
import subprocess
import sys
import threading

import pytest

from tfperf_lsp.observe.facts import facts_from_run, report_json
from tfperf_lsp.observe.runner import ObserveOptions, run_observed

pytestmark = [pytest.mark.tf, pytest.mark.slow]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "observe", "data")
PITFALLS = os.path.join(ROOT, "examples", "retrace_pitfalls.py")

# function -> (traces printed by the example, culprit argument; None = the tf.function itself)
EXPECTED = {
    "decayed_update": (8, "lr"), "warmup_scale": (6, "step"), "forward": (1, None),
    "split_heads": (3, "num_heads"), "deep_block": (3, "depth"), "sequence_energy": (4, "seq"),
    "sequence_energy_any_length": (1, None), "batch_loss": (2, "xb"), "add_noise": (5, "config"),
    "weighted_loss": (4, "class_weights"), "Standardizer.__call__": (5, "self"), "running_max": (2, "x"),
    "cumulative_decay": (2, "n"), "cumulative_decay_loop": (1, None),
    "normalize": (7, "function"), "mse.<locals>._mse": (6, "function"),
}


def observe(path, **options):
    outcome = run_observed([sys.executable, path], ObserveOptions(**options))
    assert outcome.run is not None, outcome.problem
    return outcome


def facts_at(run, path):
    return {(f["line"], f["kind"]): f for f in facts_from_run(run) if f["file"] == path}


def line_of(path, text):
    with open(path, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_retrace_pitfalls_counts_match_tensorflow_and_culprits_are_right():
    outcome = observe(PITFALLS, max_seconds=300)
    assert outcome.run["status"] == "finished"
    report = report_json(outcome.run, outcome.command, outcome.date)
    functions = {f["name"]: f for f in report["functions"]}
    assert set(EXPECTED) <= set(functions)
    for name, (traces, culprit) in EXPECTED.items():
        fn = functions[name]
        assert fn["traces"] == traces == fn["tf_count"], name
        if culprit == "function":
            assert fn["culprit"]["kind"] == "function", name
        elif culprit is not None:
            assert fn["culprit"]["argument"] == culprit, (name, fn["culprit"])
    assert "lr is a Python float with 8 values" in functions["decayed_update"]["culprit"]["text"]
    assert "shape changes in dimension 0" in functions["sequence_energy"]["culprit"]["text"]
    assert functions["add_noise"]["culprit"]["text"] == "config is a new AugmentConfig object each call"
    facts = facts_at(outcome.run, PITFALLS)
    call = line_of(PITFALLS, "w = decayed_update(w, grad, lr)")
    assert facts[(call, "retrace")]["short"].startswith("traced 8x: lr is a Python float with 8 values")
    assert facts[(line_of(PITFALLS, "normalize_fn = tf.function(normalize)"), "retrace")]["diagnostic"]


def test_keras_fit_host_sync_each_step_and_max_steps():
    path = os.path.join(DATA, "keras_sync.py")
    outcome = observe(path, max_seconds=300, max_steps=12)
    facts = facts_at(outcome.run, path)
    sync = facts[(line_of(path, "iterations.numpy()"), "sync")]
    assert sync["count"] == 12 and sync["diagnostic"]
    fit = facts[(line_of(path, "model.fit("), "keras")]
    assert "first step" in fit["message"] and "x 11" in fit["message"] and "stopped at --max-steps" in fit["message"]
    # Keras' own functions are reported at the user's fit line.
    traced = facts[(line_of(path, "model.fit("), "trace")]
    assert traced["function"].startswith("Keras ")


def test_input_bound_loop_is_reported_at_the_loop_and_the_dataset():
    path = os.path.join(DATA, "input_bound.py")
    outcome = observe(path, max_seconds=300)
    facts = facts_at(outcome.run, path)
    loop = facts[(line_of(path, "for element in dataset"), "stall")]
    assert loop["message"].startswith("input-bound") and loop["diagnostic"]
    assert facts[(line_of(path, "dataset = tf.data"), "stall")]["diagnostic"]
    # The Dataset.map function is recorded as a trace too.
    assert any(f["name"] == "parse" for f in outcome.run["functions"])


def test_max_seconds_stops_the_program_keeps_the_report_and_leaves_no_process():
    path = os.path.join(DATA, "sleeper.py")
    lines = []
    outcome = run_observed([sys.executable, path], ObserveOptions(max_seconds=20),
                           on_output=lines.append)
    assert outcome.run["status"] == "max-seconds"
    assert any(f["name"] == "f" and f["trace_count"] == 1 for f in outcome.run["functions"])
    child = int(b"".join(lines).split()[1])
    assert not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z"


def test_pytest_plugin_on_a_small_project(tmp_path):
    project = os.path.join(DATA, "sample_project")
    out = tmp_path / "report.json"
    env = {**os.environ, "TFPERF_OBSERVE_DIR": str(tmp_path / "store")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tfperf-observe",
                           f"--tfperf-observe-json={out}"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=1200)  # a hang guard
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tfperf observe" in done.stdout and "scale: traced 4x" in done.stdout
    report = json.loads(out.read_text())
    scale = next(f for f in report["functions"] if f["name"] == "scale")
    assert scale["traces"] == scale["tf_count"] == 4 and scale["culprit"]["argument"] == "factor"
    assert [s["line"] for s in scale["sites"]] == [line_of(os.path.join(project, "model.py"), "scale(out,")]
    assert len(list((tmp_path / "store").glob("*.json"))) == 1  # model.py, by content


def test_cancel_stops_the_run_keeps_the_report_and_leaves_no_process():
    path = os.path.join(DATA, "sleeper.py")
    cancel, lines = threading.Event(), []

    def output(chunk):
        lines.append(chunk)
        if b"child" in chunk:
            cancel.set()

    outcome = run_observed([sys.executable, path], ObserveOptions(max_seconds=300), on_output=output, cancel=cancel)
    assert outcome.problem == "cancelled" and outcome.run["status"] == "cancelled"
    child = int(b"".join(lines).split()[1])
    assert not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z"


@pytest.mark.parametrize("pipeline", ["slow", "fast"])
def test_input_stalls_inside_keras_fit_are_reported_at_fit_and_the_dataset(pipeline):
    path = os.path.join(DATA, "fit_input.py")
    outcome = run_observed([sys.executable, path, pipeline], ObserveOptions(max_seconds=300))
    assert outcome.run is not None and outcome.run["status"] == "finished", outcome.problem
    facts = facts_at(outcome.run, path)
    fit = facts[(line_of(path, f"model.fit({pipeline},"), "stall")]
    built = line_of(path, f"{pipeline} = tf.data")
    if pipeline == "slow":
        assert fit["message"].startswith("input-bound: Keras fit") and fit["diagnostic"] and fit["fraction"] > 0.5
        assert facts[(built, "stall")]["diagnostic"]
    else:
        assert fit["message"].startswith("input: Keras fit") and not fit["diagnostic"] and fit["fraction"] < 0.3
        assert (built, "stall") not in facts
    # Taking the element in Python does not add traces: Keras' step is traced once, for the
    # dataset's element spec (150 rows: the last batch of 6 reuses it).
    step = next(f for f in outcome.run["functions"] if f["name"].endswith("one_step_on_data"))
    assert step["trace_count"] == step["tf_count"] == 1


def test_tensor_driven_python_branches_are_reported_at_their_lines():
    path = os.path.join(DATA, "branches.py")
    outcome = observe(path, max_seconds=300)
    assert outcome.run["status"] == "finished"
    facts = facts_at(outcome.run, path)
    # Eager: an if/while on a tensor's value is a host sync each time, named as a branch.
    for text in ("if tf.reduce_sum(x) > 2:", "while total > 100:"):
        sync = facts[(line_of(path, text), "sync")]
        assert sync["count"] == 6 and sync["diagnostic"] and "Python if/while/assert on a tensor's value" in sync["message"]
    assert "(bool(tensor) / if tensor)" in facts[(line_of(path, "check = bool("), "sync")]["message"]
    # A shape comparison in eager code syncs nothing and is not reported.
    assert not [k for k in facts if k[0] == line_of(path, "shape_only =")]
    # Traced: a branch on a static shape, through autograph (if) and without it (x if ... else).
    for text, name in (("if x.shape[0] % 2:", "pad_to_even"), ("return x * 2 if x.shape[0] > 3", "double_if_long")):
        branch = facts[(line_of(path, text), "shape-branch")]
        assert branch["function"] == name and branch["traces"] == 6 and branch["diagnostic"], branch
        assert "tf.shape(x)" in branch["message"]
    functions = {f["name"]: f for f in outcome.run["functions"]}
    assert functions["pad_to_even"]["trace_count"] == functions["pad_to_even"]["tf_count"] == 6
    # Shape reads on lines that are not branches are not kept.
    assert all(b["site"][1] in (line_of(path, "if x.shape[0] % 2:"), line_of(path, "return x * 2 if"))
               for b in outcome.run["shape_branches"])
