"""Regressions found on real code (tensorflow/examples, addons, agents; Apache-2.0) that need
more than one file. The one-file cases are cells of the rules' fixture files
(tests/rules/fixtures/TFP103.py ...), with the real file's path as ``path=`` and what the other
rules report as ``others=``."""
import textwrap

from tfperf_lsp.engine import analyze


def test_padded_batches_built_in_an_imported_module_of_the_folder(tmp_path):
    """The dataset is padded in dataset.py, the step is in train.py (tutorial repositories)."""
    (tmp_path / "dataset.py").write_text(
        "import tensorflow as tf\n\ndef make(lines):\n    return tf.data.Dataset.from_tensor_slices(lines).padded_batch(32)\n"
    )
    train = tmp_path / "train.py"
    code = textwrap.dedent(
        """\
        import tensorflow as tf
        from dataset import make

        @tf.function
        def train_step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        for x in make(lines):
            train_step(x)
        """
    )
    train.write_text(code)
    codes = sorted(f.code for f in analyze(code, str(train)).findings)
    assert codes == ["TFP103"]  # retraces per length; and no XLA advice (it would compile per length)


_TRAIN_WITH_AN_IMPORTED_MODEL = """\
import tensorflow as tf
from modules.models import build_model

model = build_model()
optimizer = tf.keras.optimizers.Adam()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for epoch in range(100):
    for x, y in dataset:
        loss = train_step(x, y)
        print(loss.numpy())
"""


def _train_beside(tmp_path, builder_body: str) -> list[str]:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("")
    (tmp_path / "modules" / "models.py").write_text(
        "import tensorflow as tf\n\n\ndef build_model():\n" + textwrap.indent(builder_body, "    "))
    train = tmp_path / "train.py"
    train.write_text(_TRAIN_WITH_AN_IMPORTED_MODEL)
    analysis = analyze(_TRAIN_WITH_AN_IMPORTED_MODEL, str(train), workspace=WorkspaceIndex([str(tmp_path)]))
    return sorted(f.code for f in analysis.findings)


def test_a_step_through_a_pretrained_network_built_in_another_module(tmp_path):
    """retinaface-tf2: ``RetinaFaceModel`` (modules/models.py) sits on keras.applications'
    ResNet50, whose convolutions set the pace: no XLA hint, no per-step wait hint."""
    codes = _train_beside(tmp_path, textwrap.dedent("""\
        def backbone(x):
            return tf.keras.applications.ResNet50(include_top=False, weights="imagenet")(x)
        inputs = tf.keras.Input([224, 224, 3])
        return tf.keras.Model(inputs, tf.keras.layers.Dense(4)(backbone(inputs)))
        """))
    assert "TFP501" not in codes and "TFP405" not in codes


def test_a_step_through_a_network_built_from_scratch_in_another_module(tmp_path):
    codes = _train_beside(tmp_path, textwrap.dedent("""\
        inputs = tf.keras.Input([8])
        return tf.keras.Model(inputs, tf.keras.layers.Dense(4)(inputs))
        """))
    assert "TFP501" in codes and "TFP405" in codes


_CONVOLUTIONAL_RESNET = """\
import tensorflow as tf


class ResNet18(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(64, 7, strides=2, padding="same")
        self.head = tf.keras.layers.Dense(10)

    def call(self, x, training=False):
        return self.head(tf.reduce_mean(tf.nn.relu(self.conv(x)), axis=[1, 2]))
"""

_TRAIN_A_RESNET = """\
# tfperf: device={device}
import tensorflow as tf
from resnet import ResNet18

model = {construction}
optimizer = tf.keras.optimizers.Adam()


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, model(images, training=True), from_logits=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for epoch in range(100):
    for images, labels in train_dataset:
        train_step(images, labels)
"""


def _resnet_codes(tmp_path, device: str, construction: str = "ResNet18()", factory: str = "") -> list[str]:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    (tmp_path / "resnet.py").write_text(_CONVOLUTIONAL_RESNET)
    code = _TRAIN_A_RESNET.format(device=device, construction=construction) + factory
    train = tmp_path / "main.py"
    train.write_text(code)
    return sorted(f.code for f in analyze(code, str(train), workspace=WorkspaceIndex([str(tmp_path)])).findings)


