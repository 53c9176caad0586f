"""One settings schema (tfperf_lsp/settings_schema.py): package.json, the READMEs, the contract,
the server, the benchmark service and the CLI all agree with it."""
import json
import os
import re
import subprocess
import sys

import pytest

from tfperf_lsp import settings_schema as schema
from tfperf_lsp.bench import protocol
from tfperf_lsp.bench.service import BenchSettings
from tfperf_lsp.config import PROJECT_KEYS, Settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as handle:
        return handle.read()


def test_package_json_configuration_is_generated_from_the_schema():
    text = read("client-vscode", "package.json")
    assert schema.render_package_json(text) == text, "run `python -m tfperf_lsp.settings_schema --package-json`"


def test_package_json_has_every_editor_setting_with_its_type_default_and_range():
    properties = json.loads(read("client-vscode", "package.json"))["contributes"]["configuration"]["properties"]
    assert sorted(properties) == sorted(f"tfperf.{s.key}" for s in schema.editor_settings())
    for s in schema.editor_settings():
        prop = properties[f"tfperf.{s.key}"]
        assert prop["type"] == s.type, s.key
        assert prop["default"] == s.default, s.key
        assert prop.get("minimum") == s.minimum and prop.get("maximum") == s.maximum, s.key
        assert tuple(prop.get("enum", ())) == s.enum, s.key
        assert prop.get("pattern") == s.pattern, s.key


def test_check_mode_fails_when_package_json_is_out_of_step(tmp_path):
    manifest = json.loads(read("client-vscode", "package.json"))
    manifest["contributes"]["configuration"]["properties"]["tfperf.benchmark.timeout"]["minimum"] = 1
    stale = tmp_path / "package.json"
    stale.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    assert schema.main(["--check", "--path", str(stale)]) == 1
    assert schema.main(["--package-json", "--path", str(stale)]) == 0
    assert schema.main(["--check", "--path", str(stale)]) == 0
    assert json.loads(stale.read_text())["contributes"]["configuration"]["properties"]["tfperf.benchmark.timeout"]["minimum"] == 5


def _client_readme_rows():
    section = read("client-vscode", "README.md").split("## Settings", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(r"^\| `tfperf\.([\w.]+)` \| `([^`]*)` \| (.*) \|$", section, re.MULTILINE)}


def test_client_readme_settings_table_lists_every_editor_setting_with_its_default_and_range():
    rows = _client_readme_rows()
    assert sorted(rows) == sorted(s.key for s in schema.editor_settings())
    for s in schema.editor_settings():
        shown, meaning = rows[s.key]
        expected = s.default if s.default and isinstance(s.default, str) else json.dumps(s.default, separators=(",", ":"))
        if isinstance(s.default, float) and s.default.is_integer():
            expected = str(int(s.default))
        assert shown == expected, s.key
        if s.minimum is not None and s.maximum is not None:
            assert f"({s.minimum:g}–{s.maximum:g})" in meaning, s.key
        elif s.minimum is not None:
            assert f"at least {s.minimum:g}" in meaning, s.key


def test_readme_configuration_names_every_editor_setting_the_server_reads_and_no_other():
    readme = read("README.md")
    paragraph = readme[readme.index("Editor settings (`tfperf` section:"):]
    paragraph = paragraph[:paragraph.index("are applied on top")]
    named = {name for name in re.findall(r"`([\w.]+)`", paragraph) if name != "tfperf"}
    wanted = {s.key for s in schema.SETTINGS if s.editor and s.server}
    assert named == wanted
    for key in ("benchmark.timeBudget", "benchmark.timeout"):
        s = schema.setting(key)
        assert f"`{key}` ({s.minimum:g} to {s.maximum:g} s)" in paragraph


