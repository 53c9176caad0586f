"""The pure side of observing (no TensorFlow): culprits, facts at lines, confirm/refute, the
content-keyed store, the command line checks, and that the pytest plugin costs nothing unasked."""
import json
import subprocess
import sys

import pytest

from tfperf_lsp.observe.describe import Serials, culprit_text, describe
from tfperf_lsp.observe.facts import analyse_function, facts_from_run, line_verdicts
from tfperf_lsp.observe.runner import CommandError, ObserveOptions, observe_argv
from tfperf_lsp.observe.store import ObservationStore, content_key

PY = lambda v: {"kind": "py", "type": type(v).__name__, "value": repr(v)}  # noqa: E731
T = lambda *shape: {"kind": "tensor", "type": "EagerTensor", "dtype": "float32", "shape": list(shape)}  # noqa: E731


def record(traces, created=None, user=True):
    return {"key": "/p/a.py:3:f", "name": "f", "file": "/p/a.py", "line": 3, "kind": "function", "user": user,
            "traces": traces, "trace_count": len(traces), "created": created or {}, "tf_count": len(traces)}


def trace(args, site=("/p/a.py", 10), serial=1):
    return {"site": list(site), "serial": serial, "args": args, "t": 0}


def test_python_scalar_culprit_counts_its_values():
    fn = analyse_function(record([trace({"w": T(3), "lr": PY(0.1 / (1 + i))}) for i in range(37)]))
    assert fn["culprit"]["argument"] == "lr"
    assert fn["culprit"]["text"].startswith("lr is a Python float with 37 values")
    assert fn["sites"] == [{"file": "/p/a.py", "line": 10, "traces": 37, "culprit": fn["culprit"]}]


def test_shape_culprit_names_the_dimension():
    fn = analyse_function(record([trace({"x": T(n, 16)}) for n in (32, 32, 4)]))
    assert fn["culprit"]["text"] == "x is a tensor whose shape changes in dimension 0 (2 sizes: 32, 4)"


def test_new_object_each_call_even_when_ids_are_reused():
    serials = Serials()

    class Config:
        pass

    seen = []
    for _ in range(3):
        seen.append(describe(Config(), serials)["serial"])  # each dies at once; ids may repeat
    assert len(set(seen)) == 3
    fn = analyse_function(record([trace({"config": {"kind": "object", "type": "Config", "serial": s}}) for s in seen]))
    assert fn["culprit"]["text"] == "config is a new Config object each call"


def test_new_tf_function_per_call_is_the_culprit_before_the_arguments():
    traces = [trace({"x": T(4)}, serial=s) for s in (1, 2, 3)]
    fn = analyse_function(record(traces, created={"1": ["/p/a.py", 8], "2": ["/p/a.py", 8], "3": ["/p/a.py", 8]}))
    assert fn["culprit"]["kind"] == "function"
    assert "a new tf.function is created for each call (tf.function at line 8)" == fn["culprit"]["text"]


def test_list_culprit():
    text = culprit_text("w", [{"kind": "seq", "type": "list", "len": 2, "items": [PY(1.0), PY(v)]} for v in (1.0, 1.5)])
    assert text == "w is a Python list with 2 different contents"


def run_with(**parts):
    return {"format": 1, "files": {"/p/a.py": "sha"}, "functions": [], "calls": [], "syncs": [], "loops": [],
            "keras": [], **parts}


def test_facts_at_lines_and_verdicts_for_static_hints():
    retraced = record([trace({"lr": PY(v)}, site=("/p/a.py", 10)) for v in (0.1, 0.2)])
    once = {**record([trace({"k": PY(0)}, site=("/p/a.py", 12))]), "key": "/p/a.py:5:g", "name": "g", "line": 5}
    library = {**record([trace({"x": T(1)})] * 2, user=False), "file": "/site-packages/keras/x.py"}
    facts = facts_from_run(run_with(functions=[retraced, once, library],
                                    syncs=[{"site": ["/p/a.py", 20], "method": "numpy", "count": 50},
                                           {"site": ["/p/a.py", 21], "method": "__float__", "count": 1},
                                           {"site": ["/elsewhere.py", 1], "method": "numpy", "count": 99}],
                                    loops=[{"site": ["/p/a.py", 30], "dataset_site": ["/p/a.py", 25], "steps": 10,
                                            "wait_s": 8.0, "total_s": 10.0, "first_wait_s": 0.1}]))
    by_line = {}
    for fact in facts:
        by_line.setdefault(fact["line"], []).append(fact)
    assert all(f["file"] == "/p/a.py" for f in facts)  # nothing about files the run did not hash
    assert by_line[10][0]["short"].startswith("traced 2x: lr is a Python float with 2 values")
    assert by_line[10][0]["diagnostic"] and by_line[10][0]["severity"] == "warning"
    assert by_line[20][0]["diagnostic"] and "host sync 50x here (.numpy())" in by_line[20][0]["message"]
    assert not by_line[21][0]["diagnostic"]  # one sync is not worth a diagnostic
    assert by_line[30][0]["message"].startswith("input-bound: 80% of step time waiting")
    assert "dataset built at line 25" in by_line[30][0]["message"] and by_line[25][0]["kind"] == "stall"
    verdicts = line_verdicts(facts, "/p/a.py")
    assert verdicts[10] == ("confirmed", 2) and verdicts[12] == ("refuted", 1)


