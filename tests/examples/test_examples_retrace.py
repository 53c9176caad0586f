"""The retrace claims of examples/retrace_pitfalls.py, measured with TensorFlow (catalog R1-R8).

Each test loads the example as a fresh module, so every tf.function starts with an empty cache,
and reads `fn.experimental_get_tracing_count()` (catalog check TC).
"""
import contextlib
import unittest.mock

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.tf

NAME = "retrace_pitfalls"


def traces(fn):
    return fn.experimental_get_tracing_count()


# ---------------------------------------------------------------------------------------------
# R1
# ---------------------------------------------------------------------------------------------
def test_r1_python_float_retraces_per_value(load_example):
    m = load_example(NAME)
    w, grad = tf.ones([16]), tf.fill([16], 0.5)
    m.train_with_python_lr(w, grad, epochs=8)
    assert traces(m.decayed_update) == 8  # one trace per distinct lr value


def test_r1_fixed_tensor_argument_traces_once_and_matches(load_example):
    m = load_example(NAME)
    w, grad = tf.ones([16]), tf.fill([16], 0.5)
    fixed = m.train_with_tensor_lr(w, grad, epochs=8)
    assert traces(m.decayed_update) == 1
    bad = load_example(NAME).train_with_python_lr(w, grad, epochs=8)
    np.testing.assert_allclose(fixed.numpy(), bad.numpy(), rtol=1e-6)


def test_r1_loop_step_int(load_example):
    m = load_example(NAME)
    x = tf.random.normal([8, 16])
    bad = m.warmup_loop(x, steps=6)
    assert traces(m.warmup_scale) == 6
    m2 = load_example(NAME)
    fixed = m2.warmup_loop_fixed(x, steps=6)
    assert traces(m2.warmup_scale) == 1
    for a, b in zip(bad, fixed):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_r1_trap_constant_training_flag_traces_once(load_example):
    m = load_example(NAME)
    m.train_loop_forward(tf.random.normal([8, 16]), steps=5)
    assert traces(m.forward) == 1


def test_r1_trap_num_heads_must_stay_python(load_example):
    m = load_example(NAME)
    x = tf.random.normal([8, 16])
    outs = m.head_sweep(x)
    assert traces(m.split_heads) == 3  # one graph per head count: intended
    assert [tuple(o.shape) for o in outs] == [(1, 8, 16), (2, 8, 8), (4, 8, 4)]
    # The R1 rewrite would break it: tf.split cannot take a tensor number of splits.
    with pytest.raises(ValueError):
        m.split_heads(x, tf.constant(2))


def test_r1_r8_trap_depth_indexes_a_python_list(load_example):
    m = load_example(NAME)
    x = tf.random.normal([8, 16])
    m.depth_sweep(x)
    assert traces(m.deep_block) == 3  # one graph per depth: intended
    # tf.constant(depth) (the R1 rewrite) turns the loop into tf.range -> kernels[tensor] fails.
    with pytest.raises(TypeError):
        m.deep_block(x, tf.constant(2))


# ---------------------------------------------------------------------------------------------
# R2
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def recording_tf_function():
    """Patch tf.function to record every Function object created while the block runs."""
    real = tf.function
    created = []

    def recorder(*args, **kwargs):
        result = real(*args, **kwargs)
        if hasattr(result, "experimental_get_tracing_count"):
            created.append(result)
        else:  # decorator factory: @tf.function(...)
            def decorate(fn):
                f = result(fn)
                created.append(f)
                return f
            return decorate
        return result

    with unittest.mock.patch.object(tf, "function", recorder):
        yield created


def test_r2_function_created_in_loop_traces_every_iteration(load_example, retrace_warnings):
    batches = [tf.random.normal([4, 16]) for _ in range(8)]
    with recording_tf_function() as created:
        m = load_example(NAME)
        n_at_import = len(created)
        m.normalize_batches(batches)
    in_loop = created[n_at_import:]
    assert len(in_loop) == 8  # a new Function per iteration
    assert sum(traces(f) for f in in_loop) == 8  # ... each traced once
    assert len(retrace_warnings) >= 1  # TF's own warning fires too (keyed by __code__)


def test_r2_nested_def_in_called_function(load_example):
    pairs = [(tf.random.normal([4, 16]), tf.random.normal([4, 16])) for _ in range(6)]
    with recording_tf_function() as created:
        m = load_example(NAME)
        n_at_import = len(created)
        bad = m.evaluate(pairs)
    assert len(created) - n_at_import == 6
    assert sum(traces(f) for f in created[n_at_import:]) == 6
    fixed = m.evaluate_hoisted(pairs)
    assert traces(m.mse_graph) == 1
    np.testing.assert_allclose([b.numpy() for b in bad], [f.numpy() for f in fixed], rtol=1e-6)


