"""precision rules (TFP6xx): mixed precision."""
from tfperf_lsp.rules.precision.channels_first import ChannelsFirst
from tfperf_lsp.rules.precision.float16_softmax_output import Float16SoftmaxOutput
from tfperf_lsp.rules.precision.no_loss_scaling import NoLossScaling
from tfperf_lsp.rules.precision.no_mixed_policy import NoMixedPolicy
from tfperf_lsp.rules.precision.removed_mixed_precision_api import RemovedMixedPrecisionApi
from tfperf_lsp.rules.precision.tensor_core_dims import TensorCoreDims

RULES: list = [
    NoMixedPolicy,
    Float16SoftmaxOutput,
    NoLossScaling,
    TensorCoreDims,
    ChannelsFirst,
    RemovedMixedPrecisionApi,
]
