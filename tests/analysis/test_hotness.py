"""The hot-code model: tests, builders and run-once code are cold; loops and steps are hot."""
import ast
import textwrap

import pytest

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.hotness import DECODED_TOKENS, HotCode, is_test_path, stops_at_end_token
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze
from tfperf_lsp.rules import rule_by_code

# A small Keras model trained with fit(): TFP805 fires on it outside tests.
SMALL_FIT = rule_by_code("TFP805").invalid[0].source


def hot(code: str, path: str | None = None) -> HotCode:
    source = SourceText(textwrap.dedent(code), path)
    return HotCode(ModuleFacts(ast.parse(source.text), source), path)


@pytest.mark.parametrize("path", [
    "pkg/tests/optimizer.py", "layers/dense_test.py", "test_train.py", "conftest.py",
    "tf_agents/train/utils/test_utils.py", "a/b/testing/fixtures.py", "model_tests.py",
])
def test_test_files_by_name_or_folder(path):
    assert is_test_path(path)


@pytest.mark.parametrize("path", ["train.py", "latest_utils.py", "contest.py", "src/attestation.py", "test.py"])
def test_ordinary_files_are_not_tests(path):
    assert not is_test_path(path)


def test_testcase_classes_and_pytest_functions_are_test_code():
    model = hot(
        """
        import pytest
        import tensorflow as tf

        def helper():
            return 1

        class DenseTest(tf.test.TestCase):
            def test_fit(self):
                pass

        def test_loop():
            pass
        """
    )
    lines = model.test_lines
    assert len(lines) == 2
    assert not model.in_test_line(4)  # helper
    assert model.in_test_line(8) and model.in_test_line(12)


def test_performance_rules_are_silent_in_tests_by_default():
    assert [f.code for f in analyze(SMALL_FIT, "train.py").findings] == ["TFP805"]
    assert analyze(SMALL_FIT, "tests/train_test.py").findings == []
    # ... and come back with the setting
    settings = Settings().with_overrides({"lint-tests": True})
    assert [f.code for f in analyze(SMALL_FIT, "tests/train_test.py", settings).findings] == ["TFP805"]


