"""Jupyter notebooks in ``tfperf check``: cells read as one program, IPython masked, locations
per cell, fixes written back into the cells and nothing else."""
import json

import nbformat
import pytest

from tfperf_lsp.cli import main
from tfperf_lsp.model import Edit, Pos, Span
from tfperf_lsp.notebook import build, replace_sources
from tests.rules.helpers import break_fix_building

DEFINE = "import tensorflow as tf\n\n@tf.function(experimental_relax_shapes=True)\ndef f(x, step):\n    print(\"running\", x)\n    return x * tf.cast(step, tf.float32)\n"
LOOP = "for i in range(3):\n    f(tf.ones([2]), i)"


def notebook_json(*cells, indent=1, trailing_newline=True, ensure_ascii=False) -> str:
    """A notebook as another tool might have written it (indentation, escapes, newline vary)."""
    node = {
        "cells": [
            {"cell_type": kind, "metadata": {"tags": ["t"]}, "source": src.splitlines(keepends=True), **(
                {"execution_count": 7, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["héllo\n"]}]}
                if kind == "code" else {})}
            for kind, src in cells
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    text = json.dumps(node, indent=indent, ensure_ascii=ensure_ascii)
    return text + "\n" if trailing_newline else text


@pytest.fixture(autouse=True)
def select_tfp106(tmp_path):
    """TFP106 is opt-in: these tests use its rename as the example of a fix inside a cell."""
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')


@pytest.fixture
def nb(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook_json(("markdown", "# Training"), ("code", "%matplotlib inline\n!pip install tensorflow\n"),
                                  ("code", DEFINE), ("code", LOOP)))
    return path


def test_cells_are_one_program_and_locations_name_the_cell(nb, capsys):
    assert main(["check", "nb.ipynb"]) == 1
    out, _ = capsys.readouterr()
    # f is defined in code cell 2 and called in a loop in code cell 3: found across cells.
    assert out.strip().splitlines() == [
        "nb.ipynb:cell 2:3:14: TFP106 [*] [retrace] `experimental_relax_shapes` is deprecated: use `reduce_retracing`",
        "nb.ipynb:cell 2:5:5: TFP202 [correctness] `print` in `f` runs only while tracing, not on every call: use `tf.print`",
        "nb.ipynb:cell 3:2:21: TFP101 [retrace] `f` is traced again for every value of `i`: pass a tensor (`tf.constant(...)`) instead of a Python number",
    ]


def test_json_has_the_cell_and_positions_inside_it(nb, capsys):
    main(["check", "nb.ipynb", "--format", "json"])
    findings = json.loads(capsys.readouterr().out)
    loop = next(f for f in findings if f["code"] == "TFP101")
    assert loop["cell"] == 3 and loop["location"] == {"row": 2, "column": 21}
    renamed = next(f for f in findings if f["code"] == "TFP106")
    assert renamed["fix"]["edits"][0]["location"]["row"] == 3  # fix edits are cell rows too


def test_magics_are_masked_not_errors():
    cells = [(0, "%matplotlib inline\n!pip install x\nfiles = !ls\nx = %time f()\nlen?\n??len\nimport os"),
             (1, "%%bash\necho $HOME (not python\n"), (2, "for i in range(2):\n    !echo hi\n"),
             (3, "!python train.py \\\n  --flag=1 \\\n  --other\nx = 1\n")]
    notebook = build(cells)
    assert [c.syntax_error for c in notebook.cells] == [None, None, None, None]
    assert notebook.cells[3].masked_lines == {0, 1, 2}  # a shell escape continued with backslashes
    assert notebook.cells[0].masked_lines == {0, 1, 2, 3, 4, 5}
    assert notebook.cells[1].whole_masked
    assert notebook.text.splitlines()[-5] == "    pass  # masked IPython line"  # keeps the block valid


