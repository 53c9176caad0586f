"""The README is part of the product: its quick start, rules table and CI entry stay true."""
import os
import re

from tfperf_lsp.cli import rules_markdown
from tfperf_lsp.rules import ALL_RULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        return handle.read()


def test_rules_table_matches_the_code():
    assert rules_markdown(ALL_RULES) in read("README.md"), "regenerate with `tfperf rules --format markdown`"


def test_quick_start_is_two_commands_that_exist():
    readme = read("README.md")
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["./scripts/demo", "./scripts/test"]
    for command in commands:
        assert os.access(os.path.join(ROOT, command), os.X_OK)


def test_ci_runs_the_readme_test_command():
    ci = read(".ci/run")
    assert "scripts/test" in ci


def test_user_visible_text_has_no_internal_jargon():
    """Rule docs (hovers, `tfperf rule`) name the TensorFlow guide and the measured figure, not the
    team's internal documents, and the examples cite no path outside the repository."""
    for rule in ALL_RULES:
        docs = rule.markdown().lower()
        for word in ("catalog", "seed article", "seed 00", "/work/"):
            assert word not in docs, f"{rule.code}: {word!r}"
    for name in os.listdir(os.path.join(ROOT, "examples")):
        text = read(os.path.join("examples", name))
        assert "/work/" not in text and "/tmp/" not in text, name
