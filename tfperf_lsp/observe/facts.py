"""From what the observed process recorded to facts at source lines, and the CLI's report.
Pure Python (no TensorFlow): the server and the CLI use it."""
from __future__ import annotations

import collections
import os

from tfperf_lsp.observe.describe import ADVICE, changed, culprit_text

SYNC_NAMES = {"numpy": ".numpy()", "__float__": "float(tensor)", "__int__": "int(tensor)",
              "__bool__": "bool(tensor) / if tensor", "__index__": "tensor used as an index",
              "__array__": "np.asarray(tensor)", "branch": "Python if/while/assert on a tensor's value"}
SYNC_DIAGNOSTIC_AT = 5      # host syncs on one line before it is worth a diagnostic
INPUT_BOUND_AT = 0.3        # fraction of step time waiting for the next element
MIN_LOOP_STEPS = 3


def _is_user(path: str | None, run: dict) -> bool:
    return bool(path) and path in run.get("files", {})


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def _display_name(record: dict) -> str:
    if not record.get("user") and os.sep + "keras" + os.sep in record["file"]:
        return f"Keras {record['name']}"
    return record["name"]


# ---------------------------------------------------------------------------------- functions
def analyse_function(record: dict) -> dict:
    """Trace count, per-site counts and the culprit of the retraces of one source function."""
    traces = record["traces"]
    culprits = collections.Counter()
    per_site_culprits: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    for previous, trace in zip(traces, traces[1:]):
        if trace["serial"] != previous["serial"]:
            names = ["(new tf.function)"]
        else:
            names = changed(previous["args"], trace["args"]) or ["(unknown)"]
        for name in names:
            culprits[name] += 1
            per_site_culprits[tuple(trace["site"] or ())][name] += 1
    sites = collections.Counter(tuple(t["site"]) for t in traces if t["site"])
    summary = {
        "name": _display_name(record), "file": record["file"], "line": record["line"], "user": record["user"],
        "kind": record["kind"], "traces": record["trace_count"], "tf_count": record.get("tf_count"),
        "functions_created": len({t["serial"] for t in traces}),
        "sites": [{"file": s[0], "line": s[1], "traces": n,
                   "culprit": _culprit(record, per_site_culprits.get(s))} for s, n in sites.items()],
        "culprit": _culprit(record, culprits),
    }
    return summary


def _culprit(record: dict, counter) -> dict | None:
    if not counter:
        return None
    ranked = [name for name, _ in counter.most_common()]
    known = [name for name in ranked if name != "(unknown)"]  # a named culprit beats "no idea"
    name = (known or ranked)[0]
    traces = record["traces"]
    if name == "(new tf.function)":
        created = sorted({tuple(v) for v in record.get("created", {}).values()})
        where = f" (tf.function at line {created[0][1]})" if created else ""
        return {"argument": None, "text": f"a new tf.function is created for each call{where}",
                "advice": ADVICE["function"], "kind": "function"}
    if name == "(unknown)":
        return {"argument": None, "kind": "unknown", "advice": None,
                "text": "traced again with the same arguments (TensorFlow does so when a trace creates "
                        "variables, e.g. optimizer slots on the first step)"}
    descriptors = [t["args"].get(name) for t in traces]
    kinds = [d["kind"] for d in descriptors if d]
    kind = kinds[0] if kinds else "object"
    return {"argument": name, "text": culprit_text(name, descriptors), "advice": ADVICE.get(kind), "kind": kind}