def test_no_xla_hint_on_a_cpu_for_a_convolutional_network_built_in_another_module(tmp_path):
    """TensorFlow2.0-Examples' ResNet18 (resnet.py) trained from main.py: on a 2-core CPU judges
    measured 998 -> 1441 ms and 555 -> 1196 ms a step with jit_compile=True."""
    assert "TFP501" not in _resnet_codes(tmp_path, "cpu")
    assert "TFP501" in _resnet_codes(tmp_path, "gpu cc=8.6")  # on a GPU XLA may fuse around them


def test_a_factory_of_the_file_that_calls_the_imported_builder_is_followed(tmp_path):
    """calmisential/TensorFlow2.0_ResNet: ``model = get_model()``, whose body picks a
    ``resnet_18()`` imported from models/resnet.py."""
    factory = "\n\ndef get_model():\n    return ResNet18()\n"
    assert "TFP501" not in _resnet_codes(tmp_path / "", "cpu", "get_model()", factory)


_UNET = """\
from tensorflow.keras.layers import Dense, Input
from tensorflow.keras.models import Model


def Unet(n):
    x = Input((4,))
    return Model(x, Dense(n)(x))
"""

_DETECT = """\
import numpy as np

from nets.unet import Unet as unet


class Detector(object):
    def __init__(self):
        self.model = unet(2)

    def detect_image(self, image):
        image_data = np.expand_dims(np.array(image, np.float32), 0)
        return self.model.predict(image_data)


detector = Detector()
for frame in frames():
    detector.detect_image(frame)
"""


def test_predict_on_a_tf_keras_model_built_in_another_file_of_a_file_without_tensorflow(tmp_path):
    """bubbliiiing/unet-tf2: unet.py imports no TensorFlow; its model comes from nets/unet.py,
    which builds a tf.keras Model. Its size is not visible: a graph of it is named first, no fix."""
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "unet.py").write_text(_UNET)
    detect = tmp_path / "detect.py"
    detect.write_text(_DETECT)
    findings = analyze(_DETECT, str(detect), workspace=WorkspaceIndex([str(tmp_path)])).findings
    assert [(f.code, f.span.start.line + 1) for f in findings] == [("TFP801", 12)]
    assert "`tf.function(self.model)` made once" in findings[0].message and findings[0].fix_title is None
    # a standalone Keras builder (no TensorFlow in the project file either): silent, as before
    (tmp_path / "nets" / "unet.py").write_text(_UNET.replace("tensorflow.keras", "keras"))
    assert not analyze(_DETECT, str(detect), workspace=WorkspaceIndex([str(tmp_path)])).findings


_EAGER_POSE_STEP = """\
import tensorflow as tf
from core.make_ground_truth import GroundTruth
from core.metric import PCK
from core import sampling

model = tf.keras.Sequential([tf.keras.layers.Dense(17)])
optimizer = tf.keras.optimizers.Adam()
pck = PCK()


def train_step(batch):
    gt = GroundTruth(batch)
    images, target = gt.get_ground_truth()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images) - target))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    accuracy = pck(model(images), target)
    negatives = sampling.negatives(target)


for epoch in range(100):
    for batch in dataset:
        train_step(batch)
"""


def _eager_step_beside(tmp_path, ground_truth: str, metric: str, sampling: str):
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "make_ground_truth.py").write_text(textwrap.dedent(ground_truth))
    (tmp_path / "core" / "metric.py").write_text(textwrap.dedent(metric))
    (tmp_path / "core" / "sampling.py").write_text(textwrap.dedent(sampling))
    train = tmp_path / "train.py"
    train.write_text(_EAGER_POSE_STEP)
    analysis = analyze(_EAGER_POSE_STEP, str(train), workspace=WorkspaceIndex([str(tmp_path)]))
    return [f for f in analysis.findings if f.code == "TFP301"]


def test_an_eager_step_whose_helpers_in_other_modules_use_numpy(tmp_path):
    """HRNet_Pose_Estimation_TensorFlow2 (round 58): the step builds its ground truth with a
    class of core/ that calls ``.numpy()``, and scores with a NumPy metric; tf_geometric's
    ``negative_sampling`` draws with ``.astype``. Decorated as the finding said, the step fails:
    the finding names what blocks it and offers no fix."""
    [finding] = _eager_step_beside(
        tmp_path,
        """\
        import numpy as np

        class GroundTruth:
            def __init__(self, batch):
                self.batch = batch

            def get_ground_truth(self):
                names = self.batch["name"].numpy()
                return self.batch["image"], np.zeros((len(names), 17))
        """,
        """\
        import numpy as np

        class PCK:
            def __call__(self, output, target):
                return np.array(output) - np.array(target)
        """,
        """\
        def negatives(target):
            return target.astype("int32")
        """,
    )
    assert "calls gt.get_ground_truth(), which calls .numpy()" in finding.message
    assert "calls pck(), which calls numpy.array" in finding.message
    assert "calls sampling.negatives(), which calls .astype()" in finding.message
    assert finding.fix_title is None


