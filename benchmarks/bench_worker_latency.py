"""How long from submitting a job to its result: warm spare vs cold start?

    python benchmarks/bench_worker_latency.py [--repeat 3] [--budget 0.2] [--no-pool] [--no-server]

Pool (``WorkerPool`` directly):
  Cold: a pool without a spare starts a worker for the job (Python start + TensorFlow import).
  Warm: the spare is started and ready (TensorFlow imported) before the job is submitted.
  The job is tiny (budget 0.2 s) so the difference is the start-up cost the spare hides.
Server (the real language server over stdio, as an editor drives it; issue 11's row):
  Code action -> result: with the spare warm (``tfperf.probeDevice`` answered), the time from the
  codeAction request for a finding, through ``tfperf.benchmark``, to the command's answer.
  Several findings: ``tfperf.benchmarkFile`` on a file with 3 benchmarkable findings, from a warm
  spare; what each finding after the first adds is the figure the spare count is fitted for.
The result cache is cleared before every run (a private cache folder), so every run measures.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tfperf_lsp.bench import Job, Variant, WorkerPool  # noqa: E402

BODY = "def __tfperf_run__():\n    return x + 1.0\n"
JOB = Job(prelude="import tensorflow as tf\nx = tf.ones([8])\n",
          variants=[Variant("a", BODY), Variant("b", BODY)], budget_s=0.2, min_sample_s=0.01)


def timed(pool):
    t0 = time.monotonic()
    res = pool.run_job(JOB)
    if res.verdict == "error":
        sys.exit(res.summary)
    return time.monotonic() - t0, res.timing["wall_s"]


THREE = """\
import tensorflow as tf

def costly(x):
    aux = tf.eye(32)
    result = tf.zeros([32, 32])
    for i in range(1, 30):
        aux = tf.matmul(x, aux) / i
        result = result + aux
    return result

def costly2(x):
    aux = tf.eye(16)
    result = tf.zeros([16, 16])
    for i in range(1, 20):
        aux = tf.matmul(x, aux) / i
        result = result + aux
    return result

def costly3(x):
    total = tf.zeros([8, 8])
    for i in range(1, 10):
        total = total + tf.matmul(x, x) * i
    return total

x = tf.random.uniform([32, 32], minval=-1, maxval=1)
x2 = tf.random.uniform([16, 16], minval=-1, maxval=1)
x3 = tf.random.uniform([8, 8], minval=-1, maxval=1)
for _ in range(100):
    y = costly(x)
    y2 = costly2(x2)
    y3 = costly3(x3)
"""


REWRITE = """\
import tensorflow as tf

A = tf.random.uniform([100, 10, 20])
B = tf.random.uniform([20, 20])
out = []
for i in range(100):
    out.append(tf.matmul(A[i], B))
