"""precision rules (TFP6xx): mixed precision."""

RULES: list = []
