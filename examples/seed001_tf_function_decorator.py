"""Seed 001: understanding the @tf.function decorator.

Source article (the program as it wrote it, smaller sizes, ported to TF 2.21):
  "理解TensorFlow的@tf.function装饰器" (a Chinese translation of "Understanding TensorFlow's
  @tf.function decorator", 2024-03-06).

What it demonstrates (in the article's order)
  1. some_costly_computation: 99 chained tf.matmul calls, run eagerly 50 times through
     timeit.repeat, then wrapped with tf.function(...) and as @tf.function.
  2. print() inside a tf.function runs only while tracing; tf.print runs on every call.
  3. function_with_for (a Python loop over the rows that accumulates tf.reduce_mean(row))
     versus vectorized_function.
  4. A stale global: power() reads the Python global `y`; re-assigning y = 3 does not change the
     result (4.0 twice). The fix passes a tf.Variable as an argument (4.0 then 8.0).
  5. Debugging: a dtype error and a shape error (caught here so the file runs to the end).

Catalog ids it should trigger (see the `# expect:` comments)
  G1  the graph-mode opportunity "costly eager function in a hot loop" (no catalog id; this
      repository's answer key calls it G1): some_costly_computation is eager and is called 50 times
      by timeit.repeat(stmt="some_costly_computation(x)", ...) - the call sits in a timeit string.
  R8  `for i in range(1,100)` inside a function that runs as a graph: the loop is unrolled into
      99 matmul/div/add groups (also in some_costly_computation, which becomes a graph through
      quicker_computation = tf.function(some_costly_computation)).
  C2  print() inside quick_computation.
  V2  function_with_for's `for row in x: summ = summ + tf.reduce_mean(row)`.
  Traps (`# expect-none:`): the matmul chain has a loop-carried dependency (aux depends on the
  previous aux) so it is not V1; `for row in x` iterates over a Tensor, which AutoGraph turns into
  a tf.while_loop (not R8); tf.print is not C2; power() reading the global `y` that is re-assigned
  later is C1, but the article defines power again with `y` as an argument right below (a
  before-and-after lesson: silent), and that tf.Variable version is not C1.

Size reductions: none needed (100x100 matrices, timeit repeat=5 number=10, as in the article).
  Note: vectorized_function reduces over axis=0 (column means) while the loop sums row means;
  they agree here only because x is square (100x100).

Ports to TF 2.21 / Python 3.11
  - The article's @tf.function bodies are indented with 2 spaces and one print line has a stray
    leading space (an IndentationError); re-indented.
  - The two debugging examples raise by design (InvalidArgumentError / a Matrix size error); they
    are wrapped in try/except so the program runs to completion.
"""
import tensorflow as tf
import time
import timeit

x = tf.random.uniform(shape=[100, 100], minval=-1, maxval=1, dtype=tf.dtypes.float32)
# expect: G1
def some_costly_computation(x):
    aux = tf.eye(100, dtype=tf.dtypes.float32)
    result = tf.zeros(100, dtype = tf.dtypes.float32)
    # expect-none: R8 - a fixed count (99): unrolled runs faster than a graph loop, one trace
    # expect-none: V1 - loop-carried dependency: each matmul consumes the previous aux
    for i in range(1,100):
        aux = tf.matmul(x,aux)/i
        result = result + aux
    return result

print("costly origin 10 repeat", timeit.repeat(stmt="some_costly_computation(x)",
                    repeat=5,
                    number=10,
                    globals=globals()))

quicker_computation = tf.function(some_costly_computation)
print("costly quick 10 repeat", timeit.repeat(stmt="quicker_computation(x)",
                    repeat=5,
                    number=10,
                    globals=globals()))

@tf.function
def quick_computation(x):
    aux = tf.eye(100, dtype=tf.dtypes.float32)
    result = tf.zeros(100, dtype = tf.dtypes.float32)
    # expect-none: R8 - a fixed count (99): unrolled runs faster than a graph loop, one trace
    for i in range(1,100):
        aux = tf.matmul(x,aux)/i
        result = result + aux
    return result
