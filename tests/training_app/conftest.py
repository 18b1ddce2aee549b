"""Fixtures for training tests: the tiny causal LM (``tiny_model_dir``)."""

from tests.training_app.tiny_model import tiny_model_dir

__all__ = ["tiny_model_dir"]
