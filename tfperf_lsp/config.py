"""Settings: which rules run, at which severity, and the facts about the user's device.

Sources, later wins: built-in defaults, ``[tool.tfperf]`` of the nearest pyproject.toml, the
editor's ``tfperf`` settings (initializationOptions / workspace/configuration), a device probe
that the benchmark worker ran. The same ``Settings`` object drives the CLI and the server.

pyproject.toml::

    [tool.tfperf]
    ignore = ["TFP501", "xla"]      # rule codes or whole categories
    select = ["retrace", "TFP201"]  # optional: only these
    lint-tests = true               # rules in test code too (default: off)
    [tool.tfperf.rules]
    TFP101 = "error"                # a severity, or "off"
    [tool.tfperf.device]            # what to assume when no benchmark probe has run
    gpu = true
    compute_capability = "8.6"
    cpu_features = ["avx512_bf16"]
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from tfperf_lsp import selectors, settings_schema
from tfperf_lsp.model import Severity

_SEVERITIES = {s.value: s for s in Severity}


@dataclass(frozen=True)
class DeviceFacts:
    """What the precision rules may assume about where the code runs. ``None`` = unknown."""

    gpu: bool | None = None
    compute_capability: float | None = None
    cpu_features: frozenset[str] = frozenset()
    name: str | None = None
    source: str = "unknown"  # "probe", "flag", "comment", "config" or "unknown"

    def describe(self) -> str:
        """One line for reports: which device facts the device-dependent rules used, and whence."""
        if self.gpu is None:
            return "an unknown device, so they stayed silent (give --device or [tool.tfperf.device])"
        if self.gpu:
            what = f"GPU{f' cc {self.compute_capability:g}' if self.compute_capability else ''}"
        else:
            what = f"CPU{' with ' + ', '.join(sorted(self.cpu_features)) if self.cpu_features else ''}"
        whence = {"probe": "measured by the benchmark worker", "flag": "--device", "comment": "a `# tfperf: device=` comment",
                  "config": "[tool.tfperf.device]"}.get(self.source, self.source)
        return f"a {what} (from {whence})"


# Keys [tool.tfperf] understands (settings_schema says which); anything else gets a warning naming the nearest one.
PROJECT_KEYS = settings_schema.project_keys()


@dataclass(frozen=True)
class Settings:
    """Defaults and valid values are ``settings_schema``'s."""

    enabled: frozenset[str] | None = None  # rule codes; None = the defaults (every rule but opt-in ones)
    severities: dict[str, Severity] = field(default_factory=dict)
    inlay_hints: bool = settings_schema.default("inlayHints")
    code_lens: bool = settings_schema.default("codeLens")  # "Benchmark ..." lenses, only where a benchmark can run
    lint_on_change: bool = settings_schema.default("lintOnChange")
    device: DeviceFacts = DeviceFacts()
    keras_version: str | None = settings_schema.default("kerasVersion")  # "2" / "3" when known from the environment
    # performance rules in test code (off: tests are not where speed matters)
    lint_tests: bool = settings_schema.default("lintTests")
    problems: tuple[str, ...] = ()  # invalid settings, reported to the user, never fatal
    unknown_rules: tuple[str, ...] = ()  # selectors that name no rule (the CLI exits 2)
    # (root, glob, selectors): glob matched relative to root, as ruff's per-file-ignores
    per_file_ignores: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def enabled_codes(self) -> frozenset[str]:
        return self.enabled if self.enabled is not None else selectors.default_codes()

    def is_enabled(self, code: str, category: str = "") -> bool:
        if code not in selectors.all_codes():  # a rule outside the registry (tests): on by default
            return self.enabled is None
        return code in self.enabled_codes()

    def severity_for(self, code: str, default: Severity) -> Severity:
        return self.severities.get(code, default)

    def with_overrides(self, options: dict[str, Any] | None, root: str | None = None) -> "Settings":
        """Apply a settings layer (pyproject's [tool.tfperf], the editor's ``tfperf`` section or
        the command line) on top of this one; see ``selectors`` for the precedence."""
        if not options:
            return self
        problems = list(self.problems)
        unknown: list[str] = list(self.unknown_rules)
        severities = dict(self.severities)
        select = _option(options, "select")
        select_list = _string_list(select, "select", problems) if select is not None else None
        if not select_list:
            select_list = None  # an empty list (an editor's default) selects the defaults
        extend_select = _string_list(_option(options, "extend-select"), "extend-select", problems)
        ignore = _string_list(options.get("ignore"), "ignore", problems)
        ignore += _string_list(_option(options, "extend-ignore"), "extend-ignore", problems)
        enabled = set(selectors.apply_layer(self.enabled_codes(), select_list, extend_select, ignore, unknown))
        rules = options.get("rules") or {}
        if not isinstance(rules, dict):
            problems.append("`rules` must be a table of CODE = severity")
            rules = {}
        for code, value in rules.items():
            value = str(value).lower()
            selector = selectors.parse(code)
            if selector is None:
                unknown.append(code)
                continue
            if value == "off":
                enabled -= selector.codes
            elif value in _SEVERITIES:
                enabled |= selector.codes
                severities.update({c: _SEVERITIES[value] for c in selector.codes})
            else:
                problems.append(f"`rules.{code}` = {value!r}: expected {', '.join(settings_schema.SEVERITIES)}")
        per_file = self.per_file_ignores
        base = root or os.getcwd()
        if _option(options, "per-file-ignores") is not None:
            per_file = ()
        for key in ("per-file-ignores", "extend-per-file-ignores"):
            table = _option(options, key)
            if table is None:
                continue
            if not isinstance(table, dict):
                problems.append(f"`{key}` must be a table of \"glob\" = [rule codes]")
                continue
            for pattern, values in table.items():
                listed = _string_list(values, f"{key}.{pattern}", problems)
                unknown.extend(v for v in listed if selectors.parse(v) is None)
                per_file += ((base, str(pattern), tuple(listed)),)
        if unknown != list(self.unknown_rules):
            new = [u for u in unknown[len(self.unknown_rules):]]
            problems.append("unknown rule codes or selectors: " + ", ".join(dict.fromkeys(new)) + " (`tfperf rules` lists them)")
        device = _device_from(options.get("device"), self.device, problems)
        inlay = _boolean(options, "inlayHints", self.inlay_hints, problems)
        code_lens = _boolean(options, "codeLens", self.code_lens, problems)
        lint_on_change = _boolean(options, "lintOnChange", self.lint_on_change, problems)
        keras = _option(options, "keras-version") or self.keras_version
        lint_tests = _boolean(options, "lintTests", self.lint_tests, problems, "lint-tests")
        return replace(
            self,
            enabled=frozenset(enabled),
            severities=severities,
            inlay_hints=inlay,
            code_lens=code_lens,
            lint_on_change=lint_on_change,
            device=device,
            keras_version=str(keras) if keras else None,
            lint_tests=lint_tests,
            problems=tuple(problems),
            unknown_rules=tuple(dict.fromkeys(unknown)),
            per_file_ignores=per_file,
        )

    def for_file(self, path: str | None) -> "Settings":
        """Drop the rules that ``per-file-ignores`` turns off for ``path``."""
        if not path or not self.per_file_ignores:
            return self
        from tfperf_lsp.files import glob_matches

        off: set[str] = set()
        for root, pattern, values in self.per_file_ignores:
            if glob_matches(pattern, path, root):
                for value in values:
                    selector = selectors.parse(value)
                    off |= selector.codes if selector else set()
        return replace(self, enabled=self.enabled_codes() - off) if off else self

    def with_probe(self, device: dict[str, Any] | None, source: str = "probe") -> "Settings":
        """Device facts measured by the benchmark worker (or given with --device) beat configured ones."""
        if not device:
            return self
        capability = device.get("compute_capability")
        return replace(
            self,
            device=DeviceFacts(
                gpu=device.get("kind") == "gpu",
                compute_capability=_as_float(capability),
                cpu_features=frozenset(device.get("cpu_features") or ()),
                name=device.get("name"),
                source=source,
            ),
        )