def test_r2_hoisted_traces_once(load_example):
    m = load_example(NAME)
    batches = [tf.random.normal([4, 16]) for _ in range(8)]
    out = m.normalize_batches_hoisted(batches)
    assert traces(m.normalize_graph) == 1
    np.testing.assert_allclose(out[0].numpy(), m.normalize(batches[0]).numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# R3
# ---------------------------------------------------------------------------------------------
def test_r3_variable_length_sequences(load_example):
    m = load_example(NAME)
    sequences = [tf.random.normal([n]) for n in (5, 7, 9, 11)]
    bad = m.score_sequences(sequences)
    assert traces(m.sequence_energy) == 4  # one per length
    fixed = m.score_sequences_fixed(sequences)
    assert traces(m.sequence_energy_any_length) == 1  # input_signature [None]
    m.score_sequences_fixed(sequences, fn=m.sequence_energy_relaxed)
    assert traces(m.sequence_energy_relaxed) == 2  # reduce_retracing: specific, then (None,)
    np.testing.assert_allclose([b.numpy() for b in bad], [f.numpy() for f in fixed], rtol=1e-6)


def test_r3_last_partial_batch(load_example):
    m = load_example(NAME)
    x = np.random.default_rng(0).random((100, 16)).astype("float32")  # 32, 32, 32, 4
    bad = m.epoch_over_numpy(x)
    assert traces(m.batch_loss) == 2
    m2 = load_example(NAME)
    fixed = m2.epoch_over_dataset(x)
    assert traces(m2.batch_loss) == 1  # drop_remainder=True ...
    assert len(fixed) == 3  # ... drops the last 4 rows (the documented cost)
    np.testing.assert_allclose([b.numpy() for b in bad[:3]], [f.numpy() for f in fixed], rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# R4, R5, R6, R7, R8
# ---------------------------------------------------------------------------------------------
def test_r4_fresh_object_per_call(load_example):
    m = load_example(NAME)
    x = tf.random.normal([8, 16])
    m.augment_loop(x, steps=5)
    assert traces(m.add_noise) == 5
    m2 = load_example(NAME)
    m2.augment_loop_fixed(x, steps=5)
    assert traces(m2.add_noise) == 1


def test_r5_python_list_argument(load_example):
    m = load_example(NAME)
    per_class = tf.constant([0.3, 0.7])
    bad = m.weighted_epochs(per_class, epochs=4)
    assert traces(m.weighted_loss) == 4
    m2 = load_example(NAME)
    fixed = m2.weighted_epochs_fixed(per_class, epochs=4)
    assert traces(m2.weighted_loss) == 1
    np.testing.assert_allclose([b.numpy() for b in bad], [f.numpy() for f in fixed], rtol=1e-6)


def test_r6_per_instance_function(load_example, retrace_warnings):
    m = load_example(NAME)
    outs = m.per_fold_normalizers(tf.random.normal([8, 16]), folds=6)
    assert len(outs) == 6
    a, b = m.Standardizer(0.0, 1.0), m.Standardizer(0.0, 1.0)
    assert a.__call__ is not b.__call__  # each instance gets its own Function
    assert len(retrace_warnings) >= 1  # and TF's warning (keyed by __code__) fires


def test_r7_experimental_relax_shapes_still_accepted(load_example):
    m = load_example(NAME)
    for n in (3, 4, 5, 6):
        m.running_max(tf.range(n, dtype=tf.float32))
        m.running_min(tf.range(n, dtype=tf.float32))
    # It still behaves like reduce_retracing=True in TF 2.21: relaxed after the 2nd shape.
    assert traces(m.running_max) == 2
    assert traces(m.running_min) == 2


def test_r8_unrolled_loop_grows_the_graph(load_example):
    m = load_example(NAME)
    x = tf.random.normal([8, 16])
    n = 100
    unrolled = m.cumulative_decay.get_concrete_function(x, n)
    looped = m.cumulative_decay_loop.get_concrete_function(x, tf.constant(n))
    nodes_unrolled = len(unrolled.graph.as_graph_def().node)
    nodes_looped = len(looped.graph.as_graph_def().node)
    assert nodes_unrolled > 2 * n  # grows with n (catalog: 202 nodes at n=100)
    assert nodes_looped < 50  # constant size (catalog: 18)
    np.testing.assert_allclose(m.cumulative_decay(x, n).numpy(),
                               m.cumulative_decay_loop(x, tf.constant(n)).numpy(), rtol=1e-5, atol=1e-5)
    # and n passed as a Python int also retraces per value
    m.cumulative_decay(x, 10)
    assert traces(m.cumulative_decay) == 2
