"""A stand-in for the TF worker that misbehaves on request (FAKE_MODE), for fast pool tests.

Run as `python bench_fake_worker.py -m tfperf_lsp.bench.worker [--memory-limit-mb N]`: the pool
appends those arguments to its command prefix; they are ignored except for being echoed.
"""
import json
import os
import signal
import subprocess
import sys
import time

from tfperf_lsp.bench import protocol
from tfperf_lsp.bench.protocol import Comparison, Device, Result

MODE = os.environ.get("FAKE_MODE", "ok")
LOG = os.environ.get("FAKE_LOG")  # events with their monotonic time (comparable across processes)


def note(event):
    if LOG:
        with open(LOG, "a") as f:
            f.write(f"{event} {os.getpid()} {time.monotonic()}\n")


def send(msg):
    sys.stdout.write(protocol.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    note("start")
    time.sleep(float(os.environ.get("FAKE_START_S", "0")))  # a TensorFlow import, say
    if MODE == "slowstart":
        time.sleep(30)
    if MODE == "fatal":
        send(protocol.fatal_msg("the worker could not import TensorFlow: No module named 'tensorflow'"))
        return 2
    if MODE == "crash-on-start":
        sys.stderr.write("Fatal Python error: boom at start\n")
        sys.stderr.flush()
        os._exit(1)
    device = Device(kind="cpu", name="Fake CPU", platform=" ".join(sys.argv[1:]))
    note("ready")  # before the message: the pool may act on it before a later note is written
    send(protocol.ready_msg("0.0-fake", "3.x", device, os.getpid()))
    line = sys.stdin.readline()
    if not line:
        return 0
    msg = json.loads(line)
    if msg["type"] == "probe":
        send(protocol.device_msg("0.0-fake", "3.x", device))
        return 0
    job = msg["job"]
    note("job")
    if MODE == "garbage":
        sys.stdout.write("hello, I am not JSON\n")
        sys.stdout.flush()
        time.sleep(30)
    if MODE == "oversize":
        sys.stdout.write('{"type": "progress", "message": "' + "x" * (2 << 20) + '"}\n')
        sys.stdout.flush()
        time.sleep(30)
    if MODE == "exit":
        sys.stderr.write("dying now\n")
        sys.stderr.flush()
        os._exit(5)
    if MODE == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if MODE in ("hang", "grandchild"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if MODE == "grandchild":
            child = subprocess.Popen(["sleep", "1000"])
            sys.stderr.write(f"grandchild {child.pid}\n")
            sys.stderr.flush()
        send(protocol.progress_msg(0.1, "hanging"))
        while True:
            time.sleep(1)
    if MODE == "memory":
        hog = []
        while True:
            hog.append(bytearray(b"x" * (20 << 20)))  # touched pages count in RSS
            time.sleep(0.01)
    if MODE == "stderrflood":
        for i in range(5000):
            sys.stderr.write(f"noise {i}\n")
        sys.stderr.flush()
    start = time.time()
    for i in range(3):
        send(protocol.progress_msg((i + 1) / 4, f"step {i}"))
        time.sleep(float(os.environ.get("FAKE_STEP_S", "0.02")))
    names = [v["name"] for v in job["variants"]]
    verdict = os.environ.get("FAKE_VERDICT", "faster")  # for the bench CLI's --fail-on tests
    speedup = float(os.environ.get("FAKE_SPEEDUP", "2.0"))
    ci = [speedup * 0.95, speedup * 1.05] if os.environ.get("FAKE_CI") else [None, None]
    result = Result(verdict=verdict, summary=f"{speedup:.2f}x", tf_version="0.0-fake",
                    comparisons=[Comparison(baseline=names[0], candidate=names[1], verdict=verdict,
                                            timing_verdict=verdict, speedup=speedup, ci_low=ci[0], ci_high=ci[1])],
                    timing={"start": start, "end": time.time()})
    send(protocol.result_msg(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
