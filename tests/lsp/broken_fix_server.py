"""The real server with TFP101's fix sabotaged (as LibCST refusing a file would), to test that a
fix that cannot be built drops out alone (issue 15, point 6)."""
import sys

from tfperf_lsp.cli import lsp_main
from tfperf_lsp.rules import rule_by_code


def explode():
    raise RuntimeError("sabotaged for a test: the rewrite cannot be built")


rule = rule_by_code("TFP101")
report = rule.finding


def sabotaged_finding(*args, **kwargs):
    finding = report(*args, **kwargs)
    if finding.build_fix is not None:
        finding.build_fix = explode
    return finding


rule.finding = sabotaged_finding
sys.exit(lsp_main([]))
