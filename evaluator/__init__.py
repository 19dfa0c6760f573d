"""Retrieval-quality evaluator for NeuralMind code indexes."""

__version__ = "0.1.0"
