"""The language server: a thin pygls adapter over the engine (no analysis happens here)."""
