"""TFP701-TFP705 beyond their documented examples: severities, preconditions of the fixes, traps."""
import pytest

from tfperf_lsp.model import Severity

from tests.rules.helpers import findings, fixed

# The edge cases below are about the rules' mechanics (fixes, consumers, layouts): they run with
# tf.data's own map parallelisation and prefetch injection turned off, where those rules apply.
HEADER = """
import numpy as np
import tensorflow as tf; OPTS = tf.data.Options()  # OPTS: map_parallelization = False, autotune.enabled = False
"""
DEFAULTS_HEADER = """
import numpy as np
import tensorflow as tf
"""


@pytest.mark.parametrize("code", [
    "ds = tf.data.Dataset.range(4).map(lambda x: tf.math.log1p(tf.abs(x)) * 2.0).batch(2)\nfor b in ds: pass\n",
    "ds = tf.data.Dataset.range(8).batch(2)\nfor b in ds: pass\n",
])
def test_tf_data_defaults_already_parallelise_stateless_maps_and_prefetch(code):
    """TF 2.7+ runs a stateless map in parallel, and 2.12+ appends a prefetch, by themselves."""
    assert findings(DEFAULTS_HEADER + code, "TFP701") == []
    assert findings(DEFAULTS_HEADER + code, "TFP702") == []


def test_random_map_stays_serial_under_the_defaults_and_is_reported():
    code = DEFAULTS_HEADER + "ds = tf.data.Dataset.range(4).map(lambda x: tf.cast(x, tf.float32) + tf.random.uniform([])).batch(2)\n"
    [finding] = findings(code, "TFP701")
    assert "does not parallelise it by itself" in finding.message


# ---------------------------------------------------------------------- TFP701
@pytest.mark.parametrize(
    "fn, severity, fixable",
    [
        ("lambda x: tf.math.log1p(tf.abs(x)) * 2.0", Severity.WARNING, True),
        ("lambda x: tf.numpy_function(np.sqrt, [x], tf.float64)", Severity.WARNING, False),
        ("lambda x: tf.image.random_flip_left_right(x)", Severity.WARNING, False),
    ],
)
def test_map_severity_and_fix_follow_the_function(fn, severity, fixable):
    code = HEADER + f"ds = tf.data.Dataset.range(4).with_options(OPTS).map({fn}).batch(2).prefetch(1)\n"
    [finding] = findings(code, "TFP701")
    assert finding.severity == severity
    assert bool(finding.fix_title) == fixable


def test_python_counter_in_map_gets_no_fix():
    code = HEADER + """
calls = []

def count(x):
    calls.append(1)
    return x * 2 + 1

ds = tf.data.Dataset.range(4).map(count).batch(2).prefetch(1)
"""
    [finding] = findings(code, "TFP701")
    assert finding.fix_title is None and ".append()" in finding.message


def test_map_keeps_its_multiline_layout_and_comments_when_fixed():
    code = HEADER + """
ds = tf.data.Dataset.range(4).with_options(OPTS).map(
    lambda x: x * 2 + 1,  # affine
)
"""
    assert "    lambda x: x * 2 + 1,  # affine\n    num_parallel_calls=tf.data.AUTOTUNE,\n)" in fixed(code, {"TFP701"})


# ---------------------------------------------------------------------- TFP702
def test_prefetch_before_light_steps_counts():
    code = HEADER + """
ds = tf.data.Dataset.range(8).batch(2).prefetch(1).repeat(2).take(3)
for batch in ds:
    pass
"""
    assert findings(code, "TFP702") == []


def test_prefetch_only_before_a_later_transformation_does_not_count():
    code = HEADER + """
ds = tf.data.Dataset.range(8).with_options(OPTS).prefetch(1).map(lambda x: x * 2, num_parallel_calls=2).batch(2)
for batch in ds:
    pass
"""
    [finding] = findings(code, "TFP702")
    assert finding.span.start.col == code.splitlines()[4].index(".batch")
    assert fixed(code, {"TFP702"}).count(".batch(2).prefetch(tf.data.AUTOTUNE)") == 1


def test_fit_consumer_and_import_added_when_tf_is_not_imported():
    code = """
from tensorflow.data import Dataset

def train(model, x):
    model.fit(Dataset.from_tensor_slices(x).with_options(OPTS).batch(32), epochs=2)
# options.autotune.enabled = False
"""
    after = fixed(code, {"TFP702"})
    assert after.startswith("import tensorflow as tf\n")
    assert ".batch(32).prefetch(tf.data.AUTOTUNE)" in after


def test_dataset_handed_to_unknown_code_is_not_reported():
    code = HEADER + """
def make():
    return tf.data.Dataset.range(8).batch(2)

strategy = tf.distribute.get_strategy()
dist = strategy.experimental_distribute_dataset(make())
"""
    assert findings(code, "TFP702") == []


# ---------------------------------------------------------------------- TFP703
def test_swap_only_for_consecutive_self_updates():
    not_consecutive = HEADER + """
ds = tf.data.Dataset.range(8)
ds = ds.map(lambda x: x * 2)
n = ds.cardinality()
ds = ds.batch(16)
"""
    [finding] = findings(not_consecutive, "TFP703")
    assert finding.fix_title is None and finding.severity == Severity.INFORMATION


