"""How fast is analysis? Prints medians; goals from the foundation issue in brackets.

- full re-analysis of a ~2,000-line TensorFlow file           [< 50 ms median]
- the same split over a 10-file workspace (with cross-file lookups)
- where the time goes: ast.parse vs facts vs rules
- server start to first diagnostics, over stdio              [< 1 s]
- whether the server process loaded TensorFlow                [never]

Usage: python benchmarks/bench_analysis.py [--repeat N]
"""
from __future__ import annotations

import argparse
import ast
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tfperf_lsp.analysis.facts import ModuleFacts  # noqa: E402
from tfperf_lsp.analysis.source import SourceText  # noqa: E402
from tfperf_lsp.analysis.workspace import WorkspaceIndex  # noqa: E402
from tfperf_lsp.engine import analyze  # noqa: E402


def corpus(min_lines: int) -> str:
    """Realistic TF code: the shipped examples, repeated until long enough."""
    parts, lines = [], 0
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    while lines < min_lines:
        for path in examples:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            parts.append(text)
            lines += text.count("\n")
            if lines >= min_lines:
                break
    return "\n".join(parts)


def median_ms(fn, repeat: int) -> float:
    fn()  # warm caches (imports, regexes)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def workspace(directory: str, text: str, files: int) -> list[str]:
    """Split the corpus into modules where some import tf.functions from a shared module."""
    shared = (
        "import tensorflow as tf\n\n@tf.function\ndef shared_step(x, step):\n"
        "    return x * tf.cast(step, tf.float32)\n"
    )
    with open(os.path.join(directory, "steps.py"), "w") as handle:
        handle.write(shared)
    lines = text.split("\n")
    chunk = len(lines) // files
    paths = []
    for index in range(files):
        body = "\n".join(lines[index * chunk : (index + 1) * chunk])
        try:
            ast.parse(body)
        except SyntaxError:
            body = "import tensorflow as tf\n"  # a split through a def: keep the module valid
        body += "\nfrom steps import shared_step\nfor i in range(3):\n    shared_step(tf.ones([2]), i)\n"
        path = os.path.join(directory, f"module_{index}.py")
        with open(path, "w") as handle:
            handle.write(body)
        paths.append(path)
    return paths


def first_diagnostics_seconds(text: str) -> tuple[float, bool]:
    """Start the server like an editor does and time initialize -> first publishDiagnostics."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "train.py")
        with open(path, "w") as handle:
            handle.write(text)
        uri = "file://" + path
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )

        def send(message):
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            proc.stdin.flush()

        def receive():
            length = 0
            while True:
                line = proc.stdout.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            return json.loads(proc.stdout.read(length))

        send({"id": 1, "method": "initialize", "params": {"processId": os.getpid(), "rootUri": "file://" + directory, "capabilities": {}}})
        while receive().get("id") != 1:
            pass
        send({"method": "initialized", "params": {}})
        send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
        while True:
            message = receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                elapsed = time.perf_counter() - start
                break
        with open(f"/proc/{proc.pid}/maps") as maps:
            loaded_tf = "tensorflow" in maps.read()
        send({"id": 2, "method": "shutdown"})
        receive()
        send({"method": "exit"})
        proc.wait(timeout=10)
        return elapsed, loaded_tf


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    text = corpus(2000)
    n_lines = text.count("\n") + 1
    source = SourceText(text)
    tree = source.parse()

    print(f"corpus: {n_lines} lines from examples/*.py")
    parse_ms = median_ms(lambda: ast.parse(text), args.repeat)
    facts_ms = median_ms(lambda: ModuleFacts(ast.parse(text), SourceText(text)), args.repeat)
    full_ms = median_ms(lambda: analyze(text), args.repeat)
    findings = len(analyze(text).findings)
    print(f"ast.parse                          {parse_ms:7.1f} ms")
    print(f"parse + facts                      {facts_ms:7.1f} ms")
    print(f"full analysis (all rules)          {full_ms:7.1f} ms   [goal < 50 ms]   {findings} findings")
    print(f"  rules alone                      {full_ms - facts_ms:7.1f} ms")
    del tree

    with tempfile.TemporaryDirectory() as directory:
        paths = workspace(directory, text, 10)
        index = WorkspaceIndex([directory])
        texts = {p: open(p).read() for p in paths}

        def analyse_all():
            for path, body in texts.items():
                analyze(body, path, workspace=index)

        cold_start = time.perf_counter()
        analyse_all()  # first pass: jedi resolves the cross-file imports
        cold_ms = (time.perf_counter() - cold_start) * 1000
        warm_ms = median_ms(analyse_all, max(5, args.repeat // 3))
        cross = sum(1 for p, b in texts.items() for f in analyze(b, p, workspace=index).findings if f.code == "TFP101" and "shared_step" in f.message)
        print(f"10-file workspace, first pass      {cold_ms:7.1f} ms   (jedi resolves imports)")
        print(f"10-file workspace, re-analysis     {warm_ms:7.1f} ms   {cross} cross-file TFP101 findings")

    starts = [first_diagnostics_seconds(text) for _ in range(3)]
    median_start = statistics.median(s for s, _ in starts)
    print(f"server start -> first diagnostics  {median_start * 1000:7.0f} ms   [goal < 1000 ms]")
    print(f"server loaded TensorFlow           {'YES' if any(tf for _, tf in starts) else 'no'}   [goal: no]")


if __name__ == "__main__":
    main()
