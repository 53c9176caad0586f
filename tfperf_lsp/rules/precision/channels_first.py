"""TFP605: channels_first convolutions under a mixed policy on a Tensor Core GPU."""
from __future__ import annotations

import ast
from typing import Iterator, cast

from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.precision._policy import CONV, MIXED, device_facts, policy_at, policy_events, tensor_core_gpu
from tfperf_lsp.analysis.astutil import keyword


class ChannelsFirst(Rule):
    code = "TFP605"
    name = "channels-first"
    category = "precision"
    severity = Severity.INFORMATION
    summary = "channels_first convolution under a mixed policy: Tensor Cores prefer channels_last"
    doc_url = "https://www.tensorflow.org/guide/profiler#configure_data_layout"
    docs = """
    ## What it does
    Finds Keras convolution layers with `data_format="channels_first"` built under a mixed
    policy (`mixed_float16` / `mixed_bfloat16`) when the device is a GPU with compute capability
    >= 7.0 (see TFP601 for how the device is known).

    ## Why is this slow
    Tensor Core convolutions work in NHWC; with NCHW tensors cuDNN transposes around every
    convolution. The profiler guide: "NHWC is preferred for mixed precision on Tensor Cores"
    Measured on TF 2.21 on some CPUs, for contrast: a `channels_first` Conv2D trains in
    float32 but fails under `mixed_float16` with "Conv2DCustomBackpropFilterOp only supports NHWC"
    (other CPUs' kernels differ: some train both, some neither).

    ## When it stays silent
    Under float32 (NCHW is cuDNN's native float32 layout, so there is nothing to gain), when the
    device is unknown or not a Tensor Core GPU, and for `channels_last` or the default layout.

    ## Fix
    No automatic fix: the input pipeline (transpose the data once, not per step), every layer's
    `data_format`/`axis` and saved weights depend on the layout. Switch to `channels_last` by
    hand and benchmark it.
    """
    invalid = (
        Example(
            """
            # tfperf: device=gpu cc=8.0
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            inputs = keras.Input(shape=(3, 32, 32))
            features = keras.layers.Conv2D(32, 3, data_format="channels_first")(inputs)
            keras.mixed_precision.set_global_policy("float32")
            """
        ),
    )
    valid = (
        Example(
            """
            # tfperf: device=gpu cc=8.0
            from tensorflow import keras

            inputs = keras.Input(shape=(3, 32, 32))
            features = keras.layers.Conv2D(32, 3, data_format="channels_first")(inputs)  # float32
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if "channels_first" not in ctx.source.text or not policy_events(ctx) or not tensor_core_gpu(device_facts(ctx)):
            return
        facts = ctx.facts
        for call in ctx.facts.calls_to(*CONV):
            value = keyword(call, "data_format")
            if not (isinstance(value, ast.Constant) and value.value == "channels_first"):
                continue
            policy = policy_at(ctx, call.lineno)
            if policy not in MIXED:
                continue
            layer = cast(str, facts.qualname(call.func)).rsplit(".", 1)[1]  # one of CONV (calls_to)
            yield self.finding(
                ctx,
                value,
                f"`{layer}` with channels_first under `{policy}`: "
                f"Tensor Cores work in channels_last "
                f"(NHWC), so cuDNN transposes around this layer - consider channels_last",
                label="prefer channels_last",
            )
