"""Observed, not guessed: run a program with TensorFlow instrumented and report, at the source
line, every tf.function trace and the argument that caused it, call times, host syncs and input
stalls.

Two sides, kept apart:
- the observed process (bootstrap.py, recorder.py, pytest_plugin.py) imports TensorFlow;
- everything else (runner.py, facts.py, store.py, cli.py) never does, so the language server
  and the CLI can use it.
Supported TensorFlow: 2.16 to 2.21 (the pinned 2.21 is tested); recorder.py checks the version
and the few internals it touches, and records nothing it cannot attribute rather than failing.
"""
