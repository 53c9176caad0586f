"""Runs far longer than any test allows, and leaves a child process behind if it can."""
import subprocess
import sys
import time

import tensorflow as tf


@tf.function
def f(x):
    return x + 1


f(tf.constant(1.0))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print("child", child.pid, flush=True)
time.sleep(600)
