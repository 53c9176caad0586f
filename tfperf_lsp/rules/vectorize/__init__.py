"""vectorize rules (TFP4xx): loops and per-element work that one vectorised op replaces."""

RULES: list = []