def test_store_is_keyed_by_content(tmp_path):
    store = ObservationStore(tmp_path / "obs")
    text = "print('hi')\n"
    facts = [{"file": "/p/a.py", "line": 1, "kind": "sync", "message": "m", "short": "s", "severity": "hint",
              "diagnostic": False}]
    assert store.put_run({"files": {"/p/a.py": content_key(text)}, "status": "finished"}, facts, ["python", "a.py"], "d") == 1
    entry = store.for_text(text)
    assert entry["facts"] == facts and entry["run"] == {"command": ["python", "a.py"], "date": "d", "status": "finished"}
    assert store.for_text(text + "# changed\n") is None
    (tmp_path / "obs" / f"{content_key(text)}.json").write_text("{not json")
    assert store.for_text(text) is None  # corrupt: a miss, not a crash


def test_command_must_be_python():
    assert observe_argv(["python3", "train.py", "--epochs", "1"], ObserveOptions(max_seconds=5, max_steps=3)) == [
        "python3", "-c", "import sys; from tfperf_lsp.observe.bootstrap import main; sys.exit(main())", "--max-seconds", "5", "--max-steps", "3", "--",
        "train.py", "--epochs", "1"]
    with pytest.raises(CommandError, match="pytest --tfperf-observe"):
        observe_argv(["pytest", "tests"], ObserveOptions())
    with pytest.raises(CommandError, match="give the program"):
        observe_argv([], ObserveOptions())


def test_cli_without_a_program_is_a_usage_error():
    done = subprocess.run([sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main([\"observe\"]))"], capture_output=True, text=True)
    assert done.returncode == 2 and "give the program to observe" in done.stderr


def test_plugin_imports_nothing_heavy_when_not_asked():
    code = ("import sys, tfperf_lsp.observe.pytest_plugin as p, tfperf_lsp.observe.cli, tfperf_lsp.lsp.features.observe;"
            "print(json.dumps('tensorflow' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", "import json;" + code], capture_output=True, text=True)
    assert json.loads(done.stdout) is False, done.stderr


def test_shape_branch_fact_is_a_diagnostic_only_when_the_function_retraced():
    run = {"files": {"/p/a.py": "x"}, "functions": [record([trace({"x": T(n)}) for n in (1, 2)])],
           "shape_branches": [{"key": "/p/a.py:3:f", "site": ["/p/a.py", 5], "branch": "if", "traces": 2}]}
    fact = next(f for f in facts_from_run(run) if f["kind"] == "shape-branch")
    assert fact["line"] == 5 and fact["diagnostic"] and fact["message"].startswith("an if on a static shape")
    run["functions"] = [record([trace({"x": T(1)})])]
    run["shape_branches"][0]["traces"] = 1
    fact = next(f for f in facts_from_run(run) if f["kind"] == "shape-branch")
    assert not fact["diagnostic"] and fact["severity"] == "hint"


def test_branch_kind_reads_the_line(tmp_path):
    from tfperf_lsp.observe.sites import branch_kind

    path = tmp_path / "b.py"
    path.write_text("if x.shape[0]:\n    y = 1 if a else 2\nwhile t:\nassert t\nz = t  # if else\nelif q:\n")
    kinds = [branch_kind((str(path), n)) for n in range(1, 7)]
    assert kinds == ["if", "conditional expression", "while", "assert", None, "if"]


def test_libraries_outside_a_site_packages_folder_are_not_user_code(tmp_path, monkeypatch):
    """TensorFlow reached through a symlinked folder on sys.path (a .pth file, as in the VS Code
    e2e) or from a plain folder (PYTHONPATH, pip install --target) is still TensorFlow: a retrace is
    reported at the user's call line, not inside autograph."""
    import types

    from tfperf_lsp.observe import sites

    real_site = tmp_path / "venv" / "lib" / "site-packages"
    (real_site / "tensorflow").mkdir(parents=True)
    (real_site / "keras").mkdir()
    linked = tmp_path / "shared-site"
    linked.mkdir()
    (linked / "tensorflow").symlink_to(real_site / "tensorflow")
    (linked / "keras").symlink_to(real_site / "keras")
    assert sites._classify(str(linked / "tensorflow" / "python" / "autograph" / "impl" / "api.py")) == sites.TF
    assert sites._classify(str(linked / "keras" / "src" / "trainer.py")) == sites.LIB

    plain = tmp_path / "target"
    for name in ("tensorflow", "keras"):
        (plain / name).mkdir(parents=True)
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(__file__=str(plain / name / "__init__.py")))
    assert sites._classify(str(plain / "tensorflow" / "python" / "eager" / "def_function.py")) == sites.TF
    assert sites._classify(str(plain / "keras" / "src" / "trainer.py")) == sites.LIB
    assert sites._classify(str(tmp_path / "project" / "train.py")) == sites.USER