def _string_list(value: Any, key: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        problems.append(f"`{key}` must be a list of rule codes or categories")
        return []
    return list(value)


def _boolean(options: dict[str, Any], key: str, keep: bool, problems: list[str], project_key: str | None = None) -> bool:
    """A true/false setting (``key`` as editors spell it, or ``project_key`` as pyproject does); anything
    else keeps ``keep`` and is reported."""
    value = options.get(project_key, options.get(key)) if project_key else options.get(key)
    if value is None:
        return keep
    used, problem = settings_schema.check_boolean(project_key or key, value, keep)
    if problem:
        problems.append(problem)
    return used


def _option(options: dict[str, Any], key: str) -> Any:
    """``extend-select`` in pyproject, ``extendSelect`` from an editor: both are accepted."""
    if key in options:
        return options[key]
    head, *rest = key.split("-")
    return options.get(head + "".join(part.title() for part in rest))


def unknown_keys(options: dict[str, Any], where: str) -> list[str]:
    """A warning per key of [tool.tfperf] that tfperf does not know, naming the nearest valid one."""
    import difflib

    messages = []
    for key in options:
        if key in PROJECT_KEYS:
            continue
        near = difflib.get_close_matches(key, PROJECT_KEYS, n=1, cutoff=0.6)
        hint = f"; did you mean `{near[0]}`?" if near else f"; valid keys: {', '.join(PROJECT_KEYS)}"
        messages.append(f"{where}: unknown key `{key}` in [tool.tfperf]{hint}")
    return messages


def _as_float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _device_from(table: Any, current: DeviceFacts, problems: list[str]) -> DeviceFacts:
    if table is None:
        return current
    if not isinstance(table, dict):
        problems.append("`device` must be a table")
        return current
    if current.source in ("probe", "flag"):
        return current  # measured or given on the command line beats configured
    gpu = table.get("gpu", current.gpu)
    return DeviceFacts(
        gpu=bool(gpu) if gpu is not None else None,
        compute_capability=_as_float(table.get("compute_capability", current.compute_capability)),
        cpu_features=frozenset(table.get("cpu_features", current.cpu_features) or ()),
        name=table.get("name", current.name),
        source="config",
    )


_PYPROJECT_CACHE: dict[str, tuple[float, dict[str, Any]]] = {}


def find_pyproject(start: str | None) -> str | None:
    """The nearest pyproject.toml at or above ``start`` (a file or directory)."""
    if not start:
        return None
    directory = start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start))
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def project_options(path: str | None) -> tuple[dict[str, Any], str | None]:
    """``[tool.tfperf]`` of the nearest pyproject.toml, and a problem message if it is broken."""
    pyproject = find_pyproject(path)
    if pyproject is None:
        return {}, None
    try:
        mtime = os.path.getmtime(pyproject)
        cached = _PYPROJECT_CACHE.get(pyproject)
        if cached and cached[0] == mtime:
            return cached[1], None
        with open(pyproject, "rb") as handle:
            options = tomllib.load(handle).get("tool", {}).get("tfperf", {}) or {}
        _PYPROJECT_CACHE[pyproject] = (mtime, options)
        return options, None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{pyproject}: cannot read [tool.tfperf]: {exc}"


