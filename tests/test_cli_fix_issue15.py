"""Issue 15 points 7, 8, 11: `tfperf check --fix` writes back in the file's encoding and BOM,
reaches its fixed point in one run, and special files neither hang nor exhaust memory."""
import os
import textwrap

import pytest

from tfperf_lsp.cli import main
from tfperf_lsp.files import read_source

FIXABLE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function(experimental_relax_shapes=True)
    def f(x):
        return x * 2
    """
)


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # TFP106 is opt-in: its rename is the example of a fix here
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    return tmp_path


def test_fix_keeps_a_latin1_coding_declaration(here):
    text = "# -*- coding: latin-1 -*-\n" + FIXABLE + "NAME = 'café'\n"
    (here / "l.py").write_bytes(text.encode("latin-1"))
    main(["check", "--fix", "l.py"])
    data = (here / "l.py").read_bytes()
    assert b"reduce_retracing" in data  # the fix landed
    assert b"'caf\xe9'" in data and "Ã".encode("latin-1") not in data


def test_fix_keeps_a_utf8_byte_order_mark(here):
    (here / "b.py").write_bytes(b"\xef\xbb\xbf" + FIXABLE.encode())
    main(["check", "--fix", "b.py"])
    data = (here / "b.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport tensorflow") and b"reduce_retracing" in data


def blocks(n):
    block = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def g{i}(x, step):
            return x * tf.cast(step, tf.float32)

        for step in range(3):
            g{i}(tf.ones([2]), step)
        """
    )
    return "".join(block.format(i=i) for i in range(n))


def nested(depth):
    lines, indent = ["import tensorflow as tf", ""], ""
    for i in range(depth):
        lines.append(f"{indent}for i{i} in range(2):")
        indent += "    "
    lines += [f"{indent}f = tf.function(lambda x: x * 2)", f"{indent}f(tf.ones([2]))"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", [blocks(4), nested(90)], ids=["re-imports in blocks", "90 nested loops"])
def test_one_fix_run_reaches_the_fixed_point(here, capsys, text):
    (here / "x.py").write_text(text)
    main(["check", "--fix", "--unsafe-fixes", "x.py"])
    once = (here / "x.py").read_text()
    assert once.count("import tensorflow as tf") == text.count("import tensorflow as tf")
    capsys.readouterr()
    assert main(["check", "--fix", "--unsafe-fixes", "x.py"]) == 0  # nothing left to find
    assert (here / "x.py").read_text() == once
    assert "fix not applied" not in capsys.readouterr().err


def test_a_fifo_named_py_is_skipped_not_waited_on(here, capsys):
    os.mkfifo(here / "pipe.py")
    (here / "ok.py").write_text("x = 1\n")
    assert main(["check", "."]) == 2
    assert "pipe.py: skipped: not a regular file" in capsys.readouterr().err


def test_a_link_to_dev_zero_is_skipped(here, capsys):
    os.symlink("/dev/zero", here / "zero.py")
    assert read_source(str(here / "zero.py")).message == "skipped: not a regular file"
    assert main(["check", "zero.py"]) == 2
    assert "zero.py: skipped: not a regular file" in capsys.readouterr().err
    assert main(["check", "."]) == 2  # found by walking the folder: the same
    assert "zero.py: skipped: not a regular file" in capsys.readouterr().err