print("costly2 10 repeat", timeit.repeat(stmt="quick_computation(x)",
                    repeat=5,
                    number=10,
                    globals=globals()))

# print() runs only while tracing.
@tf.function
def quick_computation(x):
    # expect-none: C2 - called by hand twice at module level: the output shows at once that it prints only while tracing (a demonstration, not a step that runs often)
    print('Only prints the first time!')
    aux = tf.eye(100, dtype=tf.dtypes.float32)
    result = tf.zeros(100, dtype = tf.dtypes.float32)
    # expect-none: R8 - a fixed count (99): unrolled runs faster than a graph loop, one trace
    for i in range(1,100):
        aux = tf.matmul(x,aux)/i
        result = result + aux
    return result

quick_computation(x)
quick_computation(x)

@tf.function
def quick_computation_with_print(x):
    # expect-none: C2 - tf.print is a graph op and runs on every call
    tf.print("Prints every time!")
    aux = tf.eye(100, dtype=tf.dtypes.float32)
    result = tf.zeros(100, dtype = tf.dtypes.float32)
    # expect-none: R8 - a fixed count (99): unrolled runs faster than a graph loop, one trace
    for i in range(1,100):
        aux = tf.matmul(x,aux)/i
        result = result + aux
    return result

quick_computation_with_print(x)
quick_computation_with_print(x)

# 用TensorFlow Operation编写代码: a Python loop over rows versus a vectorised reduction.
x = tf.random.uniform(shape=[100, 100], minval=-1, maxval=1, dtype=tf.dtypes.float32)

@tf.function
def function_with_for(x):
    summ = float(0)
    # expect: V2
    # expect-none: R8 - x is a Tensor argument, so AutoGraph converts this loop to a tf.while_loop
    for row in x:
        summ = summ + tf.reduce_mean(row)
    return summ

@tf.function
def vectorized_function(x):
    result = tf.reduce_mean(x, axis=0)
    return tf.reduce_sum(result)

print(function_with_for(x))
print(vectorized_function(x))

print(timeit.timeit(stmt="function_with_for(x)",
                    number=10,
                    globals=globals()))
print(timeit.timeit(stmt="vectorized_function(x)",
                    number=10,
                    globals=globals()))

# 避免引用全局变量: the global y is frozen at trace time.
x = tf.Variable(2, dtype=tf.dtypes.float32)
y = 2

@tf.function
def power(x):
    # expect-none: C1 - the trap shown on purpose: `power` is defined again below with `y` as an argument (a before-and-after lesson)
    return tf.pow(x,y)

print(power(x))

y = 3

print(power(x))

# The fix: pass a tf.Variable as an argument.
x = tf.Variable(2, dtype=tf.dtypes.float32)
y = tf.Variable(2, dtype=tf.dtypes.float32)

@tf.function
def power(x,y):
    # expect-none: C1 - y is an argument (a tf.Variable), not a captured global
    return tf.pow(x,y)

print(power(x,y))

y.assign(3)

print(power(x,y))

# Debugging @tf.function: a type error ...
x = tf.Variable(1, dtype = tf.dtypes.float32)
y = tf.Variable(1, dtype = tf.dtypes.int32)

try:  # added: the article shows this line failing; catch it so the program continues
    z = tf.add(x,y)
except (tf.errors.InvalidArgumentError, TypeError, ValueError) as e:
    print("type error (expected):", type(e).__name__)

y = tf.cast(y, tf.dtypes.float32)
z = tf.add(x, y)
tf.print(z) # 2

# ... and a shape error.
x = tf.random.uniform(shape=[100, 100], minval=-1, maxval=1, dtype=tf.dtypes.float32)
y = tf.random.uniform(shape=[1, 100], minval=-1, maxval=1, dtype=tf.dtypes.float32)

try:  # added: the article shows this line failing; catch it so the program continues
    z = tf.matmul(x,y)
except (tf.errors.InvalidArgumentError, ValueError) as e:
    print("shape error (expected):", type(e).__name__)
