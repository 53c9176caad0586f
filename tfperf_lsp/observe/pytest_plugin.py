"""``pytest --tfperf-observe``: observe a project's tests (registered as a pytest11 plugin).

Without the option this module does nothing and imports nothing heavy, since pytest loads it in
every run. With it, TensorFlow is instrumented before the test modules are imported, and at the
end the facts are printed and remembered for the editor (keyed by file content).
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone

OPTION = "--tfperf-observe"


def pytest_addoption(parser):
    group = parser.getgroup("tfperf")
    group.addoption(OPTION, action="store_true", default=False,
                    help="record tf.function traces (and their culprit arguments), host syncs and input stalls "
                         "per line while the tests run")
    group.addoption("--tfperf-observe-json", default=None, metavar="PATH",
                    help="with --tfperf-observe: also write the report as JSON to PATH")


def pytest_configure(config):
    if not config.getoption(OPTION):
        return
    from tfperf_lsp.observe import recorder

    recorder.install()
    config._tfperf_observe_started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config.getoption(OPTION):
        return
    import json

    from tfperf_lsp.observe import recorder
    from tfperf_lsp.observe.facts import facts_from_run, report_json, report_text
    from tfperf_lsp.observe.store import ObservationStore

    if recorder.RECORDER is None:
        return
    run = recorder.RECORDER.snapshot("finished" if exitstatus == 0 else "failed")
    command = ["pytest", *config.invocation_params.args]
    date = getattr(config, "_tfperf_observe_started", "")
    report = report_json(run, command, date)
    try:
        ObservationStore().put_run(run, facts_from_run(run), command, date)
    except OSError as exc:  # a read-only cache must not fail the test run
        terminalreporter.write_line(f"tfperf observe: facts not stored: {exc}")
    path = config.getoption("--tfperf-observe-json")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    terminalreporter.section("tfperf observe")
    for line in report_text(report, str(config.rootpath)).splitlines():
        terminalreporter.write_line(line)
    sys.stdout.flush()
