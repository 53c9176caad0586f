"""Static checks of the examples' answer key (no TensorFlow needed).

The `# expect:` / `# expect-gpu:` / `# expect-none:` comments in examples/*.py are the acceptance
key for tfperf's rules (format: tests/examples/examples_answer_key.py). These tests make sure the
key parses, covers every catalog id, and that each comment sits above the kind of line its rule
reports on (a loop for V1/V2/V4, a call for R1/K1, an import for K4, ...).
"""
import ast
import pathlib
import re

import pytest

from examples_answer_key import KNOWN_IDS, AnswerKeyError, parse_dir, parse_file

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
FILES = sorted(EXAMPLES.glob("*.py"))


@pytest.fixture(scope="module")
def key():
    return parse_dir(EXAMPLES)


def test_every_example_parses_as_python():
    assert FILES
    for path in FILES:
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_every_catalog_id_is_expected_somewhere(key):
    expected = {i for e in key if e.kind in ("expect", "expect-gpu", "expect-not-cpu") for i in e.ids}
    assert sorted(KNOWN_IDS - expected) == []


def test_traps_exist_for_the_catalog_false_positive_list(key):
    traps = {i for e in key if e.kind == "expect-none" for i in e.ids}
    # catalog section 4: intended Python args (R1), loop-carried/strided loops (V1), random
    # augmentation caching (D4), Keras 3 jit "auto" (X2), correct variable guard (C3)
    assert {"R1", "V1", "D4", "X2", "C3", "R8"} <= traps


def test_each_file_docstring_names_its_expected_ids(key):
    by_file = {}
    for e in key:
        if e.kind != "expect-none":
            by_file.setdefault(pathlib.Path(e.path).name, set()).update(e.ids)
    for path in FILES:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert doc, f"{path.name} has no module docstring"
        missing = sorted(i for i in by_file.get(path.name, ()) if not re.search(rf"\b{i}\b", doc))
        assert not missing, f"{path.name}: docstring does not mention {missing}"


def test_seed_files_cite_their_article():
    for i in range(5):
        [path] = [p for p in FILES if p.name.startswith(f"seed00{i}_")]
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert "Source article" in doc and "/work/" not in doc  # cited by title, not by a path outside the repository
        assert "Size reductions" in doc or "size reductions" in doc.lower()


# What the line below a comment must look like, per id (the place the rule reports).
TARGET_SHAPES = {
    "V1": r"^for |\bfor \w+ in range\(",
    "V2": r"^for ",
    "V4": r"^for ",
    "V3": r"tf\.stack\(\[.* for |tf\.map_fn\(",
    "R1": r"\w\(",
    "R3": r"\w\(",
    "R4": r"\w\(",
    "R5": r"\w\(",
    "K1": r"\.predict\(",
    "K2": r"\.train_on_batch\(",
    "K4": r"^(from|import) tensorflow\.python\.keras",
    "K5": r"\.compile\(",
    "R7": r"experimental_(relax_shapes|compile)",
    "X3": r"set_jit\(",
    "X2": r"\.compile\(",
    "D1": r"\.map\(",
    "D3": r"\.map\(",
    "D4": r"\.map\(",
    "D5": r"from_generator\(|py_function\(",
    "C2": r"print\(|np\.random|time\.|\.append\(",
    "C3": r"tf\.Variable\(",
    "R8": r"^for ",
    "R2": r"tf\.function",
    "K3": r"^(def |@)",
    "X1": r"^@tf\.function",
    "P2": r"Dense\(.*softmax",
    "P5": r"channels_first",
}


def test_comments_sit_above_the_reported_line(key):
    problems = []
    for e in key:
        if e.kind == "expect-none":
            continue
        for i in e.ids:
            shape = TARGET_SHAPES.get(i)
            if shape and not re.search(shape, e.code):
                problems.append(f"{pathlib.Path(e.path).name}:{e.row}: {i} above '{e.code}'")
    assert not problems, "\n".join(problems)


def test_parser_rejects_malformed_comments(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("# expect: Z9\nx = 1\n")
    with pytest.raises(AnswerKeyError):
        parse_file(bad)
    bad.write_text("# expect: R1\n\nx = 1\n")
    with pytest.raises(AnswerKeyError):
        parse_file(bad)
    bad.write_text("# expect-none: R1\nx = 1\n")  # a trap needs its reason
    with pytest.raises(AnswerKeyError):
        parse_file(bad)
    ok = tmp_path / "ok.py"
    ok.write_text("# expect: R1, R5 - note\n# expect-none: K1 - why\n@dec\ndef f():\n    pass\n")
    [a, b] = parse_file(ok)
    assert (a.row, a.ids, a.kind, a.span) == (3, ("R1", "R5"), "expect", (3, 4))
    assert (b.kind, b.ids, b.note) == ("expect-none", ("K1",), "why")


def test_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for path in FILES:
        assert path.name in readme, f"examples/README.md does not mention {path.name}"
