"""Every tfperf setting in one table: its key, type, default, valid range and meaning.

The server (initializationOptions / the ``tfperf`` section of workspace/configuration), the
benchmark service, the command line and ``[tool.tfperf]`` read their defaults and ranges here,
and ``client-vscode/package.json``'s ``contributes.configuration`` is generated from it::

    python -m tfperf_lsp.settings_schema --package-json   # rewrite the block in package.json
    python -m tfperf_lsp.settings_schema --check          # exit 1 when package.json is out of step

A number outside its range is clamped to the nearest bound and the user is told (the server logs
a settings warning, the CLI prints one, the VS Code client shows one); a value of the wrong type
keeps the previous good value (or the default), also with a message. Nothing is changed silently.

This module imports nothing from tfperf, so anything may import it.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

# Where a setting is read. EDITOR: contributed by the VS Code extension (package.json); SERVER: read
# by the language server from initializationOptions / workspace configuration; the pyproject key
# (``project``) says whether [tool.tfperf] accepts it too.
EDITOR = "editor"
SERVER = "server"

SEVERITIES = ("off", "error", "warning", "information", "hint")
LOG_LEVELS = ("error", "warning", "info", "debug")
DEVICE_PATTERN = r"^(auto|cpu|gpu(:[0-9]+)?)$"


@dataclass(frozen=True)
class Setting:
    key: str  # as the editor names it below `tfperf.` (and initializationOptions, nested at the dots)
    type: str  # JSON schema type: boolean, number, string, array, object
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[str, ...] = ()
    enum_descriptions: tuple[str, ...] = ()
    pattern: str | None = None
    pattern_error: str | None = None
    items: str | None = None  # the item type of an array
    additional_properties: Any = None  # JSON schema of an object's values (package.json)
    scope: str = "resource"  # VS Code's configuration scope
    markdown: bool = False  # the description uses markdown (package.json's markdownDescription)
    readers: frozenset[str] = frozenset({EDITOR, SERVER})
    project: str | None = None  # its key in [tool.tfperf], when pyproject.toml accepts it
    cli: str | None = None  # the command-line option that sets it, when there is one

    @property
    def editor(self) -> bool:
        return EDITOR in self.readers

    @property
    def server(self) -> bool:
        return SERVER in self.readers

    def full_description(self) -> str:
        """The description with the valid range, as package.json shows it."""
        bounds = self.range_text()
        return f"{self.description[:-1]} ({bounds})." if bounds else self.description

    def range_text(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"{self.minimum:g} to {self.maximum:g}"
        if self.minimum is not None:
            return f"at least {self.minimum:g}"
        if self.maximum is not None:
            return f"at most {self.maximum:g}"
        return ""


_BOTH = frozenset({EDITOR, SERVER})
_EDITOR_ONLY = frozenset({EDITOR})
_SERVER_ONLY = frozenset({SERVER})
_PROJECT_ONLY: frozenset[str] = frozenset()

SETTINGS: tuple[Setting, ...] = (
    Setting("interpreter", "string", "", markdown=True, readers=_EDITOR_ONLY,
            description="Python that runs the tfperf server and its benchmark worker; use the environment that has "
                        "TensorFlow. Empty = the Python extension's active environment. Supports `${workspaceFolder}`, "
                        "`${userHome}`, `${env:NAME}` and `~`. Changing it restarts the server."),
    Setting("importStrategy", "string", "useBundled", scope="window", readers=_EDITOR_ONLY, markdown=True,
            enum=("useBundled", "fromEnvironment"),
            enum_descriptions=("Run the tfperf server shipped inside the extension (with its libraries) on the selected "
                               "interpreter; nothing is installed into your environment.",
                               "Run the tfperf installed in the selected interpreter's environment (pip-install it there)."),
            description="Which tfperf server runs: the copy bundled with the extension (`useBundled`, the default) or "
                        "the one installed in the interpreter's environment (`fromEnvironment`). Either way the "
                        "selected interpreter runs it and benchmarks. An extension built without the bundle falls back "
                        "to `fromEnvironment` and says so. Changing it restarts the server."),
    Setting("rules", "object", {}, markdown=True, project="rules",
            additional_properties={"anyOf": [{"type": "string", "enum": list(SEVERITIES)}, {"type": "boolean"}]},
            description="Per-rule severity, e.g. `{\"TFP101\": \"off\", \"TFP203\": \"error\"}`. Rules not listed keep "
                        "their default severity."),
    Setting("inlayHints", "boolean", True, project="inlayHints",
            description="Show tfperf's inlay hints (for example the cost of a retrace)."),
    Setting("codeLens", "boolean", True, markdown=True, project="codeLens",
            description="Show a \"Benchmark ...\" code lens above findings that a benchmark can run for (a trusted "
                        "workspace, inputs known). The squiggle and the inlay hint stay either way."),
    Setting("lintOnChange", "boolean", True, project="lintOnChange",
            description="Analyze while you type. Off: analyze when the file is opened or saved."),
    Setting("showNotifications", "string", "always", scope="machine", readers=_EDITOR_ONLY,
            enum=("off", "onError", "onWarning", "always"),
            enum_descriptions=("Never pop up a message; everything goes to the tfperf output channel.",
                               "Pop up errors only.", "Pop up errors and warnings.", "Pop up every message (the default)."),
            description="When tfperf shows a message instead of only writing it to its output channel."),
    Setting("benchmark.timeBudget", "number", 3.0, minimum=0.2, maximum=10.0, cli="--budget",
            description="Seconds of timed runs per benchmark."),
    Setting("benchmark.timeout", "number", 60.0, minimum=5.0, maximum=3600.0, cli="--timeout",
            description="Wall-clock limit of one benchmark job, in seconds, from when a ready worker gets it."),
    Setting("benchmark.device", "string", "auto", pattern=DEVICE_PATTERN, pattern_error="auto, cpu or gpu:N",
            markdown=True, cli="--device", description="Where benchmarks run: `auto`, `cpu` or `gpu:N`."),
    Setting("benchmark.maxInputMB", "number", 512.0, minimum=1.0,
            description="Synthesized benchmark inputs are scaled down to fit this many MB."),
    Setting("benchmark.memoryLimitMB", "number", 4096.0, minimum=256.0,
            description="Resident-memory limit of the benchmark worker (and its children), in MB."),
    Setting("benchmark.workerCommand", "array", [], items="string", scope="machine-overridable", markdown=True,
            cli="--worker",
            description="Command prefix that runs Python for benchmarks, e.g. `[\"ssh\", \"gpu-box\", \"python3\"]`. "
                        "Empty = the interpreter that runs the server. Ignored in Restricted Mode."),
    Setting("logLevel", "string", "info", enum=LOG_LEVELS, scope="window",
            description="How much the server writes to the tfperf output channel."),
    Setting("trace.server", "string", "off", enum=("off", "messages", "verbose"), scope="window", readers=_EDITOR_ONLY,
            description="Traces the LSP messages between VS Code and the server (in the tfperf output channel)."),
    # Read by the server (sent by an editor, or in [tool.tfperf]); the VS Code extension does not contribute them.
    Setting("workspaceTrusted", "boolean", True, readers=_SERVER_ONLY,
            description="Whether benchmarks (which run the user's code) may run; the VS Code client sends its workspace "
                        "trust. Editors without workspace trust need not send it."),
    Setting("select", "array", [], items="string", readers=_SERVER_ONLY, project="select", cli="--select",
            description="Only these rules (codes, prefixes, categories or names); empty = the defaults."),
    Setting("extendSelect", "array", [], items="string", readers=_SERVER_ONLY, project="extend-select",
            cli="--extend-select", description="Rules to turn on as well as the selected ones."),
    Setting("ignore", "array", [], items="string", readers=_SERVER_ONLY, project="ignore", cli="--ignore",
            description="Rules to turn off."),
    Setting("extendIgnore", "array", [], items="string", readers=_SERVER_ONLY, project="extend-ignore",
            cli="--extend-ignore", description="Rules to turn off as well."),
    Setting("lintTests", "boolean", False, readers=_SERVER_ONLY, project="lint-tests",
            description="Rules in test code too (off: test modules, TestCase classes and test_* functions are not checked)."),
    Setting("kerasVersion", "string", None, readers=_SERVER_ONLY, project="keras-version",
            description="\"2\" or \"3\": overrides the Keras version read from the imports and the environment."),
    Setting("device", "object", None, readers=_SERVER_ONLY, project="device",
            description="What device-dependent rules assume when no benchmark probe ran: gpu, compute_capability, "
                        "cpu_features."),
    # [tool.tfperf] only (the command line has flags of the same names).
    Setting("perFileIgnores", "object", {}, readers=_PROJECT_ONLY, project="per-file-ignores", cli="--per-file-ignores",
            description="\"glob\" = [rules]: rules turned off in matching files."),
    Setting("extendPerFileIgnores", "object", {}, readers=_PROJECT_ONLY, project="extend-per-file-ignores",
            cli="--extend-per-file-ignores", description="As per-file-ignores, added to them."),
    Setting("exclude", "array", [
        ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
        ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
        ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
        "venv"], items="string", readers=_PROJECT_ONLY, project="exclude", cli="--exclude",
            description="Files and folders to skip (replaces the default list, as ruff's)."),
    Setting("extendExclude", "array", [], items="string", readers=_PROJECT_ONLY, project="extend-exclude",
            cli="--extend-exclude", description="Files and folders to skip as well."),
    Setting("respectGitignore", "boolean", True, readers=_PROJECT_ONLY, project="respect-gitignore",
            cli="--respect-gitignore", description="Skip what .gitignore ignores."),
    Setting("forceExclude", "boolean", False, readers=_PROJECT_ONLY, project="force-exclude", cli="--force-exclude",
            description="Apply exclude to files named on the command line too."),
    Setting("include", "array", [".py", ".pyi", ".ipynb"], items="string", readers=_PROJECT_ONLY, project="include",
            description="File extensions a directory walk reads."),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

# Accepted in [tool.tfperf] under another spelling as well (editors' camelCase).
_PROJECT_ALIASES = {"keras-version": "kerasVersion", "lint-tests": "lintTests"}


def setting(key: str) -> Setting:
    return BY_KEY[key]


def default(key: str) -> Any:
    value = BY_KEY[key].default
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def editor_settings() -> tuple[Setting, ...]:
    return tuple(s for s in SETTINGS if s.editor)


def server_settings() -> tuple[Setting, ...]:
    return tuple(s for s in SETTINGS if s.server)


def project_keys() -> tuple[str, ...]:
    """Keys [tool.tfperf] understands (with the editor spellings it accepts too)."""
    keys: list[str] = []
    for s in SETTINGS:
        if s.project:
            keys.append(s.project)
            if s.project in _PROJECT_ALIASES:
                keys.append(_PROJECT_ALIASES[s.project])
    return tuple(keys)


# ---------------------------------------------------------------------- checking values
def check_number(key: str, value: Any, keep: float) -> tuple[float, str | None]:
    """A number setting's value to use, and what was wrong with it (None: nothing).

    Not a number: ``keep`` (the previous good value, or the default). Outside the range: the
    nearest bound. Either way the message says what was given and what is used."""
    s = BY_KEY[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return keep, f"{key}: {value!r} is not a number; keeping {keep:g}"
    number = float(value)
    if s.minimum is not None and number < s.minimum:
        return s.minimum, f"{key} = {number:g} is below the minimum {s.minimum:g}; using {s.minimum:g}"
    if s.maximum is not None and number > s.maximum:
        return s.maximum, f"{key} = {number:g} is above the maximum {s.maximum:g}; using {s.maximum:g}"
    return number, None


def check_boolean(key: str, value: Any, keep: bool) -> tuple[bool, str | None]:
    if isinstance(value, bool):
        return value, None
    return keep, f"{key}: {value!r} is not true or false; keeping {str(keep).lower()}"


def check_enum(key: str, value: Any, keep: str, aliases: dict[str, str] | None = None) -> tuple[str, str | None]:
    """One of the setting's allowed values (compared without case; ``aliases`` map other spellings)."""
    allowed = BY_KEY[key].enum
    if isinstance(value, str):
        lowered = value.strip().lower()
        lowered = (aliases or {}).get(lowered, lowered)
        for choice in allowed:
            if choice.lower() == lowered:
                return choice, None
    return keep, f"{key}: {value!r} is not one of {', '.join(allowed)}; keeping {keep}"


