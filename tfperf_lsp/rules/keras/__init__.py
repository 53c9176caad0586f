"""keras rules (TFP8xx): Keras API pitfalls."""

RULES: list = []
