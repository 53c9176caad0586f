"""Retrace rules (TFP1xx): what makes a tf.function trace again."""
from tfperf_lsp.rules.retrace.deprecated_relax_shapes import DeprecatedRelaxShapes
from tfperf_lsp.rules.retrace.fresh_object_argument import FreshObjectArgument
from tfperf_lsp.rules.retrace.tf_function_in_loop import TfFunctionInLoop
from tfperf_lsp.rules.retrace.python_list_argument import PythonListArgument
from tfperf_lsp.rules.retrace.python_loop_in_graph import PythonLoopInGraph
from tfperf_lsp.rules.retrace.python_scalar_argument import PythonScalarArgument
from tfperf_lsp.rules.retrace.varying_shape_argument import VaryingShapeArgument

RULES = [
    PythonScalarArgument,
    TfFunctionInLoop,
    VaryingShapeArgument,
    FreshObjectArgument,
    PythonListArgument,
    DeprecatedRelaxShapes,
    PythonLoopInGraph,
]
