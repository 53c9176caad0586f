"""The pre-commit hooks and the GitHub Action are valid, and run what the README says."""
import os
import shlex

import yaml
from pre_commit.clientlib import load_manifest

from tfperf_lsp.cli import _parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_pre_commit_manifest_is_valid_and_its_entries_parse():
    hooks = {hook["id"]: hook for hook in load_manifest(os.path.join(ROOT, ".pre-commit-hooks.yaml"))}
    assert "tfperf-check" in hooks
    for hook in hooks.values():
        argv = shlex.split(hook["entry"])
        assert argv[0] == "tfperf"
        _parser().parse_args(argv[1:] + ["file.py"])  # every option exists
        assert hook["types_or"] == ["python", "pyi"]


def test_action_runs_check_with_github_annotations():
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "check --output-format github" in scripts
    assert all(step.get("shell") == "bash" for step in action["runs"]["steps"] if "run" in step)


def test_readme_documents_both():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert "id: tfperf-check" in readme and "--output-format github" in readme
