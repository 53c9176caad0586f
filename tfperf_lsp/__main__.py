"""``python -m tfperf_lsp`` starts the language server, like ``tfperf-lsp``."""
import sys

from tfperf_lsp.cli import lsp_main

sys.exit(lsp_main(sys.argv[1:]))
