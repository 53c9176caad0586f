"""Turning fixes into text edits: plain edits for single tokens, LibCST for structure."""