def test_correctness_rules_are_silent_in_tests_too_unless_asked():
    # A passing test shows its code does what its author meant: on real code every correctness
    # finding judged in test code was wrong (seeded NumPy constants traced on purpose).
    code = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function
        def f(x):
            print("running", x)
            return x
        """
    )
    assert [f.code for f in analyze(code, "train.py").findings] == ["TFP202"]
    assert analyze(code, "tests/f_test.py").findings == []
    settings = Settings().with_overrides({"lint-tests": True})
    assert [f.code for f in analyze(code, "tests/f_test.py", settings).findings] == ["TFP202"]


def test_tf1_graph_code_gets_no_eager_advice():
    code = textwrap.dedent(
        """\
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()

        def costly(x):
            for _ in range(10):
                x = tf.tanh(tf.matmul(x, x)) + tf.sin(x)
            return x

        for step in range(100):
            y = costly(tf.ones([4, 4]))
        """
    )
    assert analyze(code, "model.py").findings == []
    assert [f.code for f in analyze(code.replace("tf.disable_v2_behavior()\n", ""), "model.py").findings] == ["TFP303"]


@pytest.mark.parametrize("code, tf1", [
    ("import tensorflow.contrib.slim as slim\n", True),
    ("from keras.engine.topology import Input\nfrom keras.layers import Input\n", True),  # re-bound later: still imported
    ("try:\n    from tensorflow.contrib.compiler import xla\nexcept ImportError:\n    xla = None\n", False),  # runs on both
    ("if tf.__version__ < '2':\n    import tensorflow.contrib\n", False),
    ("from keras.engine import training\n", False),
])
def test_imports_only_tensorflow_1_had_mark_code_written_for_it(code, tf1):
    assert hot("import tensorflow as tf\n" + code).tf1_only is tf1


@pytest.mark.parametrize("comment, shown", [
    ("# WARNING: a trace happens for any new value!", True),
    ("# this retraces on purpose", True),
    ("# print the stack trace if it fails", False),
    ("# see the traceback below", False),
])
def test_a_comment_that_speaks_of_tracing_marks_a_lesson(comment, shown):
    code = f"import tensorflow as tf\n\n{comment}\nfor i in range(1000):\n    square(i)\n"
    assert hot(code).shows_tracing_at_line(4) is shown


def test_builders_and_one_time_methods_are_cold():
    model = hot(
        """
        import tensorflow as tf

        def build(units):
            inputs = tf.keras.Input(shape=(4,))
            x = tf.keras.layers.Dense(units)(inputs)
            return tf.keras.Model(inputs, x)

        class Pool(tf.keras.layers.Layer):
            def compute_output_shape(self, shape):
                return [s * 2 for s in shape]

            def call(self, x):
                return x * 2
        """
    )
    facts = model.facts
    build, compute, call = facts.functions
    assert "functional-model builder" in model.why_cold(build.body[0])
    assert "runs once" in model.why_cold(compute.body[0])
    assert model.why_cold(call.body[0]) is None


def test_loops_steps_and_functions_called_from_loops_are_hot():
    model = hot(
        """
        import tensorflow as tf

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(x)
            opt.apply_gradients(zip(tape.gradient(loss, [x]), [x]))

        def helper(x):
            return x * 2

        def once(x):
            return x + 1

        for i in range(10):
            helper(i)
        once(1)
        """
    )
    step, helper, once = model.facts.functions
    assert model.is_hot(step.body[0])
    assert model.is_hot(helper.body[0])
    assert not model.is_hot(once.body[0])


def test_a_project_that_lives_in_a_folder_named_test_is_not_test_code(tmp_path):
    project = tmp_path / "test" / "myproject"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    assert not is_test_path(str(project / "train.py"))
    assert is_test_path(str(project / "tests" / "helpers.py"))


@pytest.mark.parametrize("test, stops", [
    ("targ_lang.index_word[predicted_id] == '<end>'", True),
    ('sampled_token == "[end]"', True),
    ("word == 'endseq'", True),
    ("next_id == tokenizer.eos_token_id", True),
    ("predicted_id == end_token", True),
    ("step == end_step", False),  # a training loop's last step, not a token
    ("done", False),
])
def test_a_decoding_loop_stops_at_its_end_token(test, stops):
    loop = ast.parse(f"for t in range(max_length):\n    x = step(x)\n    if {test}:\n        break\n").body[0]
    assert stops_at_end_token(loop) is stops


def test_a_decoding_loop_with_a_bound_from_the_data_counts_as_a_long_sentence():
    code = textwrap.dedent("""
        def evaluate(sentence):
            for t in range(max_length_targ):
                predicted = decoder(x)
                if lang.index_word[predicted] == '<end>':
                    return
        evaluate('a')
        evaluate('b')
    """)
    tree = ast.parse(code)
    facts = ModuleFacts(tree, SourceText(code))
    call = next(c for c in facts.calls if getattr(c.func, "id", "") == "decoder")
    assert HotCode(facts, None).runs_at_most(call) == 2 * DECODED_TOKENS


@pytest.mark.parametrize("test, some", [
    ("step == loader.steps_per_epoch", True),  # a counter the loop adds one to
    ("step == 100", True),
    ("mode == 1", False),  # a setting: may hold on every iteration
    ("mode == config.eval_mode", False),
])
def test_a_counter_the_loop_adds_one_to_marks_a_branch_taken_on_some_iterations(test, some):
    code = textwrap.dedent(f"""
        step = 0
        for batch in loader:
            step += 1
            if {test}:
                evaluate(batch)
    """)
    facts = ModuleFacts(ast.parse(code), SourceText(code))
    call = next(c for c in facts.calls if getattr(c.func, "id", "") == "evaluate")
    assert HotCode(facts, None).on_some_iterations(call) is some


def test_a_name_the_def_binds_once_to_a_number_counts_its_loop_and_shadows_a_module_one():
    code = textwrap.dedent("""
        num_generate = 100000
        def generate(model):
            num_generate = 200
            for i in range(num_generate):
                model(x)
        def train(model):
            for i in range(num_generate):
                model(x)
        def rebound(model, n):
            steps = 10
            steps = n
            for i in range(steps):
                model(x)
        generate(m)
        generate(m)
        train(m)
        rebound(m, big)
    """)
    tree = ast.parse(code)
    facts = ModuleFacts(tree, SourceText(code))
    hot = HotCode(facts, None)
    generate, train, rebound = (next(c for c in facts.calls if getattr(c.func, "id", "") == "model"
                                     and facts.enclosing_function(c).name == name) for name in ("generate", "train", "rebound"))
    assert hot.runs_at_most(generate) == 400  # its own 200, not the module's 100000, twice
    assert hot.runs_at_most(train) == 100000  # no local: the module-level name
    assert hot.runs_at_most(rebound) is None  # bound twice: not a constant


def test_a_grid_of_linspace_points_counts_its_points():
    code = textwrap.dedent("""
        import numpy as np
        def plot(decoder, grid_size=5):
            grid_x = np.linspace(-4, 4, grid_size)
            grid_y = np.linspace(-4, 4, grid_size)[::-1]
            for i, y in enumerate(grid_y):
                for j, x in enumerate(grid_x):
                    decoder(x, y)
        def frames(size=10):
            for t in list(np.linspace(0, 1, num=size)):
                decoder(t)
            for t in np.linspace(0, 1):
                decoder(t)
            for t in np.linspace(0, 1, size)[::2]:
                decoder(t)
        plot(m, grid_size=7)
        frames()
    """)
    tree = ast.parse(code)
    facts = ModuleFacts(tree, SourceText(code))
    hot = HotCode(facts, None)
    grid, listed, default, strided = (c for c in facts.calls if getattr(c.func, "id", "") == "decoder")
    assert hot.runs_at_most(grid) == 49  # 7 x 7, reversed or not
    assert hot.runs_at_most(listed) == 10
    assert hot.runs_at_most(default) == 50  # numpy's default num
    assert hot.runs_at_most(strided) is None  # every second point: not counted


def test_a_while_loop_on_a_counter_counts_its_passes():
    code = textwrap.dedent("""
        i = 0
        while i < 30:
            if len(history) > 100:
                model.predict(a)
                i = i + 1
            else:
                model.predict(b)
                i += 1
        j = 0
        while j < 30:
            if ready():
                model.predict(c)
                j += 1
        k = 5
        while k <= 10:
            model.predict(d)
            k += 1
            if k == 7:
                continue
    """)
    tree = ast.parse(code)
    facts = ModuleFacts(tree, SourceText(code))
    hot = HotCode(facts, None)
    a, b, c, d = (call for call in facts.calls if getattr(call.func, "attr", "") == "predict")
    assert hot.runs_at_most(a) == hot.runs_at_most(b) == 30  # both branches count
    assert hot.runs_at_most(c) is None  # a pass that does not count: any number of passes
    assert hot.runs_at_most(d) is None  # a continue may skip the count
