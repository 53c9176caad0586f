"""input-pipeline rules (TFP7xx): tf.data input pipelines."""

RULES: list = []
