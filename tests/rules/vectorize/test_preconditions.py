"""Loops that break a precondition of a vectorize rewrite get no fix (flagged as a hint, or silent).

Each case says which: "hint" = flagged without a fix, "silent" = not flagged at all; a few
look-alikes that do satisfy the preconditions say "fix".
"""
import pytest

from tests.rules.vectorize._helpers import own

V1 = [
    ("partial range", "hint", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(A.shape[0] - 1):
                C.append(tf.matmul(A[i], B))
            return tf.stack(C)
        """),
    ("starts at 1", "silent", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(1, A.shape[0]):
                C.append(tf.matmul(A[i], B))
            return tf.stack(C)
        """),
    ("B varies with another index", "silent", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(len(A)):
                C.append(tf.matmul(A[i], B[i + 1]))
            return tf.stack(C)
        """),
    ("list used again", "hint", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(len(A)):
                C.append(tf.matmul(A[i], B))
            out = tf.stack(C)
            return out, C
        """),
    ("list not created empty", "hint", """
        import tensorflow as tf
        def f(A, B, first):
            C = [first]
            for i in range(len(A)):
                C.append(tf.matmul(A[i], B))
            return tf.stack(C)
        """),
    ("mixed dtypes f32 x f16", "hint", """
        import tensorflow as tf
        A = tf.random.uniform([4, 3, 5])
        B = tf.random.uniform([5, 2], dtype=tf.float16)
        C = []
        for i in range(A.shape[0]):
            C.append(tf.matmul(A[i], B))
        C = tf.stack(C)
        """),
    ("mixed dtypes through tf.cast", "hint", """
        import tensorflow as tf
        A = tf.random.uniform([4, 3, 5])
        B = tf.cast(tf.random.uniform([5, 2]), tf.float16)
        C = tf.stack([tf.matmul(A[i], B) for i in range(len(A))])
        """),
    ("literal bound differs from the shape", "hint", """
        import tensorflow as tf
        A = tf.random.uniform([8, 3, 5])
        B = tf.random.uniform([5, 2])
        C = []
        for i in range(4):
            C.append(tf.matmul(A[i], B))
        C = tf.stack(C)
        """),
    ("literal bound, A built in a branch", "hint", """
        import tensorflow as tf
        import random
        if random.random() < 0.5:
            A = tf.random.uniform([4, 3, 5])
        else:
            A = tf.random.uniform([8, 3, 5])
        B = tf.random.uniform([5, 2])
        C = []
        for i in range(4):
            C.append(tf.matmul(A[i], B))
        C = tf.stack(C)
        """),
    ("rank-4 A", "hint", """
        import tensorflow as tf
        A = tf.random.uniform([4, 2, 3, 5])
        B = tf.random.uniform([5, 2])
        C = tf.stack([tf.matmul(a, B) for a in A])
        """),
    ("stacked on axis 1", "hint", """
        import tensorflow as tf
        def f(A, B):
            return tf.stack([tf.matmul(A[i], B) for i in range(len(A))], axis=1)
        """),
    ("transpose flag not a literal", "hint", """
        import tensorflow as tf
        def f(A, B, t):
            return tf.stack([tf.matmul(A[i], B, transpose_b=t) for i in range(len(A))])
        """),
    ("adjoint flag", "hint", """
        import tensorflow as tf
        def f(A, B):
            return tf.stack([tf.matmul(A[i], B, adjoint_b=True) for i in range(len(A))])
        """),
    ("loop variable used afterwards", "hint", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(len(A)):
                C.append(tf.matmul(A[i], B))
            C = tf.stack(C)
            return C, i
        """),
    ("in an outer loop that reads i before the region", "hint", """
        import tensorflow as tf
        def f(A, B):
            i = 0
            for epoch in range(3):
                print(i)
                C = []
                for i in range(len(A)):
                    C.append(tf.matmul(A[i], B))
                C = tf.stack(C)
            return C
        """),
    ("in an outer loop, nothing else reads i or C", "fix", """
        import tensorflow as tf
        def f(A, B):
            for epoch in range(3):
                C = []
                for i in range(len(A)):
                    C.append(tf.matmul(A[i], B))
                C = tf.stack(C)
                A = A + C
            return A
        """),
    ("more work in the loop body", "silent", """
        import tensorflow as tf
        def f(A, B):
            C = []
            for i in range(len(A)):
                print(i)
                C.append(tf.matmul(A[i], B))
            return tf.stack(C)
        """),
    ("shared operand is a call (may differ per iteration)", "silent", """
        import tensorflow as tf
        def f(A):
            return tf.stack([tf.matmul(A[i], tf.random.normal([5, 2])) for i in range(len(A))])
        """),
]

V2 = [
    ("start not right before the loop", "hint", """
        import tensorflow as tf
        def f(x):
            s = 0.0
            print("summing")
            for row in x:
                s += tf.reduce_mean(row)
            return s
        """),
    ("bound not the row count", "hint", """
        import tensorflow as tf
        def f(x, n):
            s = 0.0
            for i in range(n):
                s += tf.reduce_mean(x[i])
            return s
        """),
    ("rank from a branch is not trusted for the axes", "fix", """
        import tensorflow as tf
        import random
        if random.random() < 0.5:
            x = tf.zeros([3, 4])
        else:
            x = tf.zeros([3, 4, 5])
        s = 0.0
        for row in x:
            s += tf.reduce_mean(row)
        """),
    ("keepdims", "hint", """
        import tensorflow as tf
        def f(x):
            s = 0.0
            for row in x:
                s += tf.reduce_mean(row, keepdims=True)
            return s
        """),
    ("loop variable used afterwards", "hint", """
        import tensorflow as tf
        def f(x):
            s = 0.0
            for row in x:
                s += tf.reduce_mean(row)
            return s, row
        """),
    ("a dataset", "silent", """
        import tensorflow as tf
        def f(images):
            batches = tf.data.Dataset.from_tensor_slices(images).batch(8)
            s = 0.0
            for b in batches:
                s += tf.reduce_sum(b)
            return s
        """),
    ("a model's weights (different shapes)", "silent", """
        import tensorflow as tf
        def total_weight(model):
            s = 0.0
            for w in model.trainable_variables:
                s += tf.reduce_sum(w)
            return s
        """),
    ("a Python list of tensors", "silent", """
        import tensorflow as tf
        def f(a, b):
            pieces = [a, b]
            s = 0.0
            for i in range(len(pieces)):
                s += tf.reduce_sum(pieces[i])
            return s
        """),
    ("subtraction", "silent", """
        import tensorflow as tf
        def f(x):
            s = 0.0
            for row in x:
                s = s - tf.reduce_mean(row)
            return s
        """),
    ("tuple target", "silent", """
        import tensorflow as tf
        def f(pairs):
            s = 0.0
            for a, b in pairs:
                s += tf.reduce_sum(a)
            return s
        """),
]

V3 = [
    ("invariant tensor operand: vectorized_map hint only", "hint", """
        import tensorflow as tf
        def f(x, w):
            return tf.map_fn(lambda r: r * w, x)
        """),
    ("partial comprehension", "hint", """
        import tensorflow as tf
        def f(x, n):
            return tf.stack([tf.exp(x[i]) for i in range(n)])
        """),
    ("x * 2 would repeat a Python list", "silent", """
        import tensorflow as tf
        def f(x):
            return tf.stack([x[i] * 2 for i in range(len(x))])
        """),
    ("random op in f", "silent", """
        import tensorflow as tf
        def noisy(r):
            return r + tf.random.normal(tf.shape(r))
        def f(x):
            return tf.map_fn(noisy, x)
        """),
    ("Python control flow in f", "silent", """
        import tensorflow as tf
        def clip(r):
            if tf.reduce_max(r) > 1.0:
                return r / tf.reduce_max(r)
            return r
        def f(x):
            return tf.map_fn(clip, x)
        """),
]

V4 = [
    ("inside a tf.function", "hint", """
        import tensorflow as tf
        @tf.function
        def f(chunks):
            acc = chunks[0]
            for i in range(1, 4):
                acc = tf.concat([acc, chunks[i]], 0)
            return acc
        """),
    ("prepends", "hint", """
        import tensorflow as tf
        def f(chunks):
            acc = tf.zeros([0, 3])
            for c in chunks:
                acc = tf.concat([c, acc], 0)
            return acc
        """),
    ("returns from the loop", "hint", """
        import tensorflow as tf
        def f(chunks):
            acc = tf.zeros([0, 3])
            for c in chunks:
                if c.shape[0] == 0:
                    return c
                acc = tf.concat([acc, c], 0)
            return acc
        """),
    ("reads acc in the loop", "silent", """
        import tensorflow as tf
        def f(chunks):
            acc = tf.zeros([0, 3])
            for c in chunks:
                acc = tf.concat([acc, c], 0)
                print(acc.shape)
            return acc
        """),
]

V5 = [
    ("per-step float() in a hand-written (eager) step: no cost to save", "silent", """
        import tensorflow as tf
        w = tf.Variable(1.0)
        opt = tf.keras.optimizers.SGD(0.1)
        for step in range(10):
            with tf.GradientTape() as tape:
                loss = (w - 3.0) ** 2
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            print("loss", float(loss))
        """),
    ("not a training loop", "silent", """
        import tensorflow as tf
        def evaluate(model, batches):
            for x in batches:
                out = model(x)
                print(float(tf.reduce_mean(out)))
        """),
    ("a value that is not the step's result", "silent", """
        import tensorflow as tf
        def fit(model, batches, lr):
            for x, y in batches:
                loss = model.train_on_batch(x, y)
                print(lr.numpy())
        """),
    ("once per epoch", "silent", """
        import tensorflow as tf
        def fit(model, batches, epochs):
            for epoch in range(epochs):
                for x, y in batches:
                    loss = model.train_step(x, y)
                print(float(loss))
        """),
    ("inside a tf.function", "silent", """
        import tensorflow as tf
        @tf.function
        def train(model, xs):
            for x in xs:
                loss = model.train_step(x)
                print(loss)
        """),
]

CASES = [("TFP401", *c) for c in V1] + [("TFP402", *c) for c in V2] + [("TFP403", *c) for c in V3] + [("TFP404", *c) for c in V4] + [("TFP405", *c) for c in V5]


@pytest.mark.parametrize("code,name,expected,source", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_precondition_violations_get_no_fix(code, name, expected, source):
    _, findings = own(code, source)
    if expected == "silent":
        assert findings == [], [f.message for f in findings]
    elif expected == "fix":
        assert len(findings) == 1 and findings[0].fix_title, [f.message for f in findings]
    else:
        assert len(findings) == 1, [f.message for f in findings]
        assert findings[0].fix_title is None, f"{name}: a precondition fails, no fix expected"
        assert "\n" not in findings[0].message


def test_untrusted_rank_uses_the_rank_generic_axes():
    from tests.rules.vectorize._helpers import fixed

    source = {name: code for name, _, code in V2}["rank from a branch is not trusted for the axes"]
    assert "axis=tf.range(1, tf.rank(x))" in fixed("TFP402", source)


@pytest.mark.tf
def test_mixed_dtypes_raise_in_loop_and_einsum():
    """Catalog trap: float32 x float16 is an error both ways, so no rewrite can be right."""
    import tensorflow as tf

    A, B = tf.random.uniform([4, 3, 5]), tf.random.uniform([5, 2], dtype=tf.float16)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.einsum("ijk,kl->ijl", A, B)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.matmul(A[0], B)
