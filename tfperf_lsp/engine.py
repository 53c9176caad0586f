"""The analysis engine: source text in, findings out. Knows nothing of LSP or the terminal.

One parse per call (stdlib ``ast``), one ``ModuleFacts`` shared by every rule. A rule that raises
is reported in ``rule_errors`` and the other rules still run. Fixes are built on demand
(``fix_for``), because they need LibCST and most findings are never fixed.
"""
from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field, replace

from tfperf_lsp import blank_line_edit, collector, selectors, suppressions
from tfperf_lsp.blank_line_edit import RuleOutput
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.reparse import Parsed
from tfperf_lsp.analysis.source import ParseError, SourceText
from tfperf_lsp.config import Settings
from tfperf_lsp.model import EAGER_ADVICE_CATEGORIES, PERFORMANCE_CATEGORIES, TF2_API_ADVICE_CATEGORIES, Finding, Fix
from tfperf_lsp.rules import ALL_RULES, Example, Rule, rule_by_code
from tfperf_lsp.rules.context import RuleContext

log = logging.getLogger(__name__)

_SUPPRESSION = suppressions.TFPERF


@dataclass
class Analysis:
    source: SourceText
    findings: list[Finding]
    parse_error: ParseError | None = None
    rule_errors: list[tuple[str, str]] = field(default_factory=list)  # (rule code, traceback)
    ctx: RuleContext | None = None
    # True when the file does not parse and the findings were carried over from the last
    # version that did, for the lines that did not change.
    stale: bool = False
    # The rules' findings before the filters: the next version re-uses them after an edit that
    # only adds or removes blank lines (blank_line_edit).
    rule_output: RuleOutput | None = None

    def finding(self, finding_id: str) -> Finding | None:
        return next((f for f in self.findings if f.id == finding_id), None)


def analyze(
    text: str,
    path: str | None = None,
    settings: Settings | None = None,
    workspace=None,
    rules: list[Rule] | None = None,
    previous: Parsed | None = None,
    earlier: RuleOutput | None = None,
) -> Analysis:
    """Findings of ``text``. ``previous``, an earlier version of the same file with its tree,
    lets the parse re-use the statements an edit did not touch; ``earlier``, the rule output of
    that version, is re-used when the edit only added or removed blank lines between statements
    (the result is the same either way)."""
    with collector.paused():
        return _analyze(text, path, settings or Settings(), workspace, rules, previous, earlier)


def _analyze(text: str, path: str | None, settings: Settings, workspace, rules: list[Rule] | None,
             previous: Parsed | None, earlier: RuleOutput | None) -> Analysis:
    source = SourceText(text, path)
    # Before the parse: it may move the statements below the edit, which ``previous`` shares.
    gap = None
    if earlier is not None and previous is not None and rules is None:
        gap = blank_line_edit.blank_gap(earlier, previous.lines, previous.tree, source.lines, settings, workspace)
    tree = source.parse(previous)
    if isinstance(tree, ParseError):
        return Analysis(source, [], parse_error=tree)
    facts = ModuleFacts(tree, source, previous.statement_walks if previous is not None else None,
                        previous.imports if previous is not None else None,
                        previous.structure if previous is not None else None,
                        previous.parents if previous is not None else None)
    ctx = RuleContext(source, facts, settings, path, workspace)
    output = None
    if gap is not None and earlier is not None:
        output = blank_line_edit.relocated(earlier, gap, ctx)
        if output is not None:
            ctx.dependencies.update(path for path, _ in output.dependencies)  # still read: a change re-analyses
    if output is None:
        output = _run_rules(ctx, rules or ALL_RULES)
    comments = suppressions.parse(source.lines) if ("noqa" in text or "tfperf:" in text) else []
    # suppressions before the cold filter: a used suppression stays used
    kept = set(map(id, suppressions.apply(list(output.findings), comments)))
    findings = [f for f, cold in zip(output.findings, output.cold) if id(f) in kept and not cold]
    findings = _fixed_further_down(ctx, findings)
    if comments and settings.is_enabled(suppressions.UNUSED_CODE):
        # after every other rule ran: a suppression is unused only if nothing it names was found
        enabled = set(settings.enabled_codes())
        findings += suppressions.unused(comments, set(selectors.all_codes()), enabled)
    findings.sort(key=lambda f: (f.span.start, f.code))
    return Analysis(source, _dedupe(findings), rule_errors=list(output.errors), ctx=ctx, rule_output=output)