def test_an_eager_step_whose_helpers_in_other_modules_are_graph_safe(tmp_path):
    """The same step with TensorFlow-only helpers: decorating it is the whole fix."""
    [finding] = _eager_step_beside(
        tmp_path,
        """\
        import tensorflow as tf

        class GroundTruth:
            def __init__(self, batch):
                self.batch = batch

            def get_ground_truth(self):
                return self.batch["image"], tf.zeros([17])
        """,
        """\
        import tensorflow as tf

        class PCK:
            def __call__(self, output, target):
                return tf.reduce_mean(output - target)
        """,
        """\
        import tensorflow as tf

        def negatives(target):
            return tf.random.shuffle(target)
        """,
    )
    assert "graph-safe" not in finding.message
    assert finding.fix_title == "Decorate with @tf.function"


def test_predict_of_a_model_class_imported_from_another_file_that_defines_its_own(tmp_path):
    """horoiwa/deep_reinforcement_learning_gallery (round 59): ``QNetwork`` in models.py defines
    ``predict`` as ``self(states).numpy()``; an agent calls ``self.q_network.predict(state)`` on
    every environment step. Not Keras' predict: nothing to report. The same agent with a plain
    Keras model is reported."""
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    model = "import tensorflow as tf\n\n\nclass QNetwork(tf.keras.Model):\n    def __init__(self):\n        super().__init__()\n" \
            "        self.dense = tf.keras.layers.Dense(2)\n\n    def call(self, x):\n        return self.dense(x)\n"
    (tmp_path / "models.py").write_text(model + "\n    def predict(self, states):\n        return self(states).numpy()\n")
    (tmp_path / "plain.py").write_text(model)
    agent = textwrap.dedent(
        """\
        import gym
        import numpy as np
        import tensorflow as tf
        from {module} import QNetwork


        class Agent:
            def __init__(self):
                self.q_network = QNetwork()
                self.env = gym.make("CartPole-v1")

            def act(self, state):
                return int(np.argmax(self.q_network.predict(state[None])))

            def play(self, episodes):
                for _ in range(episodes):
                    state, done = self.env.reset(), False
                    while not done:
                        state, reward, done, info = self.env.step(self.act(state))


        Agent().play(1000)
        """
    )
    codes = {}
    for module in ("models", "plain"):
        train = tmp_path / f"agent_{module}.py"
        code = agent.format(module=module)
        train.write_text(code)
        codes[module] = [f.code for f in analyze(code, str(train), workspace=WorkspaceIndex([str(tmp_path)])).findings]
    assert "TFP801" not in codes["models"]
    assert "TFP801" in codes["plain"]


