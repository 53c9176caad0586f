"""Graph-mode rules (TFP3xx): eager code in hot paths that tf.function would run as one graph."""
from tfperf_lsp.rules.graph.costly_eager_function import CostlyEagerFunction
from tfperf_lsp.rules.graph.eager_execution_forced import EagerExecutionForced
from tfperf_lsp.rules.graph.eager_model_call import EagerModelCall
from tfperf_lsp.rules.graph.eager_train_step import EagerTrainStep

RULES = [EagerTrainStep, EagerModelCall, CostlyEagerFunction, EagerExecutionForced]