def _run_rules(ctx: RuleContext, rules: list[Rule]) -> RuleOutput:
    """Every enabled rule over the module, with what the cold-code filter will drop and the
    versions of the other files they read (for blank_line_edit to re-use them)."""
    settings = ctx.settings
    findings: list[Finding] = []
    errors: list[tuple[str, str]] = []
    for rule in rules:
        if not settings.is_enabled(rule.code, rule.category):
            continue
        try:
            for finding in rule.check(ctx):
                finding.severity = settings.severity_for(rule.code, finding.severity)
                findings.append(finding)
        except Exception:  # noqa: BLE001 - one broken rule must not hide the others
            errors.append((rule.code, traceback.format_exc()))
    workspace = ctx.workspace
    stamps = tuple((path, workspace.stamp_of(path)) for path in sorted(ctx.dependencies)) if workspace else ()
    return RuleOutput(tuple(findings), tuple(_cold(ctx, f) for f in findings), tuple(errors), settings, stamps,
                      reusable=not getattr(workspace, "pending", None))


def fix_for(analysis: Analysis, finding: Finding) -> Fix | None:
    """Build the edits of a finding's fix. None if the rule has no fix here, or the analysis is stale."""
    if finding.fix_title is None or analysis.ctx is None or analysis.stale:
        return None
    if finding.build_fix is None:
        return None
    try:
        fix = finding.build_fix()
    except Exception:  # noqa: BLE001 - a fix that cannot be built is not offered; nothing else breaks
        log.warning("the fix for %s cannot be built:\n%s", finding.id, traceback.format_exc())
        return None
    if fix is not None and fix.applicability != finding.fix_applicability:
        fix = replace(fix, applicability=finding.fix_applicability)
    return fix


def fixed_text(text: str, codes: set[str], settings: Settings | None = None, path: str | None = None,
               rounds: int = 20) -> str:
    """``text`` after every fix (safe and unsafe) of the rules ``codes``, one at a time,
    re-analysing between them (what a user applying them one by one gets). Stops early where a
    fix cannot be built. Used for the docs' "Use instead" and by the rule tests."""
    from tfperf_lsp.rewrite.edits import apply_edits

    for _ in range(rounds):
        analysis = analyze(text, path, settings)
        todo = [f for f in analysis.findings if f.code in codes and f.fix_title]
        fix = fix_for(analysis, todo[0]) if todo else None
        if fix is None or not fix.edits:
            return text
        text = apply_edits(text, fix.edits)
    return text


def fixed_example(rule: Rule, example: Example) -> str | None:
    """A rule's example after the rule's fixes, None if it offers none there: computed by the
    fix itself (the rule's snapshot in tests/rules/snapshots pins it), never written twice."""
    fixed = fixed_text(example.source, {rule.code}, Settings().with_overrides({"select": ["ALL"]}))
    return None if fixed == example.source else fixed


def rule_docs(rule: Rule) -> str:
    """The rule's documentation with its first example's fix as "Use instead"."""
    return rule.markdown(fixed_example(rule, rule.invalid[0]) if rule.invalid else None)


_PERFORMANCE = PERFORMANCE_CATEGORIES  # silent where speed does not matter (analysis.hotness)
_EAGER_ADVICE = EAGER_ADVICE_CATEGORIES  # also silent in run-once code and TF1 graph code
_TF2_API_ADVICE = TF2_API_ADVICE_CATEGORIES  # silent in code written for TensorFlow 1