def test_contract_lists_the_server_settings_with_their_defaults():
    contract = read("docs", "contract.md")
    block = contract.split("### initializationOptions", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    named = set(re.findall(r'"(\w+)":', block))
    server_keys = {s.key.split(".")[-1] for s in schema.server_settings()} | {"benchmark"}
    assert named - {"gpu", "compute_capability", "TFP101"} == server_keys  # (example values)
    for s in schema.server_settings():
        if s.key.startswith("benchmark.") and s.type == "number":
            line = re.search(rf'"{s.key.split(".")[1]}": ([\d.]+),\s*//(.*)', block)
            assert float(line.group(1)) == s.default, s.key
            assert s.range_text() in line.group(2), s.key


def test_python_defaults_are_the_schema_defaults():
    bench = BenchSettings()
    assert (bench.time_budget, bench.timeout, bench.device, bench.max_input_mb, bench.memory_limit_mb, bench.worker_command) == (
        schema.default("benchmark.timeBudget"), schema.default("benchmark.timeout"), schema.default("benchmark.device"),
        schema.default("benchmark.maxInputMB"), schema.default("benchmark.memoryLimitMB"), schema.default("benchmark.workerCommand"))
    settings = Settings()
    assert (settings.inlay_hints, settings.code_lens, settings.lint_on_change, settings.lint_tests) == (
        schema.default("inlayHints"), schema.default("codeLens"), schema.default("lintOnChange"), schema.default("lintTests"))
    assert schema.setting("benchmark.timeBudget").maximum == protocol.MAX_BUDGET_S  # the worker refuses more
    assert set(PROJECT_KEYS) >= {s.project for s in schema.SETTINGS if s.project}
    assert BenchSettings().worker_command is not BenchSettings().worker_command  # no shared mutable default


@pytest.mark.parametrize("key, attr, given, used, words", [
    ("timeout", "timeout", 1, 5.0, "benchmark.timeout = 1 is below the minimum 5; using 5"),
    ("timeout", "timeout", 7200, 3600.0, "benchmark.timeout = 7200 is above the maximum 3600; using 3600"),
    ("timeBudget", "time_budget", 0.1, 0.2, "benchmark.timeBudget = 0.1 is below the minimum 0.2; using 0.2"),
    ("timeBudget", "time_budget", 60, 10.0, "benchmark.timeBudget = 60 is above the maximum 10; using 10"),
    ("memoryLimitMB", "memory_limit_mb", 100, 256.0, "benchmark.memoryLimitMB = 100 is below the minimum 256; using 256"),
    ("maxInputMB", "max_input_mb", 0, 1.0, "benchmark.maxInputMB = 0 is below the minimum 1; using 1"),
    ("timeout", "timeout", "soon", 60.0, "benchmark.timeout: 'soon' is not a number; keeping 60"),
    ("timeout", "timeout", True, 60.0, "benchmark.timeout: True is not a number; keeping 60"),
    ("device", "device", "tpu", "auto", "benchmark.device: 'tpu' is not auto, cpu or gpu:N; keeping auto"),
])
def test_a_bad_benchmark_setting_is_clamped_or_kept_and_reported(key, attr, given, used, words):
    settings, problems = BenchSettings.parse({key: given})
    assert getattr(settings, attr) == used
    assert problems == [words]


def test_values_in_range_pass_unchanged_and_a_device_is_normalized_as_the_client_does():
    settings, problems = BenchSettings.parse({"timeout": 5, "timeBudget": 10, "device": "GPU", "maxInputMB": 1})
    assert problems == []
    assert (settings.timeout, settings.time_budget, settings.device, settings.max_input_mb) == (5, 10, "gpu:0", 1)
    assert BenchSettings.parse({"device": " CPU "})[0].device == "cpu"


def test_a_wrong_type_keeps_the_previous_good_value():
    previous = BenchSettings(timeout=120.0)
    assert BenchSettings.parse({"timeout": "abc"}, previous)[0].timeout == 120.0


def test_editor_booleans_and_log_level_are_checked_against_the_schema():
    settings = Settings().with_overrides({"inlayHints": "yes", "codeLens": False, "lint-tests": 1})
    assert settings.inlay_hints is True and settings.code_lens is False and settings.lint_tests is False
    assert "inlayHints: 'yes' is not true or false; keeping true" in settings.problems
    assert "lint-tests: 1 is not true or false; keeping false" in settings.problems
    assert schema.check_enum("logLevel", "WARN", "info", aliases={"warn": "warning"}) == ("warning", None)
    assert schema.check_enum("logLevel", "chatty", "info")[1] == "logLevel: 'chatty' is not one of error, warning, info, debug; keeping info"


def test_the_cli_reports_an_out_of_range_timeout_in_its_own_words(tmp_path):
    source = tmp_path / "empty.py"
    source.write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": ROOT}
    run = subprocess.run([sys.executable, "-m", "tfperf_lsp.cli", "bench", str(source), "--timeout", "1"],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    # the flags are checked first; with no finding to benchmark no worker starts
    assert run.returncode == 0, run.stderr
    assert "tfperf bench: --timeout = 1 is below the minimum 5; using 5" in run.stderr
    assert "no finding to benchmark" in run.stderr


def test_cli_help_takes_ranges_and_defaults_from_the_schema():
    import argparse

    from tfperf_lsp.cli import _parser

    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in commands.choices["bench"]._actions}
    assert "5 to 3600; default 60" in helps["timeout"]
    assert "0.2 to 10; default 3" in helps["budget"]


def test_the_server_clamps_reports_once_and_keeps_last_good_values(caplog, tmp_path, monkeypatch):
    monkeypatch.setenv("TFPERF_CACHE_DIR", str(tmp_path))
    from tfperf_lsp.lsp.state import ServerState

    state = ServerState(server=None)
    with caplog.at_level("WARNING", logger="tfperf_lsp"):
        for _ in range(2):
            state.update_options({"benchmark": {"timeout": 1, "device": "GPU"}, "inlayHints": "yes", "logLevel": "chatty"})
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "settings: benchmark.timeout = 1 is below the minimum 5; using 5",
        "settings: logLevel: 'chatty' is not one of error, warning, info, debug; keeping info",
        "settings: inlayHints: 'yes' is not true or false; keeping true",
    ]
    assert state.bench.settings.timeout == 5 and state.bench.settings.device == "gpu:0"
    assert state.options["logLevel"] == "info"
    state.bench.close()
