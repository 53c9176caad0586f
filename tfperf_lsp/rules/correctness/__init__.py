"""tf.function correctness rules (TFP2xx): code that behaves differently once traced."""
from tfperf_lsp.rules.correctness.discarded_op_result import DiscardedOpResult
from tfperf_lsp.rules.correctness.python_side_effect import PythonSideEffect
from tfperf_lsp.rules.correctness.split_after_reshuffle import SplitAfterReshuffle
from tfperf_lsp.rules.correctness.stale_global_capture import StaleGlobalCapture
from tfperf_lsp.rules.correctness.variable_in_function import VariableInFunction

RULES = [StaleGlobalCapture, PythonSideEffect, VariableInFunction, DiscardedOpResult, SplitAfterReshuffle]
