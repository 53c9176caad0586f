"""Parsing and the facts rules share: positions, TensorFlow names, scopes, tf.functions, data flow."""
