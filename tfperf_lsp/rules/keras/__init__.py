"""keras rules (TFP8xx): Keras API pitfalls. (TFP803 is reserved: K3, the eager train loop, is TFP301.)"""

from tfperf_lsp.rules.keras.fit_in_loop import FitInLoop
from tfperf_lsp.rules.keras.legacy_keras_import import LegacyKerasImport
from tfperf_lsp.rules.keras.predict_in_loop import PredictInLoop
from tfperf_lsp.rules.keras.steps_per_execution import StepsPerExecution
from tfperf_lsp.rules.keras.train_on_batch_loop import TrainOnBatchLoop

RULES: list = [PredictInLoop, TrainOnBatchLoop, LegacyKerasImport, StepsPerExecution, FitInLoop]