def normalize_device(value: Any) -> str | None:
    """``auto``, ``cpu``, ``gpu:N``; a bare ``gpu`` is the first GPU. None: not a device."""
    if not isinstance(value, str):
        return None
    v = value.strip().lower()
    if not re.match(DEVICE_PATTERN, v):
        return None
    return "gpu:0" if v == "gpu" else v


def check_device(key: str, value: Any, keep: str) -> tuple[str, str | None]:
    device = normalize_device(value)
    if device is None:
        return keep, f"{key}: {value!r} is not auto, cpu or gpu:N; keeping {keep}"
    return device, None


# ---------------------------------------------------------------------- package.json
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_JSON = os.path.join(ROOT, "client-vscode", "package.json")


def package_json_property(s: Setting) -> dict[str, Any]:
    """The JSON schema VS Code gets for one setting (it enforces type, minimum, maximum, enum, pattern)."""
    prop: dict[str, Any] = {"type": s.type}
    if s.items:
        prop["items"] = {"type": s.items}
    prop["default"] = s.default
    if s.minimum is not None:
        prop["minimum"] = s.minimum
    if s.maximum is not None:
        prop["maximum"] = s.maximum
    if s.enum:
        prop["enum"] = list(s.enum)
    if s.enum_descriptions:
        prop["enumDescriptions"] = list(s.enum_descriptions)
    if s.pattern:
        prop["pattern"] = s.pattern
        prop["patternErrorMessage"] = s.pattern_error
    if s.additional_properties is not None:
        prop["additionalProperties"] = s.additional_properties
    prop["scope"] = s.scope
    prop["markdownDescription" if s.markdown else "description"] = s.full_description()
    return json.loads(json.dumps(prop), parse_float=_json_number)  # 3.0 -> 3, as written by hand


