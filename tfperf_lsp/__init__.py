"""tfperf: find TensorFlow performance problems while the code is written, fix them, measure the fix."""

__version__ = "0.1.0"
