from evaluator.cli import entry_point

entry_point()
