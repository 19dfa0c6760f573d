"""``python -m evaluator``: the same as the ``retrieval-eval`` command."""

from evaluator.cli import entry_point

entry_point()