C = tf.stack(out)
"""


def server_figures(repeat: int, budget: float) -> tuple[list[float], list[float], list[float]]:
    """(code action -> result with a warm spare for TFP303 (eager vs tf.function vs XLA),
    benchmarkFile of 3 findings from a warm spare, code action -> result for TFP401 (a rewrite))."""
    import tempfile

    from benchmarks._common import LspClient

    single, batch, rewrite = [], [], []
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as cache:
        os.environ["TFPERF_CACHE_DIR"] = cache
        path = os.path.join(root, "train.py")
        with open(path, "w") as handle:
            handle.write(THREE)
        uri = "file://" + path
        rewrite_path = os.path.join(root, "stack.py")
        with open(rewrite_path, "w") as handle:
            handle.write(REWRITE)
        rewrite_uri = "file://" + rewrite_path
        server = [sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")]
        client = LspClient(server, root)
        try:
            client.notify("workspace/didChangeConfiguration", {"settings": {"tfperf": {"benchmark": {"timeBudget": budget}}}})
            client.open(uri, THREE)
            _, published = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                       and m["params"]["uri"] == uri and m["params"]["diagnostics"], 60)
            diagnostic = next(d for d in published["params"]["diagnostics"] if d["code"] == "TFP303")
            client.open(rewrite_uri, REWRITE)
            _, published = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                       and m["params"]["uri"] == rewrite_uri and m["params"]["diagnostics"], 60)
            stack_diagnostic = next(d for d in published["params"]["diagnostics"] if d["code"] == "TFP401")

            def warm() -> None:
                client.request("workspace/executeCommand", {"command": "tfperf.clearBenchmarks", "arguments": []}, 60)
                client.request("workspace/executeCommand", {"command": "tfperf.probeDevice", "arguments": []}, 180)
                time.sleep(0.5)  # let the machine settle after the import

            def command(arguments: dict) -> dict:
                answer = client.request("workspace/executeCommand", arguments, 300)
                results = (answer.get("result") or {}).get("results") or []
                if not results or any(r["verdict"] == "error" for r in results):
                    sys.exit(f"benchmark failed: {answer}")
                return answer

            def action_to_result(document: str, finding: dict) -> float:
                warm()
                t0 = time.monotonic()
                actions = client.request("textDocument/codeAction", {
                    "textDocument": {"uri": document}, "range": finding["range"],
                    "context": {"diagnostics": [finding]}}, 60)["result"]
                action = next(a for a in actions if (a.get("command") or {}).get("command") == "tfperf.benchmark")
                command({"command": action["command"]["command"], "arguments": action["command"]["arguments"]})
                return time.monotonic() - t0

            for _ in range(repeat):
                single.append(action_to_result(uri, diagnostic))
                rewrite.append(action_to_result(rewrite_uri, stack_diagnostic))

                warm()
                t0 = time.monotonic()
                answer = command({"command": "tfperf.benchmarkFile", "arguments": [uri]})
                assert len(answer["result"]["results"]) == 3, answer
                batch.append(time.monotonic() - t0)
        finally:
            client.close()
    return single, batch, rewrite


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=0.2, help="the server's benchmark.timeBudget (s)")
    ap.add_argument("--no-pool", action="store_true", help="skip the WorkerPool figures")
    ap.add_argument("--no-server", action="store_true", help="skip the figures through the server")
    args = ap.parse_args()
    med = statistics.median
    print(f"{args.repeat} runs each, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    if not args.no_server:
        single, batch, rewrite = server_figures(args.repeat, args.budget)
        print(f"server, warm spare, code action -> result, TFP401 rewrite (timeBudget {args.budget:g} s): median {med(rewrite):.2f} s  (all: "
              + ", ".join(f"{x:.2f}" for x in rewrite) + ")")
        print(f"server, warm spare, code action -> result, TFP303 eager vs tf.function vs XLA (timeBudget {args.budget:g} s): median {med(single):.2f} s  (all: "
              + ", ".join(f"{x:.2f}" for x in single) + ")")
        print(f"server, benchmarkFile with 3 findings from a warm spare: median {med(batch):.2f} s  (all: "
              + ", ".join(f"{x:.2f}" for x in batch) + ")")
        extra = [(b - s) / 2 for b, s in zip(batch, single)]
        print(f"  each finding after the first adds: median {med(extra):.2f} s  (pairs: "
              + ", ".join(f"{x:.2f}" for x in extra) + f"); ratio batch / single, same run: median {med([b / s for b, s in zip(batch, single)]):.2f}")
    if args.no_pool:
        return
    # Three jobs in a row from a warm spare, alternating: one spare (as before issue 11's change)
    # and spares fitted to the queue (expect(3)); the ratio is within one run.
    one, fitted = [], []
    for _ in range(args.repeat):
        for spares, into in ((1, one), (None, fitted)):
            with WorkerPool(max_spares=spares) as pool:
                pool.worker_info()
                time.sleep(0.5)
                t0 = time.monotonic()
                pool.expect(3)
                for _ in range(3):
                    timed(pool)
                pool.expect(0)
                into.append(time.monotonic() - t0)
    print(f"pool, 3 jobs from a warm spare, one spare: median {med(one):.2f} s  (all: " + ", ".join(f"{x:.2f}" for x in one) + ")")
    print(f"pool, 3 jobs from a warm spare, spares fitted to the queue: median {med(fitted):.2f} s  (all: "
          + ", ".join(f"{x:.2f}" for x in fitted) + f"); ratio fitted / one, pairs: "
          + ", ".join(f"{f / o:.2f}" for f, o in zip(fitted, one)))
    cold, warm, ready, inside = [], [], [], []
    for _ in range(args.repeat):
        with WorkerPool(keep_spare=False) as pool:
            total, job_s = timed(pool)
            cold.append(total)
            inside.append(job_s)
        with WorkerPool(keep_spare=False) as pool:
            t0 = time.monotonic()
            pool.start_spare()
            pool.worker_info()          # waits for `ready`: TensorFlow imported
            ready.append(time.monotonic() - t0)
            total, job_s = timed(pool)
            warm.append(total)
            inside.append(job_s)
    print(f"worker start to ready (Python + TensorFlow import): median {med(ready):.2f} s")
    print(f"cold start, submit -> result: median {med(cold):.2f} s  (all: "
          + ", ".join(f"{x:.2f}" for x in cold) + ")")
    print(f"warm spare, submit -> result: median {med(warm):.2f} s  (all: "
          + ", ".join(f"{x:.2f}" for x in warm) + ")")
    print(f"time inside the worker for the job itself: median {med(inside):.2f} s")
    print(f"the spare saves {med(cold) - med(warm):.2f} s per benchmark")


if __name__ == "__main__":
    main()
