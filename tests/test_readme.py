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
