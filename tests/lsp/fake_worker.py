"""A TensorFlow-free benchmark worker for the server's tests (issue 15). Started as
`python fake_worker.py -m tfperf_lsp.bench.worker ...`; it leaves `started-<pid>` in
$FAKE_MARKER_DIR, so a test sees whether (and which) worker ran, and obeys $FAKE_MODE:
ok (a result), hang (progress, then nothing), setsid-child (a detached child holding the pipes)."""
import json
import os
import sys
import time

from tfperf_lsp.bench import protocol
from tfperf_lsp.bench.protocol import Comparison, Device, Result

MODE = os.environ.get("FAKE_MODE", "ok")


def send(msg):
    sys.stdout.write(protocol.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    marker_dir = os.environ.get("FAKE_MARKER_DIR")
    if marker_dir:
        with open(os.path.join(marker_dir, f"started-{os.getpid()}"), "w") as f:
            f.write(os.getcwd())
    device = Device(kind="cpu", name="Fake CPU")
    send(protocol.ready_msg("0.0-fake", "3.x", device, os.getpid()))
    line = sys.stdin.readline()
    if not line:
        return 0
    msg = json.loads(line)
    if msg["type"] == "probe":
        send(protocol.device_msg("0.0-fake", "3.x", device))
        return 0
    if MODE == "setsid-child" and os.fork() == 0:
        os.setsid()  # leaves the worker's process group, keeps stdout/stderr open
        if os.fork() == 0:  # and double-forks: no longer a descendant either
            if marker_dir:
                with open(os.path.join(marker_dir, f"detached-{os.getpid()}"), "w") as f:
                    f.write("x")
            time.sleep(1000)
        os._exit(0)
    if MODE in ("hang", "setsid-child"):
        send(protocol.progress_msg(0.1, "hanging"))
        while True:
            time.sleep(1)
    names = [v["name"] for v in msg["job"]["variants"]]
    result = Result(verdict="faster", summary="2.00x faster", tf_version="0.0-fake",
                    comparisons=[Comparison(baseline=names[0], candidate=names[1], verdict="faster",
                                            timing_verdict="faster", speedup=2.0)])
    send(protocol.result_msg(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
