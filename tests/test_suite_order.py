"""The suite's own scheduling: files with the most TensorFlow / slow tests go out first (so that
scripts/test's parallel run does not start a long file last), each file's tests kept in order."""
from types import SimpleNamespace

from tests.conftest import _heaviest_files_first


def item(nodeid, *marks):
    return SimpleNamespace(nodeid=nodeid, keywords=set(marks))


def test_heavy_files_go_first_and_each_file_keeps_its_order():
    items = [item("tests/a.py::t1"), item("tests/a.py::t2"),
             item("tests/b.py::t1", "tf"), item("tests/b.py::t2[x::y]"),
             item("tests/c.py::t1", "slow"), item("tests/c.py::t2", "tf"), item("tests/c.py::t3"),
             item("tests/d.py::t1")]
    _heaviest_files_first(items)
    assert [i.nodeid for i in items] == [
        "tests/c.py::t1", "tests/c.py::t2", "tests/c.py::t3",   # two heavy tests
        "tests/b.py::t1", "tests/b.py::t2[x::y]",               # one
        "tests/a.py::t1", "tests/a.py::t2", "tests/d.py::t1",   # none: collection order
    ]
