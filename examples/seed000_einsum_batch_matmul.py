"""Seed 000: loop of matmuls + tf.stack versus one tf.einsum.

Source article (the program as it wrote it, smaller sizes, ported to TF 2.21):
  "TensorFlow 性能优化" (TensorFlow performance optimisation), an excerpt of
  《简单粗暴 TensorFlow 2》 by 李锡涵 (Google Developers Expert).

What it demonstrates
  1. The article's opening benchmark: a triple Python loop, a Cython loop, np.dot and tf.matmul
     computing the same matrix product.
  2. "模型开发：拥抱张量运算" (embrace tensor operations): 1000 tf.matmul calls in a Python loop whose
     results are stacked with tf.stack, and the single tf.einsum('ijk,kl->ijl', A, B) that
     replaces them. The article says both give the same result; the last lines of this file check it.

Catalog ids it should trigger (see the `# expect:` comments)
  V1  the `for i in range(1000): C.append(tf.matmul(A[i], B))` loop followed by tf.stack.
  Traps (`# expect-none:`): the NumPy triple loop has no TensorFlow op in it, so V1/V2 must not
  fire there.

Size reductions (to run in about a second on 2 CPU cores)
  - opening benchmark: 10000x10000 matrices -> 100x100 (the Python loop is O(n^3): ~700000 s in the
    article at n=10000).
  - batch matmul: A [1000, 100, 1000] -> [1000, 10, 100], B [1000, 1000] -> [100, 100]. The loop
    still runs 1000 times over the whole of axis 0, as in the article.

Ports to TF 2.21 / Python 3.11
  - `import pyximport; pyximport.install(); import matrix_cython`: the article omits the Cython
    module ("此处省略") and Cython is not installed here, so the import is guarded and the Cython
    timing is skipped when it is missing.
  - A and B of the second program are not defined in the article ("假设有 1000 个尺寸为 100×1000 的
    矩阵"); they are created with tf.random.uniform.
"""
import tensorflow as tf
import numpy as np
import time

# Port: the article's Cython module is not shipped with it; skip that timing when it is missing.
try:
    import pyximport; pyximport.install()
    import matrix_cython
except ImportError:
    matrix_cython = None

A = np.random.uniform(size=(100, 100))  # article: (10000, 10000)
B = np.random.uniform(size=(100, 100))  # article: (10000, 10000)
start_time = time.time()
C = np.zeros(shape=(100, 100))  # article: (10000, 10000)
# expect-none: V1, V2 - pure NumPy scalar loop (the article's baseline); no TensorFlow op in the body
for i in range(100):  # article: range(10000)
    for j in range(100):
        for k in range(100):
            C[i, j] += A[i, k] * B[k, j]
print('time consumed by Python for loop:', time.time() - start_time) # ~700000s
if matrix_cython is not None:
    start_time = time.time()
    C = matrix_cython.matmul(A, B) # Cython 代码为上述 Python 代码的 C 语言版本,此处省略
    print('time consumed by Cython for loop:', time.time() - start_time) # ~8400s
else:
    print('time consumed by Cython for loop: skipped (matrix_cython is not available)')
start_time = time.time()
C = np.dot(A, B)
print('time consumed by np.dot:', time.time() - start_time) # 5.61s
A = tf.constant(A)
B = tf.constant(B)
start_time = time.time()
C = tf.matmul(A, B)
print('time consumed by tf.matmul:', time.time() - start_time) # 0.77s

# 模型开发：拥抱张量运算 -- 1000 matrices A[i] times one matrix B, stacked on axis 0.
A = tf.random.uniform([1000, 10, 100])  # article: [1000, 100, 1000]
B = tf.random.uniform([100, 100])       # article: [1000, 1000]

start_time = time.time()
C = []
# expect: V1
for i in range(1000):
    C.append(tf.matmul(A[i], B))
C = tf.stack(C, axis=0)
print('time consumed by for loop + tf.stack:', time.time() - start_time) # ~0.40s
C_loop = C  # added: keep the loop result to check the article's "计算结果相同" claim below

start_time = time.time()
C = tf.einsum('ijk,kl->ijl', A, B)
print('time consumed by tf.einsum:', time.time() - start_time) # ~0.28s

# Added check: same result (float32, rtol=1e-5, atol=1e-5).
print('loop and einsum results equal:',
      np.allclose(C_loop.numpy(), C.numpy(), rtol=1e-5, atol=1e-5))