# ---------------------------------------------------------------------------------- facts
def facts_from_run(run: dict) -> list[dict]:
    """Every fact at a user line: {file, line, kind, message, short, severity, diagnostic}."""
    facts: list[dict] = []

    def add(path, line, kind, message, short, severity="information", diagnostic=False, **extra):
        if _is_user(path, run) and line:
            facts.append({"file": path, "line": int(line), "kind": kind, "message": message, "short": short,
                          "severity": severity, "diagnostic": diagnostic, **extra})

    for record in run.get("functions", []):
        summary = analyse_function(record)
        if summary["traces"] == 0:
            continue
        name = summary["name"]
        for site in summary["sites"]:
            culprit = site["culprit"]
            if site["traces"] > 1:
                text = f"{name} traced {site['traces']}x here" + (f": {culprit['text']}" if culprit else "")
                advice = f" Fix: {culprit['advice']}." if culprit and culprit.get("advice") else ""
                add(site["file"], site["line"], "retrace", text + "." + advice,
                    f"traced {site['traces']}x" + (f": {culprit['text']}" if culprit else ""),
                    "warning", True, function=name, traces=site["traces"])
            else:
                add(site["file"], site["line"], "trace", f"{name} traced once here.", "traced 1x", "hint",
                    function=name, traces=1)
        if summary["user"]:
            total = summary["traces"]
            culprit = summary["culprit"]
            text = f"traced {total}x in this run" + (f": {culprit['text']}" if culprit and total > 1 else "")
            counter = summary["tf_count"]
            if counter is not None:
                text += f" (TensorFlow's tracing counter: {counter})"
            add(summary["file"], summary["line"], "retrace" if total > 1 else "trace", text + ".",
                f"traced {total}x", "hint", function=name, traces=total)
            if summary["functions_created"] > 1:
                for where in {tuple(v) for v in record.get("created", {}).values()}:
                    add(where[0], where[1], "retrace",
                        f"{summary['functions_created']} tf.function objects created here for {name}, each traced anew. "
                        f"Fix: {ADVICE['function']}.", f"{summary['functions_created']} tf.functions created",
                        "warning", True, function=name, traces=total)

    for call in run.get("calls", []):
        if not call.get("site"):
            continue
        steady = (call["steady_s"] / call["steady_n"]) if call["steady_n"] else None
        text = f"first call {_ms(call['first_s'])}"
        if steady is not None:
            text += f", then {_ms(steady)}/call x {call['steady_n']}"
        if call["traced_calls"] > 1:
            text += f"; {call['traced_calls']} of {call['n']} calls traced"
        add(call["site"][0], call["site"][1], "time", f"tf.function {text}.", text, "hint",
            first_s=call["first_s"], steady_s=steady, calls=call["n"])

    for sync in run.get("syncs", []):
        what = SYNC_NAMES.get(sync["method"], sync["method"])
        count = sync["count"]
        fix = (" Fix: decide on the device (tf.cond / tf.where / tf.while_loop inside a tf.function)."
               if sync["method"] == "branch" else "")
        add(sync["site"][0], sync["site"][1], "sync",
            f"host sync {count}x here ({what}): each one waits for the device and copies to Python.{fix}",
            f"{count} host syncs ({what})", "information", count >= SYNC_DIAGNOSTIC_AT, count=count)

    records = {r["key"]: r for r in run.get("functions", [])}
    for branch in run.get("shape_branches", []):
        record = records.get(branch["key"])
        name = _display_name(record) if record else branch["key"].rsplit(":", 1)[-1]
        total = record["trace_count"] if record else branch["traces"]
        what = "an if" if branch["branch"] == "if" else f"a {branch['branch']}" if branch["branch"] != "assert" \
            else "an assert"
        retraced = total > 1
        add(branch["site"][0], branch["site"][1], "shape-branch",
            f"{what} on a static shape, decided in Python while tracing {name} ({branch['traces']} of {total} traces): "
            "the graph is built for one shape, so each new shape traces again"
            + (" (an input_signature with None there would make the shape None here). Fix: branch on tf.shape(x) "
               "with tf.cond, or pad/bucket inputs to a few shapes." if retraced else "."),
            f"shape-driven branch ({branch['traces']} traces)", "warning" if retraced else "hint", retraced,
            function=name, traces=branch["traces"])

    def add_stall(site, built, wait_s: float, total_s: float, steps: int, waiter: str, consumer: str) -> None:
        """The input-wait fact at the consuming line; when input-bound, also at the line that
        built the dataset. ``waiter`` leads the message ("" for a loop, "Keras fit spent "),
        ``consumer`` is what the dataset keeps waiting ("the loop", "Keras fit")."""
        fraction = min(1.0, wait_s / total_s)
        bound = fraction >= INPUT_BOUND_AT
        label = "input-bound" if bound else "input"
        built_text = f" (dataset built at line {built[1]})" if built and built[0] == site[0] else ""
        add(site[0], site[1], "stall",
            f"{label}: {waiter}{fraction:.0%} of step time waiting for the next element over {steps} steps{built_text}."
            + (" Fix: prefetch, parallel map (num_parallel_calls=tf.data.AUTOTUNE), cache." if bound else ""),
            f"{label}: {fraction:.0%} waiting for input", "warning" if bound else "hint", bound, fraction=fraction)
        if bound and built:
            add(built[0], built[1], "stall",
                f"this dataset keeps {consumer} at line {site[1]} waiting {fraction:.0%} of step time.",
                f"input-bound: {fraction:.0%}", "warning", True, fraction=fraction)

    for loop in run.get("loops", []):
        if loop.get("site") and loop["steps"] >= MIN_LOOP_STEPS and loop["total_s"] > 0:
            add_stall(loop["site"], loop.get("dataset_site"), loop["wait_s"], loop["total_s"], loop["steps"],
                      "", "the loop")

    for call in run.get("keras", []):
        if not call.get("site"):
            continue
        if call.get("input_measured") and call.get("input_steps", 0) >= MIN_LOOP_STEPS and call["input_total_s"] > 0:
            add_stall(call["site"], call.get("dataset_site"), call["input_wait_s"], call["input_total_s"],
                      call["input_steps"], f"Keras {call['method']} spent ", f"Keras {call['method']}")
        text = f"{call['method']}: {_ms(call['wall_s'])}"
        if call["steps"]:
            text += f"; first step {_ms(call['first_step_s'])}"
            if call["steady_step_s"] is not None:
                text += f", then {_ms(call['steady_step_s'])}/step x {call['steps'] - 1}"
        if call.get("stopped_at_max_steps"):
            text += " (stopped at --max-steps)"
        add(call["site"][0], call["site"][1], "keras", f"Keras {text}.", text, "hint")
    return facts