def test_an_agent_update_that_samples_a_replay_buffer_of_another_file(tmp_path):
    """horoiwa's DQN (round 59): ``update_network`` draws its minibatch from
    ``self.replay_buffer`` (a class of buffer.py using ``np.random.choice``). Decorated as it is,
    the draw would run once, at trace time, and every update would train on that one minibatch:
    the finding names the draw and offers no fix."""

    (tmp_path / "buffer.py").write_text(textwrap.dedent(
        """\
        import numpy as np


        class ReplayBuffer:
            def __init__(self):
                self.buffer = []

            def get_minibatch(self, batch_size):
                indices = np.random.choice(np.arange(len(self.buffer)), replace=False, size=batch_size)
                return np.stack([self.buffer[i] for i in indices])
        """))
    code = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf
        from buffer import ReplayBuffer


        class Agent:
            def __init__(self):
                self.replay_buffer = ReplayBuffer()
                self.qnet = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                self.optimizer = tf.keras.optimizers.Adam()

            def update_network(self):
                states = self.replay_buffer.get_minibatch(32)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self.qnet(states))
                grads = tape.gradient(loss, self.qnet.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.qnet.trainable_variables))


        agent = Agent()
        for step in range(100000):
            agent.update_network()
        """
    )
    finding = _the_eager_step_finding(tmp_path, "main.py", code)
    assert "calls self.replay_buffer.get_minibatch(), which calls numpy.random.choice" in finding.message
    assert finding.fix_title is None


def test_an_eager_step_whose_loss_builds_its_ground_truth_with_numpy_two_files_away(tmp_path):
    """calmiLovesAI/CenterNet_TensorFlow2 (round 60): train.py's step calls
    ``post_process.training_procedure`` (core/centernet.py), which makes ``GT(labels)`` of
    data/dataloader.py and fills NumPy heatmaps. Decorated as it is, the step fails."""

    _packages(tmp_path, *("core", "data"))
    (tmp_path / "data" / "dataloader.py").write_text(textwrap.dedent(
        """\
        import numpy as np


        class GT:
            def __init__(self, batch_labels):
                self.batch_labels = batch_labels

            def get_gt_values(self):
                heatmap = np.zeros(shape=(len(self.batch_labels), 128, 128, 20), dtype=np.float32)
                for i, label in enumerate(self.batch_labels):
                    heatmap[i, 0, 0, 0] = label[0]
                return heatmap
        """))
    (tmp_path / "core" / "centernet.py").write_text(textwrap.dedent(
        """\
        import tensorflow as tf
        from data.dataloader import GT


        class PostProcessing:
            @staticmethod
            def training_procedure(batch_labels, pred):
                gt = GT(batch_labels)
                heatmap = gt.get_gt_values()
                return tf.reduce_mean(tf.square(pred - heatmap))
        """))
    code = textwrap.dedent(
        """\
        import tensorflow as tf
        from core.centernet import PostProcessing

        model = tf.keras.Sequential([tf.keras.layers.Conv2D(20, 3, padding="same")])
        optimizer = tf.keras.optimizers.Adam()
        post_process = PostProcessing()


        def train_step(images, labels):
            with tf.GradientTape() as tape:
                loss = post_process.training_procedure(labels, model(images))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


        for epoch in range(50):
            for images, labels in dataset:
                train_step(images, labels)
        """
    )
    finding = _the_eager_step_finding(tmp_path, "train.py", code)
    assert "calls post_process.training_procedure(), which calls gt.get_gt_values(), which calls numpy.zeros" in finding.message
    assert finding.fix_title is None


def test_an_eager_step_whose_model_holds_a_layer_of_another_file_that_calls_numpy(tmp_path):
    """StephenBo-China/recommendation_system_sort_model (round 61): the notebook's step calls a DIN
    model (model/DIN.py) whose ``call`` applies ``self.hist_at = attention(...)``, a layer of
    layers/attention.py that prints ``outputs.numpy().shape``: decorated as it is, the step fails."""

    _packages(tmp_path, *("model", "layers"))
    (tmp_path / "layers" / "attention.py").write_text(textwrap.dedent(
        """\
        import tensorflow as tf


        class attention(tf.keras.layers.Layer):
            def call(self, queries, keys):
                outputs = tf.matmul(queries, keys, transpose_b=True)
                print("outputs:" + str(outputs.numpy().shape))
                return tf.matmul(tf.nn.softmax(outputs), keys)
        """))
    (tmp_path / "model" / "DIN.py").write_text(textwrap.dedent(
        """\
        import tensorflow as tf
        from layers.attention import attention


        class DIN(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.hist_at = attention()
                self.fc = tf.keras.layers.Dense(1)

            def call(self, target, history):
                return self.fc(self.hist_at(target, history))
        """))
    code = textwrap.dedent(
        """\
        import tensorflow as tf
        from model.DIN import DIN

        model = DIN()
        optimizer = tf.keras.optimizers.Adam()


        def train_one_step(target, history, label):
            with tf.GradientTape() as tape:
                logit = model(target, history)
                loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=logit, labels=label))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


        for epoch in range(50):
            for target, history, label in dataset:
                train_one_step(target, history, label)
        """
    )
    finding = _the_eager_step_finding(tmp_path, "train.py", code)
    assert "calls model(), which calls self.hist_at(), which calls .numpy()" in finding.message


def _packages(tmp_path, *names: str) -> None:
    """Empty packages beside the step's file (``core/__init__.py``, ...)."""
    for package in names:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")


def _the_eager_step_finding(tmp_path, name: str, code: str):
    """The one TFP301 finding of ``code``, written as ``name`` in ``tmp_path`` and analysed with
    that folder as the workspace (so that its imports of the other files resolve)."""
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    path = tmp_path / name
    path.write_text(code)
    [finding] = [f for f in analyze(code, str(path), workspace=WorkspaceIndex([str(tmp_path)])).findings if f.code == "TFP301"]
    return finding