def _cold(ctx: RuleContext, finding: Finding) -> bool:
    line = finding.span.start.line
    # Test code, for every rule: a test runs what it checks and fails when it does not do what
    # its author meant (on real code all 14 correctness findings judged in tests were wrong:
    # seeded NumPy constants traced on purpose, ops run for the error they raise).
    if not ctx.settings.lint_tests and ctx.hot.in_test_line(line):
        return True
    # Code run for the error it raises (``with assert_raises(ValueError): f(1.0)``), and what only
    # that code calls: the author shows the failure on purpose (the TensorFlow guide does).
    if ctx.hot.in_error_demonstration(line):
        return True
    # Code under ``if False:``: it never runs, so neither its cost nor its traps matter.
    if ctx.hot.in_dead_code(line):
        return True
    # Code its comment labels the wrong way (``# INCORRECT: ...``): the guide shows the mistake.
    if ctx.hot.labelled_wrong_at_line(line):
        return True
    # Code shown, never run (``print(tf.autograph.to_code(f.python_function))``, f called nowhere).
    if ctx.hot.in_code_only_shown(line):
        return True
    since = getattr(rule_by_code(finding.code), "since_tf", None)
    if since is not None and ctx.tensorflow_pinned_below(since):
        return True  # the project runs an older TensorFlow, where the advice does not hold
    if finding.category not in _PERFORMANCE:
        return False  # correctness traps matter in all other code, run once or not
    # A def the file calls only in commented-out code (``# agent.test()``): turned off.
    if ctx.hot.in_disabled_code(line):
        return True
    if finding.category in _EAGER_ADVICE and ctx.hot.tf1_graph_mode:
        rule = rule_by_code(finding.code)
        if rule is None or not rule.graph_mode_too:
            return True
    if finding.category == "retrace" and ctx.hot.shows_tracing_at_line(line):
        return True  # a demo of retracing, its comment says so: the guide's and tutorials' lessons
    if finding.category in _TF2_API_ADVICE and (ctx.hot.tf1_only or ctx.hot.v2_behavior_off):
        # code written for TensorFlow 1, or run with its behaviour: steps_per_execution,
        # jit_compile, Keras' mixed precision are not there, a model call gives no .numpy()
        return True
    if ctx.hot.tf1_only and getattr(rule_by_code(finding.code), "needs_tf2", False):
        return True  # its fix names TensorFlow 2 APIs that code written for TensorFlow 1 lacks
    # Per-op dispatch and retracing cost nothing that matters in code that runs once per model:
    # a Keras functional builder, a layer's build / compute_output_shape / get_config.
    return finding.category in _EAGER_ADVICE and ctx.hot.cold_reason_at_line(line) not in (None, "test code")


def _fixed_further_down(ctx: RuleContext, findings: list[Finding]) -> list[Finding]:
    """Without the findings in a def or class that the module defines again below when the last
    definition has no finding of the same rule: a notebook's before-and-after lesson
    (``add_noise`` with ``np.random``, then the same name with ``tf.random``). A variant that
    keeps the problem (a training function redefined for another loss) stays reported."""
    def superseded(finding: Finding) -> bool:
        later = ctx.hot.superseding_definition(finding.span.start.line)
        return later is not None and not any(
            f.code == finding.code and later[0] <= f.span.start.line <= later[1] for f in findings)

    return [f for f in findings if not superseded(f)]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    result = []
    for finding in findings:
        key = (finding.code, finding.span, finding.message)
        if key not in seen:
            seen.add(key)
            result.append(finding)
    return result


def suppression_edit_text(line_text: str, code: str) -> str:
    """The line with ``code`` added to its ``# tfperf: ignore[...]`` comment (created if absent)."""
    match = _SUPPRESSION.search(line_text)
    if match is None:
        return f"{line_text.rstrip()}  # tfperf: ignore[{code}]"
    codes = match.group("codes")
    if not codes:
        return line_text
    existing = [c.strip() for c in codes.split(",") if c.strip()]
    if code in existing:
        return line_text
    new_comment = f"# tfperf: ignore[{', '.join(existing + [code])}]"
    return line_text[: match.start()] + new_comment + line_text[match.end() :]
