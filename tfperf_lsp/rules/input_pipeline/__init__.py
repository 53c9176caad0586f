"""input-pipeline rules (TFP7xx): tf.data input pipelines."""

from tfperf_lsp.rules.input_pipeline.dataset_rebuilt_per_epoch import DatasetRebuiltPerEpoch
from tfperf_lsp.rules.input_pipeline.generator_over_arrays import GeneratorOverArrays
from tfperf_lsp.rules.input_pipeline.map_before_batch import MapBeforeBatch
from tfperf_lsp.rules.input_pipeline.map_without_parallel_calls import MapWithoutParallelCalls
from tfperf_lsp.rules.input_pipeline.no_cache import NoCache
from tfperf_lsp.rules.input_pipeline.no_prefetch import NoPrefetch

RULES: list = [MapWithoutParallelCalls, NoPrefetch, MapBeforeBatch, NoCache, GeneratorOverArrays, DatasetRebuiltPerEpoch]
