"""The real server with one rule sabotaged, to test that a failing rule is logged, not fatal."""
import sys

from tfperf_lsp.cli import lsp_main
from tfperf_lsp.rules import rule_by_code


def explode(ctx):
    raise RuntimeError("sabotaged for a test")


rule_by_code("TFP101").check = explode
sys.exit(lsp_main([]))