def _json_number(text: str) -> float | int:
    number = float(text)
    return int(number) if number.is_integer() else number


def configuration_block() -> dict[str, Any]:
    return {"title": "tfperf", "properties": {f"tfperf.{s.key}": package_json_property(s) for s in editor_settings()}}


def render_package_json(text: str) -> str:
    manifest = json.loads(text)
    manifest.setdefault("contributes", {})["configuration"] = configuration_block()
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tfperf_lsp.settings_schema", description=__doc__.split("\n")[0])
    parser.add_argument("--package-json", action="store_true", help="rewrite contributes.configuration in client-vscode/package.json")
    parser.add_argument("--check", action="store_true", help="exit 1 when client-vscode/package.json is out of step")
    parser.add_argument("--path", default=PACKAGE_JSON, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    with open(args.path, encoding="utf-8") as handle:
        text = handle.read()
    wanted = render_package_json(text)
    if args.check:
        if wanted != text:
            print(f"{args.path}: contributes.configuration differs from tfperf_lsp/settings_schema.py; "
                  "run `python -m tfperf_lsp.settings_schema --package-json`", file=sys.stderr)
            return 1
        return 0
    if args.package_json:
        if wanted != text:
            with open(args.path, "w", encoding="utf-8") as handle:
                handle.write(wanted)
            print(f"updated {args.path}")
        return 0
    for s in SETTINGS:
        where = ", ".join(sorted(s.readers | ({"project"} if s.project else set())))
        print(f"{s.key:28} {s.type:8} default {json.dumps(s.default)[:40]:42} {s.range_text():14} [{where}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
