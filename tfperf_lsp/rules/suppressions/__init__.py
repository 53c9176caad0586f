"""suppressions rules (TFP9xx): about tfperf's own suppression comments. Opt-in."""

from tfperf_lsp.rules.suppressions.unused_suppression import UnusedSuppression

RULES: list = [UnusedSuppression]
