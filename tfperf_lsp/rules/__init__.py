"""The rule registry. A rule is one module; add it to ``_RULE_CLASSES`` to enable it.

Codes: TFP1xx retrace, TFP2xx correctness, TFP3xx graph, TFP4xx vectorize, TFP5xx xla,
TFP6xx precision, TFP7xx input-pipeline, TFP8xx keras. A code is never reused.
"""
from __future__ import annotations

from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.correctness.python_side_effect import PythonSideEffect
from tfperf_lsp.rules.correctness.stale_global import StaleGlobal
from tfperf_lsp.rules.correctness.variable_in_function import VariableInFunction
from tfperf_lsp.rules.graph.costly_eager_function import CostlyEagerFunction
from tfperf_lsp.rules.graph.eager_model_call import EagerModelCall
from tfperf_lsp.rules.graph.eager_train_step import EagerTrainStep
from tfperf_lsp.rules.retrace.deprecated_relax_shapes import DeprecatedRelaxShapes
from tfperf_lsp.rules.retrace.fresh_object_argument import FreshObjectArgument
from tfperf_lsp.rules.retrace.function_in_loop import FunctionInLoop
from tfperf_lsp.rules.retrace.python_list_argument import PythonListArgument
from tfperf_lsp.rules.retrace.python_loop_in_graph import PythonLoopInGraph
from tfperf_lsp.rules.retrace.python_scalar_argument import PythonScalarArgument
from tfperf_lsp.rules.retrace.varying_shape import VaryingShape

_RULE_CLASSES: list[type[Rule]] = [
    # retrace
    PythonScalarArgument,
    FunctionInLoop,
    VaryingShape,
    FreshObjectArgument,
    PythonListArgument,
    DeprecatedRelaxShapes,
    PythonLoopInGraph,
    # correctness
    StaleGlobal,
    PythonSideEffect,
    VariableInFunction,
    # graph
    EagerTrainStep,
    EagerModelCall,
    CostlyEagerFunction,
]

ALL_RULES: list[Rule] = [cls() for cls in _RULE_CLASSES]
_BY_CODE = {rule.code: rule for rule in ALL_RULES}


def rule_by_code(code: str) -> Rule | None:
    return _BY_CODE.get(code.upper())


__all__ = ["ALL_RULES", "Example", "Rule", "rule_by_code"]