def line_verdicts(facts: list[dict], path: str) -> dict[int, tuple[str, int]]:
    """Line -> ("confirmed", traces) or ("refuted", 1): what the run says about a static retrace
    hint on that line (1-based)."""
    verdicts: dict[int, tuple[str, int]] = {}
    for fact in facts:
        if fact["file"] != path or fact["kind"] not in ("retrace", "trace"):
            continue
        line, traces = fact["line"], fact.get("traces", 1)
        if fact["kind"] == "retrace":
            previous = verdicts.get(line)
            verdicts[line] = ("confirmed", max(traces, previous[1] if previous and previous[0] == "confirmed" else 0))
        elif line not in verdicts:
            verdicts[line] = ("refuted", 1)
    return verdicts


# ---------------------------------------------------------------------------------- report
def report_json(run: dict, command: list[str], date: str) -> dict:
    return {
        "command": command, "date": date, "status": run.get("status"), "error": run.get("error"),
        "tensorflow": run.get("tf"), "elapsed_s": run.get("elapsed_s"), "notes": run.get("notes", []),
        "functions": [analyse_function(r) for r in run.get("functions", []) if r["trace_count"]],
        "facts": facts_from_run(run),
    }


def report_text(report: dict, cwd: str | None = None) -> str:
    def rel(path):
        try:
            return os.path.relpath(path, cwd) if cwd and not path.startswith("<") else path
        except ValueError:
            return path

    lines = [f"tfperf observe: {' '.join(report['command'])}: {report['status']}"
             + (f" ({report['error']})" if report.get("error") else "")
             + f" after {report.get('elapsed_s') or 0:.1f} s, TensorFlow {report.get('tensorflow') or '?'}"]
    lines += [f"note: {n}" for n in report.get("notes", [])]
    functions = sorted(report["functions"], key=lambda f: (-f["traces"], f["file"], f["line"]))
    if functions:
        lines += ["", "Traces (per tf.function, by source line):"]
    for fn in functions:
        counter = f", TensorFlow's counter {fn['tf_count']}" if fn.get("tf_count") is not None else ""
        lines.append(f"  {rel(fn['file'])}:{fn['line']} {fn['name']}: traced {fn['traces']}x{counter}")
        if fn["traces"] > 1 and fn["culprit"]:
            advice = f" -> {fn['culprit']['advice']}" if fn["culprit"].get("advice") else ""
            lines.append(f"      culprit: {fn['culprit']['text']}{advice}")
        for site in sorted(fn["sites"], key=lambda s: (s["file"], s["line"])):
            lines.append(f"      {rel(site['file'])}:{site['line']}: {site['traces']}x from here")
    order = {"retrace": 0, "shape-branch": 1, "stall": 2, "sync": 3, "keras": 4, "time": 5}
    others = [f for f in report["facts"] if f["kind"] in order and f["kind"] != "retrace"]
    if others:
        lines += ["", "At the line:"]
    for fact in sorted(others, key=lambda f: (order[f["kind"]], f["file"], f["line"])):
        lines.append(f"  {rel(fact['file'])}:{fact['line']}: {fact['message']}")
    return "\n".join(lines) + "\n"