def test_a_broken_cell_is_reported_and_the_others_analysed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(notebook_json(("code", DEFINE), ("code", "def broken(:\n    pass\n"), ("code", LOOP)))
    assert main(["check", "nb.ipynb"]) == 2
    out, err = capsys.readouterr()
    assert "nb.ipynb:cell 2:1:12: syntax error" in err
    assert "nb.ipynb:cell 3:2:21: TFP101" in out


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a valid Jupyter notebook"),
    ('{"cells": [{"cell_type": "code"}], "nbformat": 4, "nbformat_minor": 4, "metadata": {}}', "missing an expected key"),
    ('{"a": 1}', "notebook"),
])
def test_invalid_notebook_is_one_line_and_exit_two(tmp_path, monkeypatch, capsys, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.ipynb").write_text(content)
    assert main(["check", "bad.ipynb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("bad.ipynb: ") and message in err[0]
    assert "Found 0" in err[-1] and len(err) == 2


def test_a_schema_error_outside_the_code_is_read_as_jupyter_reads_it(tmp_path, monkeypatch, capsys):
    """A markdown cell with outputs breaks the schema (nbformat.validate raises) but Jupyter
    opens the notebook: its code cells are checked, and a fix touches only their sources."""
    monkeypatch.chdir(tmp_path)
    node = json.loads(notebook_json(("markdown", "# Training"), ("code", DEFINE), ("code", LOOP)))
    node["cells"][0].update(execution_count=None, outputs=[])
    text = json.dumps(node, indent=1) + "\n"
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(nbformat.reads(text, as_version=4))
    (tmp_path / "nb.ipynb").write_text(text)
    assert main(["check", "nb.ipynb"]) == 1
    assert "nb.ipynb:cell 2:2:21: TFP101" in capsys.readouterr().out
    main(["check", "nb.ipynb", "--fix"])
    assert (tmp_path / "nb.ipynb").read_text() == text.replace("experimental_relax_shapes=True", "reduce_retracing=True")


@pytest.mark.parametrize("indent, trailing, ensure_ascii", [(1, True, False), (2, False, True), (4, True, True)])
def test_fix_changes_only_the_cell_source_byte_for_byte(tmp_path, monkeypatch, indent, trailing, ensure_ascii):
    monkeypatch.chdir(tmp_path)
    before = notebook_json(("code", DEFINE), ("code", LOOP), indent=indent, trailing_newline=trailing, ensure_ascii=ensure_ascii)
    (tmp_path / "nb.ipynb").write_bytes(before.encode())
    main(["check", "nb.ipynb", "--fix"])
    after = (tmp_path / "nb.ipynb").read_bytes().decode()
    assert after == before.replace("experimental_relax_shapes=True", "reduce_retracing=True")
    nbformat.validate(nbformat.reads(after, as_version=4))


def test_diff_shows_cells_and_writes_nothing(nb, capsys):
    before = nb.read_bytes()
    assert main(["check", "nb.ipynb", "--diff"]) == 1
    out = capsys.readouterr().out
    assert "--- nb.ipynb:cell 2" in out and "+@tf.function(reduce_retracing=True)" in out
    assert nb.read_bytes() == before


def test_a_fix_spanning_cells_is_not_applied():
    notebook = build([(0, "a = 1\n"), (3, "b = 2\n")])
    inside = Edit(Span(Pos(1, 0), Pos(1, 1)), "c")
    across = Edit(Span(Pos(0, 2), Pos(1, 1)), "")
    assert notebook.edits_by_cell([inside]) == {2: [Edit(Span(Pos(0, 0), Pos(0, 1)), "c")]}
    assert notebook.edits_by_cell([inside, across]) is None


def test_replace_sources_keeps_a_string_source_a_string():
    text = '{"cells": [{"cell_type": "code", "source": "x = 1", "outputs": [], "metadata": {}, "execution_count": null}]}'
    assert replace_sources(text, {0: "x = 2\ny"}) == text.replace('"x = 1"', '"x = 2\\ny"')


def test_directories_include_notebooks_and_the_include_setting(nb, capsys, tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert main(["check", "."]) == 1
    assert "nb.ipynb:cell 3" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\ninclude = [".py"]\nextend-select = ["TFP106"]\n')
    assert main(["check", "."]) == 0
    assert "nb.ipynb" not in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["github", "gitlab", "sarif", "junit"])
def test_ci_formats_give_the_row_inside_the_cell_and_name_it(nb, capsys, fmt):
    main(["check", "nb.ipynb", "--output-format", fmt])
    out = capsys.readouterr().out
    assert "cell 3: `f` is traced again" in out
    row = {"github": "line=2,", "gitlab": '"begin": 2', "sarif": '"startLine": 2', "junit": 'line="2"'}[fmt]
    assert row in out


def test_a_one_percent_magic_over_shell_or_sql_lines_is_its_input_not_a_syntax_error():
    """Datalab notebooks (training-data-analyst) write `%bq query` / `%bash` over SQL and shell
    lines: those cells are masked silently; a broken Python cell after a line magic still is an error."""
    cells = [(0, "%bq query -n taxiquery\nSELECT daynumber, COUNT(1) AS n FROM trips\nGROUP BY daynumber"),
             (1, "%bash\ngcloud config set project $PROJECT\n"),
             (2, "%matplotlib inline\ndef broken(:\n    pass\n"),
             (3, "import os\nx = 1\n")]
    notebook = build(cells)
    assert [c.whole_masked for c in notebook.cells] == [True, True, True, False]
    assert [c.syntax_error is not None for c in notebook.cells] == [False, False, True, False]


def test_automagic_shell_lines_are_masked_and_python_with_those_names_is_not():
    cells = [(0, "ls ./taxifare/trainer/\ncd ~/data\npip install tensorflow==2.16\nimport os\n"),
             (1, "ls = [1, 2]\ncat = len(ls)\nprint(cat)\n")]
    notebook = build(cells)
    assert [c.syntax_error for c in notebook.cells] == [None, None]
    assert notebook.cells[0].masked_lines == {0, 1, 2}
    assert notebook.cells[1].masked_lines == set()


def test_an_operator_that_starts_a_continued_line_is_python_not_a_magic():
    # Black puts the operator first when it breaks a long expression: ``% name`` and ``!= "done"``
    # inside brackets are Python (a cell of SageMaker's examples was reported as a syntax error).
    cells = [(0, 'print(\n    "Dropping %s keyspace."\n    % keyspaces_schema\n)\n'),
             (1, 'while (\n    client.status(arn)["Status"]\n    != "Completed"\n):\n    time.sleep(10)\n'),
             (2, 'text = """\n!not a shell escape\n%not a magic\n"""\n%matplotlib inline\n!ls\n'),
             (3, 'total = 1 + \\\n    2\n%time f()\n')]
    notebook = build(cells)
    assert [c.syntax_error for c in notebook.cells] == [None, None, None, None]
    assert [c.masked_lines for c in notebook.cells] == [set(), set(), {4, 5}, {2}]
    assert "% keyspaces_schema" in notebook.text and '!= "Completed"' in notebook.text


def test_a_statement_continued_over_lines_is_not_taken_for_an_automagic():
    cells = [(0, "history = model.fit(x,\n    epochs=2)\ncat = (1,\n  2)\n")]
    notebook = build(cells)
    assert notebook.cells[0].masked_lines == set() and notebook.cells[0].syntax_error is None


def test_a_shell_command_inside_a_string_continued_with_backslashes_stays_a_string():
    """kubeflow samples: `command="mkdir -p /x && \\` then `  cd /x && \\` lines, inside one string."""
    cells = [(0, 'op = run(\n    command="mkdir -p /data && \\\n  cd ~/data && \\\n  curl -O x")\n')]
    notebook = build(cells)
    assert notebook.cells[0].masked_lines == set() and notebook.cells[0].syntax_error is None


def test_duplicate_cell_ids_are_read_without_a_warning_or_a_log_line(tmp_path, monkeypatch, capsys, caplog):
    """Copied cells keep their ids; nbformat would warn "Non-unique cell id" and repair its copy."""
    import warnings

    monkeypatch.chdir(tmp_path)
    node = json.loads(notebook_json(("code", DEFINE), ("code", LOOP)))
    node["nbformat_minor"] = 5
    for cell in node["cells"]:
        cell["id"] = "same"
    text = json.dumps(node, indent=1)
    (tmp_path / "nb.ipynb").write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main(["check", "nb.ipynb"])
    out, err = capsys.readouterr()
    assert "nb.ipynb:cell 2:2:21: TFP101" in out
    assert not caught and "cell id" not in err and not caplog.records
    assert (tmp_path / "nb.ipynb").read_text() == text


def test_a_message_that_names_a_line_names_it_in_its_cell(tmp_path, monkeypatch, capsys):
    # TFP201 names the line of the later assignment: a line of the notebook's cells, not of the
    # module tfperf builds from them (which the user never sees).
    monkeypatch.chdir(tmp_path)
    define = "import tensorflow as tf\n\nscale = 2.0\n\n@tf.function\ndef apply(x):\n    return x * scale\n"
    same_cell = "print(apply(tf.ones([2])))\nscale = 3.0\nprint(apply(tf.ones([2])))\n"
    (tmp_path / "nb.ipynb").write_text(notebook_json(("markdown", "# Scale"), ("code", define), ("code", same_cell)))
    main(["check", "nb.ipynb", "--select", "TFP201", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["cell"] == 1 and "assigned on line 2 of cell 2 " in finding["message"]

    (tmp_path / "one.ipynb").write_text(notebook_json(("code", define + same_cell)))
    main(["check", "one.ipynb", "--select", "TFP201", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)
    assert "assigned on line 9 is ignored" in finding["message"]  # in its own cell: the line alone


def test_a_plain_file_keeps_its_line_numbers(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scale.py").write_text(
        "import tensorflow as tf\n\nscale = 2.0\n\n@tf.function\ndef apply(x):\n    return x * scale\n\n"
        "print(apply(tf.ones([2])))\nscale = 3.0\nprint(apply(tf.ones([2])))\n")
    main(["check", "scale.py", "--select", "TFP201", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)
    assert "assigned on line 10 is ignored" in finding["message"]


@pytest.mark.parametrize("version, findings", [("1.x", 0), ("2.x", 1)])
def test_a_colab_notebook_that_selects_tensorflow_1_gets_no_eager_advice(tmp_path, monkeypatch, capsys, version, findings):
    # ``%tensorflow_version 1.x`` runs the cells on TensorFlow 1, in graph mode: calling a model
    # directly there gives a symbolic tensor, so TFP801's advice would break the notebook.
    monkeypatch.chdir(tmp_path)
    model = ("import numpy as np\nimport tensorflow as tf\n\n"
             "model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])\n")
    loop = "for row in np.zeros((50, 4)):\n    model.predict(row[None, :])\n"
    (tmp_path / "nb.ipynb").write_text(notebook_json(("code", f"%tensorflow_version {version}\n"), ("code", model), ("code", loop)))
    main(["check", "nb.ipynb", "--select", "TFP801", "--format", "json"])
    assert len(json.loads(capsys.readouterr().out)) == findings


def test_a_cell_pasted_with_its_indent_runs_dedented_as_ipython_runs_it(tmp_path, monkeypatch, capsys):
    """IPython removes a cell's leading indent (``leading_indent``): such a cell is analysed, not a
    syntax error, and its findings point at the columns the user sees; no fix is offered there."""
    monkeypatch.chdir(tmp_path)
    indented = "  for i in range(3):\n      f(tf.ones([2]), i)\n"
    (tmp_path / "nb.ipynb").write_text(notebook_json(("code", DEFINE), ("code", indented)))
    main(["check", "nb.ipynb", "--format", "json"])
    captured = capsys.readouterr()
    assert "syntax error" not in captured.err
    findings = json.loads(captured.out)
    retrace = next(f for f in findings if f["code"] == "TFP101")
    assert retrace["cell"] == 2 and retrace["location"] == {"row": 2, "column": 23}  # 21 plus the 2-space indent
    notebook = build([(0, DEFINE), (1, indented)])
    assert notebook.cells[1].indent == "  " and notebook.cells[1].syntax_error is None
    assert notebook.cell_span(Span(Pos(notebook.cells[1].start, 0), Pos(notebook.cells[1].start, 3))) is None


def test_a_syntax_error_in_a_dedented_cell_names_the_users_column():
    notebook = build([(0, "  x = (1,\n  y = 2\n")])
    cell = notebook.cells[0]
    assert cell.whole_masked and cell.syntax_error is not None
    assert cell.syntax_error[:2] == (1, 7)  # the "(" in "  x = (1,", as the user sees it


STEP_CELLS = (
    "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\noptimizer = tf.keras.optimizers.SGD()\n",
    "def train_step(x, y):\n    with tf.GradientTape() as tape:\n        loss = tf.reduce_mean(tf.square(model(x) - y))\n"
    "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
    "    return loss\n",
    "for step in range(1000):\n    train_step(tf.ones([4, 2]), tf.ones([4, 1]))\n",
)


def test_notebook_fixes_apply_only_to_findings_that_were_shown(tmp_path, monkeypatch, capsys):
    """The notebook's fix loop is the .py one: compiling the eager step (TFP301) makes it a jit
    candidate (TFP501), which is reported next time, never applied unasked in the same run (a
    judge's chained `jit_compile=True` crashed on nce_loss's sampler, which XLA cannot compile)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "steps.ipynb"
    path.write_text(notebook_json(*(("code", cell) for cell in STEP_CELLS)))
    main(["check", "--fix", "--unsafe-fixes", "--exit-zero", "steps.ipynb"])
    sources = ["".join(c["source"]) for c in nbformat.reads(path.read_text(), as_version=4).cells]
    assert sources[1].startswith("@tf.function\ndef train_step")
    assert "jit_compile" not in "".join(sources)
    assert "TFP501" in capsys.readouterr().out  # shown, as a new finding


def test_a_notebook_fix_left_out_is_reported_in_its_cell(tmp_path, monkeypatch, capsys):
    """A fix that cannot be built is withheld with the reason, at the row inside its cell."""
    break_fix_building(monkeypatch, "TFP301")
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "steps.ipynb"
    path.write_text(notebook_json(*(("code", cell) for cell in STEP_CELLS)))
    before = path.read_text()
    main(["check", "--fix", "--unsafe-fixes", "--exit-zero", "steps.ipynb"])
    err = capsys.readouterr().err
    assert "steps.ipynb:cell 2:1:1: TFP301 fix not applied: its fix could not be built for this file" in err
    assert path.read_text() == before
