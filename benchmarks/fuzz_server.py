"""Fuzz the language server over stdio with mutated documents (issue 15).

Starts `server/tfperf_server.py`, opens documents built from real TensorFlow code and mutated
(form feeds, CRLF, lone CR, astral characters, the characters Python's splitlines breaks on
but LSP does not, huge and deeply nested files), edits them incrementally while keeping a
shadow copy, and asks for diagnostics (pull), hovers, code actions and inlay hints.

It checks, per document:
- drift: the diagnostics of the edited document must equal those of a fresh document opened
  with the shadow text, and every "Ignore" code action must rewrite exactly the shadow's line;
- out-of-range positions: every position the server sends must lie inside the shadow text
  (line count, line length in the negotiated encoding, never inside a surrogate pair);
- errors: error responses other than the expected refusals (-32800 cancelled, -32801 content
  modified, -32803 request failed), error-level log messages, a server that exits.
It prints the counts, the first examples of each failure, latency percentiles per method and
the server's memory before and after.

Usage: python benchmarks/fuzz_server.py [--documents 2000] [--seconds 900] [--seed 0]
                                        [--encoding utf-16|utf-8|utf-32] [--corpus DIR]
Exit status 1 if anything failed.
"""
from __future__ import annotations

import argparse
import ast  # noqa: F401 - compile(..., PyCF_ONLY_AST) below
import glob
import json
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
import warnings
from collections import defaultdict

warnings.simplefilter("ignore", SyntaxWarning)  # the corpus's own invalid escapes, seen by compile()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED_ERRORS = {-32800, -32801, -32803}
NOT_LSP_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
_LSP_LINE = re.compile(r"\r\n|\r|\n")


# ---------------------------------------------------------------------------- the client
class Server:
    """A bare LSP client over pipes: requests with ids and timings, notifications kept."""

    def __init__(self, cmd, env):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.next_id = 0
        self.pending: dict[int, queue.Queue] = {}
        self.lock = threading.Lock()
        self.logs: list[dict] = []
        self.stderr: list[str] = []
        self.dead = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))
            del self.stderr[:-200]

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.dead.set()
                    for q in list(self.pending.values()):
                        q.put({"error": {"code": "dead", "message": "server exited"}})
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(out.read(length))
            if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
                q = self.pending.pop(msg["id"], None)
                if q:
                    q.put(msg)
            elif "method" in msg:
                if msg["method"] == "window/logMessage":
                    self.logs.append(msg["params"])
                if "id" in msg:  # a request from the server: answer it plainly
                    result = [None] * len(msg["params"]["items"]) if msg["method"] == "workspace/configuration" else None
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def _send(self, msg):
        body = json.dumps(msg).encode("utf-8")
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=60.0):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        q: queue.Queue = queue.Queue()
        self.pending[rid] = q
        start = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            msg = q.get(timeout=timeout)
        except queue.Empty:
            msg = {"error": {"code": "timeout", "message": f"no answer in {timeout:g} s"}}
        return msg, time.perf_counter() - start

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")


# ---------------------------------------------------------------------------- positions
def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    return len(text)


def lsp_lines(text: str) -> list[str]:
    return _LSP_LINE.split(text)


def position_of(text: str, offset: int, encoding: str) -> dict:
    before = text[:offset]
    lines = lsp_lines(before)
    return {"line": len(lines) - 1, "character": units(lines[-1], encoding)}


def check_position(pos: dict, lines: list[str], encoding: str) -> str | None:
    """Why a position does not fit the shadow text, or None."""
    line, char = pos["line"], pos["character"]
    if not 0 <= line < len(lines):
        if line == len(lines) and char == 0:
            return None
        return f"line {line} of {len(lines)}"
    text = lines[line]
    if char > units(text, encoding):
        return f"character {char} past the end ({units(text, encoding)}) of line {line}"
    if encoding != "utf-32":  # must not split a character
        acc = 0
        for ch in text:
            if acc == char:
                return None
            acc += units(ch, encoding)
            if acc > char:
                return f"character {char} inside a multi-unit character on line {line}"
    return None