def test_two_parameter_or_resizing_functions_are_hints_only():
    code = HEADER + """
def scale(image, label):
    return tf.cast(image, tf.float32) / 255.0, label

def resize(image):
    return tf.image.resize(image, [8, 8])

a = tf.data.Dataset.from_tensor_slices((np.zeros((4, 2)), np.zeros(4))).map(scale).batch(16)
b = tf.data.Dataset.from_tensor_slices(np.zeros((4, 6, 6, 3))).map(resize).batch(16)
"""
    found = findings(code, "TFP703")
    assert len(found) == 2 and all(f.fix_title is None for f in found)


def test_broadcasting_with_an_array_constant_is_not_elementwise():
    code = HEADER + """
MEAN = tf.constant([0.5, 0.2, 0.1])
ds = tf.data.Dataset.from_tensor_slices(np.zeros((4, 3))).map(lambda x: x - MEAN).batch(16)
"""
    [finding] = findings(code, "TFP703")
    assert finding.fix_title is None


@pytest.mark.tf
def test_swapped_pipeline_gives_the_same_batches_under_tensorflow():
    import numpy as np
    import tensorflow as tf

    code = HEADER + """
SHIFT = 3
ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.int32))
ds = ds.map(lambda x: tf.nn.relu(tf.cast(x - SHIFT, tf.float32)) ** 2 * 0.5)
ds = ds.batch(4)
"""
    after = fixed(code, {"TFP703"})
    assert "ds = ds.batch(4)\nds = ds.map(" in after
    before_ns, after_ns = {}, {}
    exec(compile(code, "<before>", "exec"), before_ns)
    exec(compile(after, "<after>", "exec"), after_ns)
    for b1, b2 in zip(before_ns["ds"], after_ns["ds"]):
        np.testing.assert_allclose(b1.numpy(), b2.numpy(), rtol=1e-6, atol=0)
    assert len(list(before_ns["ds"])) == len(list(after_ns["ds"])) == 3
    assert tf.is_tensor(b2)


# ---------------------------------------------------------------------- TFP704
def test_repeat_after_the_map_counts_as_epochs_and_epochs_one_does_not():
    code = HEADER + """
def parse(line):
    return tf.strings.to_number(tf.strings.split(line, ","))

lines = tf.data.Dataset.from_tensor_slices(["1,2", "3,4"])
repeated = lines.map(parse, num_parallel_calls=2).repeat().batch(2).prefetch(1)
for batch in repeated.take(5):
    pass
single = lines.map(parse, num_parallel_calls=2).batch(2).prefetch(1)
model.fit(single, epochs=1)
"""
    [finding] = findings(code, "TFP704")
    assert finding.span.start.line == 7 and finding.fix_title  # 0-based: the `repeated` line


def test_cheap_maps_are_not_worth_caching():
    code = HEADER + """
ds = tf.data.Dataset.range(8).map(lambda x: x * 2, num_parallel_calls=2).batch(2).prefetch(1)
for epoch in range(5):
    for batch in ds:
        pass
"""
    assert findings(code, "TFP704") == []


# ---------------------------------------------------------------------- TFP705
def test_zip_generator_fix_keeps_the_yield_order():
    code = HEADER + """
xs = np.zeros((6, 2), dtype=np.float32)
ys = np.ones(6, dtype="int32")

def pairs():
    for a, b in zip(xs, ys):
        yield b, a

ds = tf.data.Dataset.from_generator(pairs, output_types=(tf.int32, tf.float32))
"""
    assert "tf.data.Dataset.from_tensor_slices((ys, xs))" in fixed(code, {"TFP705"})


def test_dtype_mismatch_gets_no_fix():
    code = HEADER + """
xs = np.zeros((6, 2))  # float64

def rows():
    for i in range(len(xs)):
        yield xs[i]

ds = tf.data.Dataset.from_generator(rows, output_signature=tf.TensorSpec((2,), tf.float32))
"""
    [finding] = findings(code, "TFP705")
    assert finding.fix_title is None


def test_generator_with_arguments_or_computed_values_is_silent():
    code = HEADER + """
xs = np.zeros((6, 2), dtype=np.float32)

def rows(scale):
    for i in range(len(xs)):
        yield xs[i] * scale

def noisy():
    for row in xs:
        yield row + np.random.normal()

a = tf.data.Dataset.from_generator(rows, args=(2.0,), output_signature=tf.TensorSpec((2,), tf.float32))
b = tf.data.Dataset.from_generator(noisy, output_signature=tf.TensorSpec((2,), tf.float64))
"""
    assert findings(code, "TFP705") == []


def test_per_element_ops_are_not_batch_candidates():
    code = HEADER + """
def load(path, label):
    image = tf.io.decode_png(tf.io.read_file(path), channels=3)
    return tf.image.resize(image, [32, 32]), label

ds = tf.data.Dataset.from_tensor_slices((["a.png"], [0])).map(load, num_parallel_calls=2).batch(2).prefetch(1)
"""
    assert findings(code, "TFP703") == []


def test_parallel_map_fix_is_unsafe_when_options_may_drop_determinism():
    code = HEADER + """
options = tf.data.Options()
options.deterministic = False
ds = tf.data.Dataset.range(8).with_options(options).map(lambda x: x * 2 + 1).batch(2).prefetch(1)
"""
    [finding] = findings(code, "TFP701")
    assert finding.fix_title and finding.fix_applicability == "unsafe"
