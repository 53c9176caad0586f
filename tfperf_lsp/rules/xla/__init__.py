"""xla rules (TFP5xx): XLA compilation opportunities and pitfalls."""
from tfperf_lsp.rules.xla.deprecated_experimental_compile import DeprecatedExperimentalCompile
from tfperf_lsp.rules.xla.jit_candidate import JitCandidate
from tfperf_lsp.rules.xla.jit_varying_shapes import JitVaryingShapes
from tfperf_lsp.rules.xla.keras_compile_without_jit import KerasCompileWithoutJit
from tfperf_lsp.rules.xla.set_jit_late import SetJitLate

RULES: list = [
    JitCandidate,
    KerasCompileWithoutJit,
    SetJitLate,
    JitVaryingShapes,
    DeprecatedExperimentalCompile,
]
