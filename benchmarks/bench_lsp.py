"""The language server as an editor sees it, side by side with ``ruff server`` in the same run.

Rows of issue 11's table:
- start to first diagnostics, 2,076-line TF file                 [goal <= 0.3 s]
- didChange to diagnostics, p50 (tfperf includes its debounce)   [goal <= 150 ms]
- server RSS with 50 open 2k-line files                           [goal <= 150 MiB]
- whether the server process loaded TensorFlow                    [never]

Usage: python benchmarks/bench_lsp.py [--starts 3] [--keystrokes 15] [--files 50]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import SERVER, LspClient, examples_corpus, peer, rss_mib, skipped  # noqa: E402


def servers() -> dict[str, list[str] | None]:
    ruff = peer("ruff")
    return {"tfperf": SERVER, "ruff": ruff + ["server"] if ruff else None}


def start_seconds(command: list[str], text: str) -> tuple[float, bool]:
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "train.py")
        with open(path, "w") as handle:
            handle.write(text)
        client = LspClient(command, root)
        client.open("file://" + path, text)
        elapsed = client.diagnostics("file://" + path) - client.start
        with open(f"/proc/{client.proc.pid}/maps") as maps:
            loaded_tf = "tensorflow" in maps.read()
        client.close()
        return elapsed, loaded_tf


def keystroke_ms(command: list[str], text: str, count: int) -> list[float]:
    """Type one character at a time into a comment in the middle of the file, pausing like a
    typist (0.35 s, longer than tfperf's debounce), and time each change to its diagnostics."""
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "train.py")
        with open(path, "w") as handle:
            handle.write(text)
        uri = "file://" + path
        client = LspClient(command, root)
        client.open(uri, text)
        client.diagnostics(uri)
        line = text.count("\n") // 2
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"range": _at(line, 0), "text": "# \n"}]})
        client.diagnostics(uri, 2)
        samples = []
        for index in range(count):
            time.sleep(0.35)
            version = index + 3
            sent = time.perf_counter()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [{"range": _at(line, 2 + index), "text": "x"}]})
            samples.append((client.diagnostics(uri, version) - sent) * 1000)
        client.close()
        return samples


def rss_with_files(command: list[str], text: str, files: int) -> float:
    with tempfile.TemporaryDirectory() as root:
        client = LspClient(command, root)
        for index in range(files):
            path = os.path.join(root, f"module_{index}.py")
            body = f"# copy {index}\n" + text
            with open(path, "w") as handle:
                handle.write(body)
            client.open("file://" + path, body)
            client.diagnostics("file://" + path)
        time.sleep(0.5)
        rss = rss_mib(client.proc.pid)
        client.close()
        return rss


def _at(line: int, col: int) -> dict:
    return {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}


def _row(label: str, values: dict[str, float], unit: str, goal: str, fmt: str = "{:.0f}") -> None:
    ours = values.get("tfperf")
    cells = [f"tfperf {fmt.format(ours)} {unit}"]
    for name, value in values.items():
        if name != "tfperf" and value is not None:
            cells.append(f"{name} {fmt.format(value)} {unit} ({ours / value:.1f}x)")
    print(f"{label:<44} {' | '.join(cells)}   [{goal}]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--keystrokes", type=int, default=15)
    parser.add_argument("--files", type=int, default=50)
    args = parser.parse_args()
    text = examples_corpus(2000)
    print(f"corpus: {text.count(chr(10)) + 1} lines from examples/*.py")
    commands = servers()
    for name, command in commands.items():
        if command is None:
            print(skipped(name))
    live = {n: c for n, c in commands.items() if c is not None}

    # tfperf's start-up cache (tfperf_lsp/lsp/startup.py) in a folder of this run's own, not the
    # user's: the untimed start fills it, as the first start of an installed tool does.
    os.environ["TFPERF_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfperf-bench-lsp-")
    starts, loaded = {}, False
    for name, command in live.items():
        start_seconds(command, text)  # untimed: bytecode compiled once, as an installed tool has it
        runs = [start_seconds(command, text) for _ in range(args.starts)]
        starts[name] = statistics.median(s for s, _ in runs) * 1000
        loaded |= name == "tfperf" and any(tf for _, tf in runs)
    _row("start to first diagnostics (median)", starts, "ms", "goal <= 300 ms")

    p50 = {name: statistics.median(keystroke_ms(command, text, args.keystrokes)) for name, command in live.items()}
    _row("didChange to diagnostics (p50)", p50, "ms", "goal <= 150 ms, debounce included")

    rss = {name: rss_with_files(command, text, args.files) for name, command in live.items()}
    _row(f"server RSS, {args.files} open 2k-line files", rss, "MiB", "goal <= 150 MiB")
    print(f"{'server loaded TensorFlow':<44} {'YES' if loaded else 'no'}   [goal: no]")


if __name__ == "__main__":
    main()