def offset_ok(text: str, offset: int) -> bool:
    """An offset LSP can name: not between the \\r and \\n of a CRLF."""
    return not (0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n")


# ---------------------------------------------------------------------------- documents
def corpus(paths: list[str], limit: int, rng: random.Random) -> list[str]:
    files = []
    for base in paths:
        files += glob.glob(os.path.join(base, "**", "*.py"), recursive=True)
    rng.shuffle(files)
    texts = []
    for path in files:
        try:
            if os.path.getsize(path) > 200_000:
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        if "tensorflow" in text or "tf." in text:
            texts.append(text)
        if len(texts) >= limit:
            break
    return texts


SNIPPETS = [
    "\x0c", "\r\n", "\r", "\n", "\U0001F600", "\U00010348", "é", "\t", "    ", "x = 1\n", "# \u2028 c\n",
    "for i in range(3):\n    f(i)\n", "@tf.function\ndef g(x):\n    return x\n", "'''", "(", ")", ":", "\\",
] + NOT_LSP_BREAKS


def mutate(text: str, rng: random.Random, only: str | None = None) -> tuple[str, str]:
    """A mutated document and the name of its mutation."""
    kinds = ["formfeed", "crlf", "cr", "astral", "breaks", "mixed", "plain", "huge", "nested", "nested-parens"]
    kind = rng.choices(kinds, weights=[10, 10, 10, 10, 10, 10, 10, 1, 5, 5])[0]  # huge ones cost seconds each
    if only:
        kind = only
    if kind == "formfeed":
        lines = text.split("\n")
        for _ in range(rng.randint(1, 5)):
            lines.insert(rng.randint(0, len(lines)), "\x0c")
        text = "\n".join(lines)
    elif kind == "crlf":
        text = text.replace("\n", "\r\n")
    elif kind == "cr":
        text = text.replace("\n", "\r")
    elif kind == "astral":
        text = re.sub(r"#[^\n]*", lambda m: m.group(0) + " \U0001F600\U00010348", text)
        text = text.replace('"', '"\U0001F600', 4)
    elif kind == "breaks":
        text = re.sub(r"#[^\n]*", lambda m: m.group(0) + rng.choice(NOT_LSP_BREAKS) + "x", text)
    elif kind == "mixed":
        out = []
        for line in text.split("\n"):
            out.append(line + rng.choice(["\n", "\r\n", "\r", "\n", "\n"]))
        text = "".join(out)
    elif kind == "huge":
        target = rng.choice([300_000, 3_100_000])  # under and over the server's size limit
        text = (text + "\n") * (target // max(1, len(text)) + 1)
    elif kind == "nested":
        depth = rng.choice([50, 99, 101, 300])
        lines = ["import tensorflow as tf"]
        for i in range(depth):
            lines.append("    " * i + f"if x{i}:")
        lines.append("    " * depth + "y = tf.function(lambda v: v)(1)")
        text = "\n".join(lines) + "\n" + text
    elif kind == "nested-parens":
        depth = rng.choice([100, 199, 250, 5000])
        text = text + "\nz = " + "(" * depth + "1" + ")" * depth + "\n"
    return text, kind


def random_edit(text: str, rng: random.Random) -> tuple[int, int, str]:
    """(start, end, new text) in code points, at offsets LSP can name."""
    for _ in range(20):
        start = rng.randint(0, len(text))
        end = min(len(text), start + rng.choice([0, 0, 1, 2, 5, 20, 80]))
        if offset_ok(text, start) and offset_ok(text, end):
            break
    else:
        start = end = len(text)
    new = "".join(rng.choice(SNIPPETS) for _ in range(rng.choice([0, 1, 1, 2, 4])))
    # a new text that ends in \r before a \n (or starts with \n after a \r) would merge into a CRLF:
    # fine for LSP, and the shadow follows the same rule
    return start, end, new


# ---------------------------------------------------------------------------- the run
class Tally:
    def __init__(self):
        self.counts = defaultdict(int)
        self.examples: dict[str, list[str]] = defaultdict(list)
        self.latency: dict[str, list[float]] = defaultdict(list)

    def fail(self, kind: str, detail: str):
        self.counts[kind] += 1
        if len(self.examples[kind]) < 5:
            self.examples[kind].append(detail[:400])


def diagnostics_of(server, uri, tally, lines, encoding, label):
    msg, dt = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    tally.latency["textDocument/diagnostic"].append(dt)
    if "error" in msg:
        if msg["error"].get("code") not in EXPECTED_ERRORS:
            tally.fail("error response", f"diagnostic {label}: {msg['error']}")
        return None
    items = msg["result"].get("items", []) if msg.get("result") else []
    for d in items:
        for end in ("start", "end"):
            why = check_position(d["range"][end], lines, encoding)
            if why:
                tally.fail("out-of-range position", f"diagnostic {d.get('code')} {label}: {why}")
    return sorted((d.get("code"), json.dumps(d["range"], sort_keys=True)) for d in items)


def fuzz_document(server, n, text, kind, rng, tally, encoding, workdir):
    uri = f"file://{workdir}/doc{n}.py"
    ref = f"file://{workdir}/ref{n}.py"
    shadow = text
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": shadow}})
    version = 1
    for _ in range(rng.randint(1, 8)):
        start, end, new = random_edit(shadow, rng)
        rng_ = {"start": position_of(shadow, start, encoding), "end": position_of(shadow, end, encoding)}
        shadow = shadow[:start] + new + shadow[end:]
        version += 1
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"range": rng_, "text": new}]})
    lines = lsp_lines(shadow)
    got = diagnostics_of(server, uri, tally, lines, encoding, f"doc{n} ({kind})")
    # hovers, inlay hints, code actions at random places
    for _ in range(2):
        offset = rng.randint(0, len(shadow))
        while not offset_ok(shadow, offset):
            offset -= 1
        pos = position_of(shadow, offset, encoding)
        msg, dt = server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
        tally.latency["textDocument/hover"].append(dt)
        if "error" in msg and msg["error"].get("code") not in EXPECTED_ERRORS:
            tally.fail("error response", f"hover doc{n}: {msg['error']}")
        elif msg.get("result") and msg["result"].get("range"):
            for end in ("start", "end"):
                why = check_position(msg["result"]["range"][end], lines, encoding)
                if why:
                    tally.fail("out-of-range position", f"hover doc{n}: {why}")
    whole = {"start": {"line": 0, "character": 0}, "end": position_of(shadow, len(shadow), encoding)}
    msg, dt = server.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole})
    tally.latency["textDocument/inlayHint"].append(dt)
    if "error" in msg and msg["error"].get("code") not in EXPECTED_ERRORS:
        tally.fail("error response", f"inlayHint doc{n}: {msg['error']}")
    for hint in (msg.get("result") or []):
        why = check_position(hint["position"], lines, encoding)
        if why:
            tally.fail("out-of-range position", f"inlay hint doc{n}: {why}")
    msg, dt = server.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": whole,
                                                         "context": {"diagnostics": []}})
    tally.latency["textDocument/codeAction"].append(dt)
    if "error" in msg and msg["error"].get("code") not in EXPECTED_ERRORS:
        tally.fail("error response", f"codeAction doc{n}: {msg['error']}")
    for action in (msg.get("result") or []):
        edit = action.get("edit") or {}
        changes = [e for dc in edit.get("documentChanges", []) for e in dc.get("edits", [])]
        changes += [e for es in (edit.get("changes") or {}).values() for e in es]
        for e in changes:
            bad = [check_position(e["range"][k], lines, encoding) for k in ("start", "end")]
            if any(bad):
                tally.fail("out-of-range position", f"code action {action['title']!r} doc{n}: {[b for b in bad if b]}")
                continue
            if action["title"].startswith("Ignore "):  # replaces one whole line: the server's copy of it
                line = lines[e["range"]["start"]["line"]]
                whole_line = (e["range"]["start"]["character"] == 0 and e["range"]["end"]["line"] == e["range"]["start"]["line"]
                              and e["range"]["end"]["character"] == units(line, encoding))
                if not whole_line or not e["newText"].startswith(line.split("#")[0].rstrip()):
                    tally.fail("drifted document", f"doc{n} ({kind}): Ignore rewrites {line!r} as {e['newText']!r}")
    # drift: a fresh document with the shadow text must get the same diagnostics
    server.notify("textDocument/didOpen", {"textDocument": {"uri": ref, "languageId": "python", "version": 1, "text": shadow}})
    want = diagnostics_of(server, ref, tally, lines, encoding, f"ref{n}")
    try:  # a file that does not parse keeps the findings of its last parsing version: not drift
        parses = compile(shadow, "<fuzz>", "exec", flags=0x400, dont_inherit=True) is not None  # PyCF_ONLY_AST
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        parses = False
    if parses and got is not None and want is not None and got != want:
        tally.fail("drifted document", f"doc{n} ({kind}): {len(got)} diagnostics after edits, {len(want)} on a fresh copy")
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    server.notify("textDocument/didClose", {"textDocument": {"uri": ref}})


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=900.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--encoding", choices=("utf-16", "utf-8", "utf-32"), default="utf-16")
    parser.add_argument("--only", default=None, help="use one mutation only (plain: memory per document)")
    parser.add_argument("--corpus", action="append", default=None,
                        help="folders of Python files to mutate (default: examples/ and /tmp/realworld)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    texts = corpus(args.corpus or [os.path.join(ROOT, "examples"), "/tmp/realworld"], 400, rng)
    if not texts:
        print("no corpus files found", file=sys.stderr)
        return 2
    import tempfile

    workdir = tempfile.mkdtemp(prefix="tfperf-fuzz-")
    env = {**os.environ, "TFPERF_CACHE_DIR": os.path.join(workdir, "cache")}
    command = os.environ.get("TFPERF_FUZZ_SERVER", os.path.join(ROOT, "server", "tfperf_server.py"))
    server = Server([sys.executable, command], env)  # TFPERF_FUZZ_SERVER: another launcher (profiling)
    tally = Tally()
    caps = {"general": {"positionEncodings": [args.encoding]},
            "textDocument": {"synchronization": {"dynamicRegistration": False},
                             "diagnostic": {"dynamicRegistration": False},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", ""]}}},
                             "hover": {"contentFormat": ["markdown"]}, "inlayHint": {}},
            "workspace": {"workspaceEdit": {"documentChanges": True}, "configuration": True},
            "window": {"workDoneProgress": True}}
    msg, _ = server.request("initialize", {"processId": os.getpid(), "rootUri": f"file://{workdir}",
                                           "capabilities": caps, "initializationOptions": {"workspaceTrusted": False}})
    negotiated = (msg.get("result") or {}).get("capabilities", {}).get("positionEncoding", "utf-16")
    if negotiated != args.encoding:
        print(f"the server chose {negotiated}, not {args.encoding}", file=sys.stderr)
    encoding = negotiated
    server.notify("initialized", {})
    rss_start = server.rss_mb()
    warm_n, rss_warm = min(200, max(1, args.documents // 5)), float("nan")
    # The second half's slope: one-time loads (LibCST, on the first fix a code action builds)
    # happen early and would read as growth per document over the whole run.
    half_n, rss_half = max(warm_n + 1, args.documents // 2), float("nan")
    kinds = defaultdict(int)
    started = time.monotonic()
    done = 0
    while done < args.documents and time.monotonic() - started < args.seconds and not server.dead.is_set():
        text, kind = mutate(rng.choice(texts), rng, args.only)
        kinds[kind] += 1
        fuzz_document(server, done, text, kind, rng, tally, encoding, workdir)
        done += 1
        if done == warm_n:  # modules, jedi and rule caches are loaded by now
            rss_warm = server.rss_mb()
        if done == half_n:
            rss_half = server.rss_mb()
        if done % 250 == 0:
            print(f"... {done} documents, {time.monotonic() - started:.0f} s, server {server.rss_mb():.0f} MB", file=sys.stderr)
    rss_end = server.rss_mb()
    alive = not server.dead.is_set()
    if alive:
        server.request("shutdown", None, timeout=10)
        server.notify("exit", None)
    try:
        code = server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        code = "killed after 10 s"
    if not alive:
        tally.fail("crash", f"the server exited during the run ({server.proc.returncode}):\n" + "".join(server.stderr[-20:]))
    errors = [log for log in server.logs if log.get("type") == 1]
    for log in errors:
        tally.fail("error log message", log.get("message", ""))
    if any("Traceback" in line for line in server.stderr):
        tally.fail("traceback on stderr", "".join(server.stderr[-20:]))

    elapsed = time.monotonic() - started
    print(f"fuzz_server: {done} documents in {elapsed:.0f} s (seed {args.seed}, {encoding}), "
          f"mutations: {dict(sorted(kinds.items()))}")
    print(f"server exit: {code}; memory {rss_start:.0f} MB at start, {rss_warm:.0f} MB after {warm_n} documents, "
          f"{rss_end:.0f} MB at the end: {(rss_end - rss_warm) * 1024 / max(1, done - warm_n):.1f} KB per "
          f"later document, {(rss_end - rss_half) * 1024 / max(1, done - half_n):.1f} KB per document over the "
          "second half (each opened, edited, closed with a fresh copy)")
    for kind in ("crash", "error response", "error log message", "traceback on stderr",
                 "drifted document", "out-of-range position"):
        print(f"{kind + 's:':<24} {tally.counts.get(kind, 0)}")
        for example in tally.examples.get(kind, []):
            print(f"    {example}")
    print("latency (ms)              n      p50     p90     p99     max")
    for method, values in sorted(tally.latency.items()):
        ms = [v * 1000 for v in values]
        print(f"  {method:<24}{len(ms):>5} {percentile(ms, .5):>8.1f}{percentile(ms, .9):>8.1f}"
              f"{percentile(ms, .99):>8.1f}{max(ms):>8.1f}")
    return 1 if any(tally.counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
