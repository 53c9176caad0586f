"""Seed 004: "Why is TensorFlow 2 much slower than TensorFlow 1?" - Keras training loops.

Source article (the program as it wrote it, smaller sizes, ported to TF 2.21):
  "为什么TensorFlow 2比TensorFlow 1慢得多?" / "Why is TensorFlow 2 much slower than TensorFlow 1?"
  (a bilingual copy of a Stack Overflow question and its two long answers by OverLordGoldDragon).

What it demonstrates
  A. The question's benchmark: standalone `keras` imports, a small Conv1D model and a medium
     BiLSTM+Conv1D model compiled with Adam(lr=1e-4), timed with a generic
     `timeit(model.train_on_batch, iterations, X, y)` helper on one numpy batch.
  B. The answer's "[Major] DON'T: tf.python.keras" (layers/models/optimizers imported from
     `tensorflow.python.keras`). The article names these imports but prints no program for them;
     this section is the minimal program a reader would have written with them.
  C. The answer's factor 7, "model(x) vs. model.predict(x)": predict called in a loop on one small
     batch versus calling the model directly (also named, not printed, in the article).
  D. The answer's full benchmark code: tensorflow.keras imports, reset_seeds() with
     K.clear_session(), small/medium/large Conv1D models, and test_all(fit=True, tf_dataset=False),
     which builds a model per (model, data) size and calls model.fit repeatedly on numpy arrays.

Catalog ids it should trigger (see the `# expect:` comments)
  K4  every `tensorflow.python.keras` import in section B.
  K1  `model_small.predict(X, verbose=0)` inside a loop (section C).
  G1  the graph-mode opportunity "eager model call in a hot loop" (no catalog id; this
      repository's answer key calls it G1): `model_small(X)` in a loop (section C).
  K5  the answer's make_model_small compile(), a small model then trained with fit() in test_all.
  Traps (`# expect-none:`): `keras` (Keras 3) imports are not K4; the question's small model is only
  trained with train_on_batch, where steps_per_execution has no effect (not K5); the legacy
  tensorflow.python.keras compile() has no jit_compile argument (not X2); the functional-API loops
  `for filters in [...]: x = Conv1D(...)(x)` build layers on symbolic tensors once (not G1);
  test_all builds a new model per configuration on purpose and reset_seeds() calls
  K.clear_session() every time (not R6). TensorFlow's own retracing warning ("5 out of the last
  17 calls to ...one_step_on_data triggered tf.function retracing") still fires in test_all: it is
  keyed by __code__, so new model instances trip it - the false alarm catalog section 3 says tfperf
  must not repeat.
  Not claimed: the train_on_batch / fit loops of sections A and D run inside the generic
  `timeit(func, iterations, *args)` helper (`func(*args)`), so no call to train_on_batch or fit
  is visible in a loop; rule tests should not require K2 there.

Size reductions (the article's sizes would take hours on 2 CPU cores; every changed number has an
`# article:` comment)
  A. batch_shape (32, 400, 16) -> (32, 40, 16); Conv1D kernel 400 -> 40; LSTM units 512 -> 16;
     Dense 256/128 -> 32/16; iterations 200 -> 10 and 10 -> 2.
  D. sequence lengths 140/1400/14000 -> 14/140/1400 and every kernel size divided by 10 (so the
     'valid' convolutions still fit); filters divided by 4; the large model's 40 repeated Conv1D
     layers -> 4; iterations [200, 100, 50] -> [3, 2, 2].

Ports to TF 2.21 / Keras 3
  - `Adam(lr=1e-4)`: Keras 3 rejects `lr` ("Argument(s) not recognized") -> `Adam(learning_rate=1e-4)`.
  - The question calls make_data/make_small_model/timeit before defining them (the functions are
    listed after the script); the definitions are moved above their use.
  - `tensorflow.python.keras` (section B) still imports on TF 2.21 and its legacy models train,
    but its optimizers module no longer exports `Adam`; the model is compiled with the string
    'adam'. If the legacy package is missing (newer TF), section B is skipped.
  - `tf.compat.v1.reset_default_graph()` is kept (it still runs eagerly in TF 2.21).
  - `make_data_tf` is kept exactly as written, including the article's trailing comma that makes
    `data` a 1-tuple; it is not executed because test_all is called with tf_dataset=False.
"""
# ---------------------------------------------------------------------------------------------
# A. The question's benchmark code
# ---------------------------------------------------------------------------------------------
# use tensorflow.keras... to benchmark tf.keras; used GPU for all above benchmarks
# expect-none: K4 - `keras` is Keras 3, the supported import
from keras.layers import Input, Dense, LSTM, Bidirectional, Conv1D
from keras.layers import Flatten, Dropout
from keras.models import Model
from keras.optimizers import Adam
import keras.backend as K
import numpy as np
from time import time

