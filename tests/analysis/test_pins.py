"""The TensorFlow a project pins (analysis/pins.py), and the rules whose advice holds only from a
later release staying silent there (Rule.since_tf, engine._cold)."""
import json

import pytest

from tfperf_lsp.analysis import pins
from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.checker import check_file

LEGACY_KERAS = (
    "import tensorflow as tf\n"
    "from tensorflow.python.keras.layers import Dense\n\n"
    "model = tf.keras.Sequential([Dense(2)])\n"
)


@pytest.mark.parametrize("requirement, newest", [
    ("tensorflow==2.3.1", (2, 3)),
    ("tensorflow-gpu==2.0.0-alpha0", (2, 0)),
    ("tensorflow<2.6", (2, 5)),
    ("tensorflow>=2.4,<2.6", (2, 5)),
    ("tensorflow<2.6.1", (2, 6)),
    ("tensorflow~=2.4.0", (2, 4)),
    ("tensorflow=2.3", (2, 3)),  # conda
    ("tensorflow[and-cuda]==2.15.0", (2, 15)),
    ("tensorflow~=2.4", None),  # any 2.x from 2.4 on
    ("tensorflow>=2.4", None),
    ("tensorflow", None),
    ("tensorflow==2.*", None),
    ("tensorflow<3", None),
    ("tensorflow-addons==0.11.2", None),  # another distribution
    ("tensorflow_datasets==4.0", None),
])
def test_the_newest_release_a_requirement_allows(tmp_path, requirement, newest):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(f"numpy\n{requirement}  # pinned\n")
    assert pins.newest_pinned("", str(tmp_path / "train.py")) == newest


def test_the_nearest_folder_naming_tensorflow_decides_up_to_the_repository_root(tmp_path):
    outer = tmp_path / "outer"
    repo = outer / "repo"
    script = repo / "src" / "models" / "train.py"
    script.parent.mkdir(parents=True)
    (outer / "requirements.txt").write_text("tensorflow==2.2.0\n")  # above the repository: not read
    (repo / ".git").mkdir()
    assert pins.newest_pinned("", str(script)) is None
    (repo / "environment.yml").write_text("dependencies:\n  - python=3.7\n  - pip:\n    - tensorflow==2.3.1\n")
    assert pins.newest_pinned("", str(script)) == (2, 3)
    (repo / "src" / "requirements.txt").write_text("pillow\n")  # nearer, but does not name TensorFlow
    assert pins.newest_pinned("", str(script)) == (2, 3)
    (repo / "src" / "setup.py").write_text("setup(install_requires=['tensorflow>=2.8'])\n")
    assert pins.newest_pinned("", str(script)) is None  # the nearer folder says: not pinned


def test_the_loosest_of_several_requirements_wins(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("tensorflow-gpu==2.3.0\n")
    (tmp_path / "requirements-cpu.txt").write_text("tensorflow-cpu==2.4.1\n")
    assert pins.newest_pinned("", str(tmp_path / "a.py")) == (2, 4)
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    tensorflow>=2.3\n")
    assert pins.newest_pinned("", str(tmp_path / "a.py")) is None


def test_a_notebooks_own_install_line_comes_first(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("tensorflow==2.15.0\n")
    masked = "import tensorflow as tf\npass  # masked IPython line: pip install -q tensorflow-gpu==2.0.0-alpha0\n"
    assert pins.newest_pinned(masked, str(tmp_path / "nb.ipynb")) == (2, 0)
    unpinned = "pass  # masked IPython line: pip install --upgrade tensorflow\n"
    assert pins.newest_pinned(unpinned, str(tmp_path / "nb.ipynb")) is None


def _codes(tmp_path, name, text, options=None):
    path = tmp_path / name
    path.write_text(text)
    result = check_file(str(path), text, options or {}, WorkspaceIndex([str(tmp_path)]))
    return [f.code for f in result.findings]


@pytest.mark.parametrize("requirement, reported", [
    ("tensorflow==2.3.1", False),  # where tensorflow.python.keras was tf.keras
    ("tensorflow-gpu>=2.0,<2.6", False),
    ("tensorflow==2.6.0", True),
    ("tensorflow>=2.3", True),
    (None, True),
])
def test_legacy_keras_import_is_silent_in_a_project_pinned_before_keras_left_tensorflow(tmp_path, requirement, reported):
    (tmp_path / ".git").mkdir()
    if requirement:
        (tmp_path / "requirements.txt").write_text(requirement + "\n")
    assert ("TFP804" in _codes(tmp_path, "model.py", LEGACY_KERAS)) is reported


def test_a_notebook_that_installs_an_old_tensorflow_gets_no_advice_for_a_later_one(tmp_path):
    (tmp_path / ".git").mkdir()

    def notebook(install: str) -> str:
        cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
                 for source in (install, LEGACY_KERAS)]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4})

    assert "TFP804" not in _codes(tmp_path, "old.ipynb", notebook("!pip install tensorflow-gpu==2.0.0-alpha0\n"))
    assert "TFP804" in _codes(tmp_path, "new.ipynb", notebook("!pip install tensorflow\n"))


def test_a_rename_to_an_argument_of_a_later_release_is_not_offered_on_an_older_pin(tmp_path):
    (tmp_path / ".git").mkdir()
    text = ("import tensorflow as tf\n\n@tf.function(experimental_relax_shapes=True)\ndef f(x):\n    return x\n\n"
            "@tf.function(experimental_compile=True)\ndef g(x):\n    return x\n")
    options = {"extend-select": ["TFP106"]}
    (tmp_path / "requirements.txt").write_text("tensorflow==2.8.0\n")  # reduce_retracing came in 2.9
    assert sorted(_codes(tmp_path, "a.py", text, options)) == ["TFP505"]
    (tmp_path / "requirements.txt").write_text("tensorflow==2.4.0\n")  # jit_compile came in 2.5
    assert _codes(tmp_path, "b.py", text, options) == []
    (tmp_path / "requirements.txt").write_text("tensorflow==2.9.0\n")
    assert sorted(_codes(tmp_path, "c.py", text, options)) == ["TFP106", "TFP505"]


def test_the_docs_say_where_a_rule_stays_silent_for_its_release():
    from tfperf_lsp.rules import rule_by_code

    docs = rule_by_code("TFP804").markdown()
    assert "pins TensorFlow older than 2.6" in docs and "!pip install tensorflow==" in docs
    assert "pins TensorFlow" not in rule_by_code("TFP101").markdown()


@pytest.mark.parametrize("requirement, reported", [
    ("tensorflow==2.3", False),  # evopose2d: on 2.1-2.3 the experimental API is the only one
    ("tensorflow==2.4.0", True),  # set_global_policy exists
    (None, True),
])
def test_the_experimental_mixed_precision_api_is_right_on_a_project_pinned_before_2_4(tmp_path, requirement, reported):
    (tmp_path / ".git").mkdir()
    if requirement:
        (tmp_path / "requirements.txt").write_text(requirement + "\n")
    text = ("import tensorflow as tf\nfrom tensorflow.keras.mixed_precision import experimental as mixed_precision\n\n"
            "policy = mixed_precision.Policy('mixed_float16')\nmixed_precision.set_policy(policy)\n")
    assert ("TFP606" in _codes(tmp_path, "train.py", text)) is reported
