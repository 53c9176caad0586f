"""Seed 003: imperative vs symbolic (hybrid) programming - a Keras MLP called eagerly vs tf.function.

Source article (the program as it wrote it, smaller sizes, ported to TF 2.21):
  "计算性能 (机器学习)(TensorFlow)" (Computational performance, 2024-05-23; a TensorFlow
  rendering of the d2l.ai chapter "Compilers and Interpreters" / "Hybrid programming").

What it demonstrates (in the article's order)
  1. fancy_func: plain Python imperative code (no TensorFlow).
  2. get_net(): a 512 -> 256 -> 128 -> 2 Sequential MLP, called once eagerly and once after
     `net = tf.function(net)`.
  3. Benchmark: `for i in range(1000): net(x)` eagerly (1.28 s in the article), then the same loop
     after `net = tf.function(net)` (0.58 s).
  4. Serialisation with tf.saved_model.save(net, 'my_mlp').

Catalog ids it should trigger (see the `# expect:` comments)
  G1  the graph-mode opportunity "eager model call in a hot loop" (no catalog id; this repository's
      answer key calls it G1): `for i in range(1000): net(x)` while net is still an eager Keras model.
  Traps (`# expect-none:`): the single eager `net(x)` call is not in a loop; the second 1000-call
  loop runs `net` after `net = tf.function(net)`, so it is already a graph.

Size reductions: none (1000 calls of a [1, 512] input take about a second on 2 CPU cores).

Ports to TF 2.21 / Python 3.11 / Keras 3
  - `time.clock()` was removed in Python 3.8 -> `time.perf_counter()` (the documented replacement
    for timing; time.clock measured CPU time on Unix and wall time on Windows).
  - `tf.saved_model.save(net, 'my_mlp')` then the notebook shell line `!ls -lh my_mlp*`: the model
    is saved into a temporary directory (so running the example leaves no files behind) and the
    listing is printed with os.listdir.
  - Notebook cells that end in a bare `net(x)` (whose value the notebook displays) -> `print(net(x))`.
  - `Dense(256, input_shape=(512,), ...)`: Keras 3 still accepts input_shape on the first layer of a
    Sequential (with a UserWarning); kept as written.
"""
import os
import tempfile
import warnings

def add(a, b):
    return a + b

def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g

print(fancy_func(1, 2, 3, 4))

# 10

import tensorflow as tf
from tensorflow.keras.layers import Dense

warnings.filterwarnings("ignore", message=".*input_shape.*")  # added: Keras 3 UserWarning

# 生产网络的工厂模式
def get_net():
    net = tf.keras.Sequential()
    net.add(Dense(256, input_shape = (512,), activation = "relu"))
    net.add(Dense(128, activation = "relu"))
    net.add(Dense(2, activation = "linear"))
    return net

x = tf.random.normal([1,512])
net = get_net()
# expect-none: G1 - a single eager call, not in a loop
print(net(x))

# <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[ 0.9541333 , -0.74289465]], dtype=float32)>

net = tf.function(net)
print(net(x))

# <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[ 0.9541333 , -0.74289465]], dtype=float32)>

import time

class Benchmark:
    """用于测量运行时间"""
    def __init__(self, description='Done'):
        self.description = description

    def __enter__(self):
        self.t1 = time.perf_counter()  # Port: time.clock() was removed in Python 3.8
        return self

    def __exit__(self, *args):
        self.t2 = time.perf_counter()  # Port: time.clock() was removed in Python 3.8
        print(f'{self.description}: {(self.t2 - self.t1):.4f} sec')

# 现在我们可以调用网络三次，一次使用eager模式，一次是使用图模式。
net = get_net()
with Benchmark('Eager模式'):
    # expect-none: G1 - the eager baseline of a comparison: net = tf.function(net) follows
    for i in range(1000): net(x)

net = tf.function(net)
with Benchmark('Graph模式'):
    # expect-none: G1 - net is tf.function(net) here, already a graph
    for i in range(1000): net(x)

# Eager模式: 1.2769 sec
# Graph模式: 0.5811 sec

# 序列化 (serialisation)
net = get_net()
with tempfile.TemporaryDirectory() as workdir:  # Port: keep the saved model out of the cwd
    tf.saved_model.save(net, os.path.join(workdir, 'my_mlp'))
    # Port of the notebook line `!ls -lh my_mlp*`
    for name in sorted(os.listdir(os.path.join(workdir, 'my_mlp'))):
        print('my_mlp/' + name)