def timeit(func, iterations, *args):
    t0 = time()
    for _ in range(iterations):
        func(*args)
    print("Time/iter: %.4f sec" % ((time() - t0) / iterations))

def make_small_model(batch_shape):
    ipt   = Input(batch_shape=batch_shape)
    x     = Conv1D(128, 40, strides=4, padding='same')(ipt)  # article: kernel 400
    x     = Flatten()(x)
    x     = Dropout(0.5)(x)
    x     = Dense(64, activation='relu')(x)
    out   = Dense(1,  activation='sigmoid')(x)
    model = Model(ipt, out)
    # expect-none: K5 - this model is only trained with train_on_batch, where steps_per_execution has no effect
    model.compile(Adam(learning_rate=1e-4), 'binary_crossentropy')  # Port: lr= -> learning_rate=
    return model

def make_medium_model(batch_shape):
    ipt   = Input(batch_shape=batch_shape)
    x     = Bidirectional(LSTM(16, activation='relu', return_sequences=True))(ipt)  # article: 512
    x     = LSTM(16, activation='relu', return_sequences=True)(x)  # article: 512
    x     = Conv1D(128, 40, strides=4, padding='same')(x)  # article: kernel 400
    x     = Flatten()(x)
    x     = Dense(32, activation='relu')(x)  # article: 256
    x     = Dropout(0.5)(x)
    x     = Dense(16, activation='relu')(x)  # article: 128
    x     = Dense(64,  activation='relu')(x)
    out   = Dense(1,   activation='sigmoid')(x)
    model = Model(ipt, out)
    model.compile(Adam(learning_rate=1e-4), 'binary_crossentropy')  # Port: lr= -> learning_rate=
    return model

def make_data(batch_shape):
    return np.random.randn(*batch_shape), np.random.randint(0, 2, (batch_shape[0], 1))

batch_shape = (32, 40, 16)  # article: (32, 400, 16)
X, y = make_data(batch_shape)

model_small = make_small_model(batch_shape)
model_small.train_on_batch(X, y)  # skip first iteration which builds graph
timeit(model_small.train_on_batch, 10, X, y)  # article: 200

K.clear_session()  # in my testing, kernel was restarted instead

model_medium = make_medium_model(batch_shape)
model_medium.train_on_batch(X, y)  # skip first iteration which builds graph
timeit(model_medium.train_on_batch, 2, X, y)  # article: 10

# ---------------------------------------------------------------------------------------------
# B. The answer's "[Major] DON'T: tf.python.keras" - layers, models, optimizers imported from the
#    private legacy package (named in the answer; this is the program a reader would write).
# ---------------------------------------------------------------------------------------------
try:
    # expect: K4
    from tensorflow.python.keras.layers import Dense as LegacyDense
    # expect-none: K4 - one finding per file, on the first import (its fix moves every one)
    from tensorflow.python.keras.models import Sequential as LegacySequential
    # expect-none: K4 - one finding per file, on the first import (its fix moves every one)
    from tensorflow.python.keras import optimizers as legacy_optimizers
except ImportError:
    # Port: the legacy package may be deleted in newer TF (tensorflow/tensorflow PR #58169).
    LegacySequential = None