def settings_for(path: str | None, editor_options: dict[str, Any] | None = None, base: Settings | None = None) -> Settings:
    """The settings for one file: defaults, its pyproject, then the editor's or the command line's
    options (which win), then the per-file ignores that match it."""
    pyproject = find_pyproject(path)
    options, problem = project_options(path)
    root = os.path.dirname(pyproject) if pyproject else None
    settings = (base or Settings()).with_overrides(options, root)
    extra = tuple(unknown_keys(options, pyproject)) if pyproject else ()
    if problem:
        extra += (problem,)
    if extra:
        settings = replace(settings, problems=settings.problems + extra)
    return settings.with_overrides(editor_options).for_file(path)


def parse_device_flag(spec: str) -> dict[str, Any]:
    """``--device``: ``cpu``, ``cpu:avx512_bf16,amx_bf16``, ``gpu`` or ``gpu:8.6`` (compute capability).

    Raises ValueError with the expected form."""
    kind, _, detail = spec.strip().lower().partition(":")
    if kind == "gpu":
        if detail and _as_float(detail) is None:
            raise ValueError(f"--device {spec!r}: expected gpu:<compute capability>, e.g. gpu:8.6")
        return {"kind": "gpu", "compute_capability": detail or None, "name": f"GPU {detail}".strip()}
    if kind == "cpu":
        return {"kind": "cpu", "cpu_features": [f for f in detail.split(",") if f], "name": "CPU"}
    raise ValueError(f"--device {spec!r}: expected cpu, cpu:<features>, gpu or gpu:<compute capability>")
