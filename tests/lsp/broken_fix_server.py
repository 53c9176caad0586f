"""The real server with TFP101's fix sabotaged (as LibCST refusing a file would), to test that a
fix that cannot be built drops out alone (issue 15, point 6)."""
import sys

from tfperf_lsp.cli import lsp_main
from tfperf_lsp.rules import rule_by_code


def explode(ctx, finding):
    raise RuntimeError("sabotaged for a test: the rewrite cannot be built")


rule_by_code("TFP101").fix = explode
sys.exit(lsp_main([]))