if LegacySequential is not None:
    legacy_model = LegacySequential([LegacyDense(64, activation='relu', input_shape=(16,)),
                                     LegacyDense(1, activation='sigmoid')])
    # Port: legacy optimizers no longer export Adam on TF 2.21; the string still resolves to it.
    # expect-none: X2 - the legacy tensorflow.python.keras compile() has no jit_compile argument
    legacy_model.compile('adam', 'binary_crossentropy')
    print('legacy optimizer:', type(legacy_optimizers.get('adam')).__name__)
    x_legacy, y_legacy = np.random.randn(32, 16), np.random.randint(0, 2, (32, 1))
    legacy_model.train_on_batch(x_legacy, y_legacy)  # skip first iteration which builds graph
    timeit(legacy_model.train_on_batch, 10, x_legacy, y_legacy)
else:
    print('tensorflow.python.keras is not available; section B skipped')

# ---------------------------------------------------------------------------------------------
# C. The answer's factor 7: model(x) vs. model.predict(x)
# ---------------------------------------------------------------------------------------------
model_small = make_small_model(batch_shape)
model_small.predict(X, verbose=0)  # warm-up
t0 = time()
for _ in range(10):
    # expect: K1
    preds = model_small.predict(X, verbose=0)
print("predict   Time/iter: %.4f sec" % ((time() - t0) / 10))
t0 = time()
for _ in range(10):
    # expect-none: G1 - ten calls written down: too few for a graph to pay back (TFP302 stays silent at 100 or fewer)
    preds = model_small(X)
print("model(x)  Time/iter: %.4f sec" % ((time() - t0) / 10))

# ---------------------------------------------------------------------------------------------
# D. The answer's benchmark code
# ---------------------------------------------------------------------------------------------
import numpy as np
import tensorflow as tf
import random
from termcolor import cprint
from time import time

# expect-none: K4 - tensorflow.keras is the public tf.keras API (Keras 3 in TF 2.21)
from tensorflow.keras.layers import Input, Dense, Conv1D
from tensorflow.keras.layers import Dropout, GlobalAveragePooling1D
from tensorflow.keras.models import Model
from tensorflow.keras.optimizers import Adam
import tensorflow.keras.backend as K
#from keras.layers import Input, Dense, Conv1D
#from keras.layers import Dropout, GlobalAveragePooling1D
#from keras.models import Model
#from keras.optimizers import Adam
#import keras.backend as K

#tf.compat.v1.disable_eager_execution()
#tf.enable_eager_execution()

def reset_seeds(reset_graph_with_backend=None, verbose=1):
    if reset_graph_with_backend is not None:
        K = reset_graph_with_backend
        K.clear_session()
        tf.compat.v1.reset_default_graph()
        if verbose:
            print("KERAS AND TENSORFLOW GRAPHS RESET")

    np.random.seed(1)
    random.seed(2)
    if tf.__version__[0] == '2':
        tf.random.set_seed(3)
    else:
        tf.set_random_seed(3)
    if verbose:
        print("RANDOM SEEDS RESET")

print("TF version: {}".format(tf.__version__))
reset_seeds()

def timeit(func, iterations, *args, _verbose=0, **kwargs):
    t0 = time()
    for _ in range(iterations):
        func(*args, **kwargs)
        print(end='.'*int(_verbose))
    print("Time/iter: %.4f sec" % ((time() - t0) / iterations))

def make_model_small(batch_shape):
    ipt   = Input(batch_shape=batch_shape)
    x     = Conv1D(32, 4, strides=4, padding='same')(ipt)  # article: Conv1D(128, 40, ...)
    x     = GlobalAveragePooling1D()(x)
    x     = Dropout(0.5)(x)
    x     = Dense(64, activation='relu')(x)
    out   = Dense(1,  activation='sigmoid')(x)
    model = Model(ipt, out)
    # expect: K5
    model.compile(Adam(learning_rate=1e-4), 'binary_crossentropy')  # Port: lr= -> learning_rate=
    return model

