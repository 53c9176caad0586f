"""The rules and the analysis they read type-check (mypy, configured in pyproject.toml), so that
``ctx.`` completes in an editor and a rule that misuses a fact fails here, not on real code."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_rules_and_analysis_type_check():
    pytest.importorskip("mypy", reason="mypy is a dev dependency (pip install -e '.[dev]')")
    cache = os.path.join(ROOT, ".mypy_cache")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", cache], cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
