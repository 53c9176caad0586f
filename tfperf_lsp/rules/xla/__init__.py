"""xla rules (TFP5xx): XLA compilation opportunities and pitfalls."""

RULES: list = []