def make_model_medium(batch_shape):
    ipt = Input(batch_shape=batch_shape)
    x = ipt
    # expect-none: G1 - functional-API construction on a symbolic Input; runs once per model
    for filters in [16, 32, 64, 64, 32, 16]:  # article: [64, 128, 256, 256, 128, 64]
        x  = Conv1D(filters, 2, strides=1, padding='valid')(x)  # article: kernel 20
    x     = GlobalAveragePooling1D()(x)
    x     = Dense(256, activation='relu')(x)
    x     = Dropout(0.5)(x)
    x     = Dense(128, activation='relu')(x)
    x     = Dense(64,  activation='relu')(x)
    out   = Dense(1,   activation='sigmoid')(x)
    model = Model(ipt, out)
    model.compile(Adam(learning_rate=1e-4), 'binary_crossentropy')  # Port: lr= -> learning_rate=
    return model

def make_model_large(batch_shape):
    ipt   = Input(batch_shape=batch_shape)
    x     = Conv1D(16,  40, strides=4, padding='valid')(ipt)  # article: Conv1D(64, 400, ...)
    x     = Conv1D(32, 20, strides=1, padding='valid')(x)  # article: Conv1D(128, 200, ...)
    # expect-none: G1 - functional-API construction on a symbolic tensor; runs once per model
    for _ in range(4):  # article: range(40)
        x = Conv1D(64,  1, strides=1, padding='same')(x)  # article: Conv1D(256, 12, ...)
    x     = Conv1D(128,  2, strides=2, padding='valid')(x)  # article: Conv1D(512, 20, ...)
    x     = Conv1D(257, 1, strides=2, padding='valid')(x)  # article: Conv1D(1028, 10, ...)
    x     = Conv1D(64,   1, strides=1, padding='valid')(x)  # article: Conv1D(256, 1, ...)
    x     = GlobalAveragePooling1D()(x)
    x     = Dense(256, activation='relu')(x)
    x     = Dropout(0.5)(x)
    x     = Dense(128, activation='relu')(x)
    x     = Dense(64,  activation='relu')(x)
    out   = Dense(1,   activation='sigmoid')(x)
    model = Model(ipt, out)
    model.compile(Adam(learning_rate=1e-4), 'binary_crossentropy')  # Port: lr= -> learning_rate=
    return model

def make_data(batch_shape):
    return np.random.randn(*batch_shape), \
           np.random.randint(0, 2, (batch_shape[0], 1))

def make_data_tf(batch_shape, n_batches, iters):
    data = np.random.randn(n_batches, *batch_shape),
    trgt = np.random.randint(0, 2, (n_batches, batch_shape[0], 1))
    return tf.data.Dataset.from_tensor_slices((data, trgt))#.repeat(iters)

batch_shape_small  = (32, 14,   30)  # article: (32, 140,   30)
batch_shape_medium = (32, 140,  30)  # article: (32, 1400,  30)
batch_shape_large  = (32, 1400, 30)  # article: (32, 14000, 30)

batch_shapes = batch_shape_small, batch_shape_medium, batch_shape_large
make_model_fns = make_model_small, make_model_medium, make_model_large
iterations = [3, 2, 2]  # article: [200, 100, 50]
shape_names = ["Small data",  "Medium data",  "Large data"]
model_names = ["Small model", "Medium model", "Large model"]

def test_all(fit=False, tf_dataset=False):
    for model_fn, model_name, iters in zip(make_model_fns, model_names, iterations):
        for batch_shape, shape_name in zip(batch_shapes, shape_names):
            if (model_fn is make_model_large) and (batch_shape is batch_shape_small):
                continue
            reset_seeds(reset_graph_with_backend=K)
            if tf_dataset:
                data = make_data_tf(batch_shape, iters, iters)
            else:
                data = make_data(batch_shape)
            # expect-none: R6 - a different model per configuration is the point, and reset_seeds() calls K.clear_session()
            model = model_fn(batch_shape)

            if fit:
                if tf_dataset:
                    model.train_on_batch(data.take(1))
                    t0 = time()
                    model.fit(data, steps_per_epoch=iters)
                    print("Time/iter: %.4f sec" % ((time() - t0) / iters))
                else:
                    model.train_on_batch(*data)
                    timeit(model.fit, iters, *data, _verbose=1, verbose=0)
            else:
                model.train_on_batch(*data)
                timeit(model.train_on_batch, iters, *data, _verbose=1)
            cprint(">> {}, {} done <<\n".format(model_name, shape_name), 'blue')
            del model

test_all(fit=True, tf_dataset=False)
