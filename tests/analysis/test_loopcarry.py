"""Whether a loop's ``model.predict(x)`` input comes from an earlier iteration, and grows."""
import ast
import textwrap

import pytest

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.loopcarry import LoopFlow
from tfperf_lsp.analysis.source import SourceText


def carry(body: str):
    """The carry of ``x`` in the ``predict(x)`` call of the first loop of ``body``."""
    source = SourceText("import numpy as np\nimport tensorflow as tf\n" + textwrap.dedent(body))
    facts = ModuleFacts(source.parse(), source)
    loop = next(n for n in ast.walk(facts.tree) if isinstance(n, (ast.For, ast.While)))
    call = next(c for c in facts.calls if isinstance(c.func, ast.Attribute) and c.func.attr == "predict")
    result = LoopFlow(facts, loop).carry(call.args[0])
    return result.carried, result.grows


@pytest.mark.parametrize("body, expected", [
    # this iteration's item, rebuilt from itself: not carried
    ("for x in data:\n    x = x.reshape(1, -1)\n    model.predict(x)\n", (False, False)),
    # set before the loop and never changed: the same every time
    ("x = np.zeros((1, 4))\nfor _ in range(9):\n    model.predict(x)\n", (False, False)),
    # appended to after the call: carried, and longer every time
    ("for _ in range(9):\n    x = np.array([tokens])\n    y = model.predict(x)\n    tokens.append(int(y.argmax()))\n", (True, True)),
    # rebound from itself with more appended
    ("for _ in range(9):\n    y = model.predict(seq)\n    seq = tf.concat([seq, y], axis=1)\n", (True, True)),
    # a window that drops what it appends: carried, one length
    ("for _ in range(9):\n    y = model.predict(w)\n    w = np.append(w[:, 1:], [[y]], axis=1)\n", (True, False)),
    ("for _ in range(9):\n    y = model.predict(np.array([p]))\n    p.append(1)\n    p = p[1:]\n", (True, False)),
    # the prediction is written into the table the input is read from
    ("for i in range(9):\n    x = table['y'][i:i + 3]\n    y = model.predict(x)\n    table['y'][i + 3] = y\n", (True, False)),
    # a binding under an if may not run: the value may be the last iteration's
    ("for i in range(9):\n    if i % 2:\n        x = data[i]\n    model.predict(x)\n", (True, False)),
    # a growing text padded to a fixed length keeps one shape
    ("for _ in range(9):\n    t = tf.keras.utils.pad_sequences([ids], maxlen=8)\n    y = model.predict(t)\n    ids.append(1)\n",
     (True, False)),
    # x = model.predict(x): the x read is the one from before the call
    ("for _ in range(9):\n    x = model.predict(x)\n", (True, False)),
    # a window that deletes its first row, then stacks the prediction below: one length
    ("for _ in range(9):\n    y = model.predict(np.expand_dims(x, 0))\n    x = np.delete(x, 0, axis=0)\n    x = np.vstack([x, y])\n",
     (True, False)),
    # the last item of a growing list: one item, one shape
    ("for _ in range(9):\n    y = model.predict(preds[-1])\n    preds.append(y)\n", (True, False)),
    # a growing text through a tokenizer that does not pad: grows; through a layer tfperf does not know: unsure, so not said
    ("for _ in range(9):\n    t = tok.texts_to_sequences([text])[0]\n    y = model.predict([t])\n    text += 'a'\n", (True, True)),
    ("for _ in range(9):\n    t = vectorize([text])\n    y = model.predict(t)\n    text += 'a'\n", (True, False)),
    # the object's state, appended to after the call
    ("for _ in range(9):\n    y = model.predict(np.array([self.history]))\n    self.history.append(1)\n", (True, False)),
    # a batch gathered step by step, read when full and then started afresh: carried, but no longer each time
    ("while not done:\n    batch.append(s)\n    if len(batch) >= 16 or done:\n        x = np.array(batch)\n"
     "        v = model.predict(x)\n        batch = []\n", (True, False)),
    # started afresh only in another branch (not after every read): still longer each time
    ("for i in range(9):\n    batch.append(i)\n    v = model.predict(np.array(batch))\n    if i == 99:\n        batch = []\n",
     (True, True)),
    # np.append is NumPy's, not a list being appended to
    ("for x in data:\n    y = model.predict(x)\n    out = np.append(out, y)\n", (False, False)),
])
def test_carry(body, expected):
    assert carry(body) == expected


def test_an_input_made_from_the_loop_item_is_recognised_as_per_item():
    source = SourceText(textwrap.dedent("""
        import numpy as np
        for transition in batch_samples:
            s, a, r = transition
            model.predict(s.reshape(1, -1))
        for _ in range(9):
            model.predict(x)
    """))
    facts = ModuleFacts(source.parse(), source)
    first, second = [n for n in ast.walk(facts.tree) if isinstance(n, ast.For)]
    calls = [c for c in facts.calls if isinstance(c.func, ast.Attribute) and c.func.attr == "predict"]
    assert LoopFlow(facts, first).carry(calls[0].args[0]).from_item
    assert not LoopFlow(facts, second).carry(calls[1].args[0]).from_item
