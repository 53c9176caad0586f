"""vectorize rules (TFP4xx): loops and per-element work that one vectorised op replaces."""
from tfperf_lsp.rules.base import Rule
from tfperf_lsp.rules.vectorize.concat_in_loop import ConcatInLoop
from tfperf_lsp.rules.vectorize.host_sync_in_loop import HostSyncInLoop
from tfperf_lsp.rules.vectorize.loop_matmul_stack import LoopMatmulStack
from tfperf_lsp.rules.vectorize.loop_reduce_accumulate import LoopReduceAccumulate
from tfperf_lsp.rules.vectorize.per_element_map import PerElementMap

RULES: list[type[Rule]] = [
    LoopMatmulStack,
    LoopReduceAccumulate,
    PerElementMap,
    ConcatInLoop,
    HostSyncInLoop,
]
