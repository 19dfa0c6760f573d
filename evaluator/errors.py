"""The one error hierarchy. Every message is what the user reads; the exit code is documented.

Exit codes (README, "Exit codes"):

* 0 — evaluated, every floor met
* 1 — evaluated, a floor or regression gate missed
* 2 — bad input (ground truth, config, paths, flags) or a failed build / missing model
* 3 — an internal error (a bug in this tool): reported in one line, never a traceback
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FLOORS = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


class EvaluatorError(Exception):
    """Base of every error this tool raises on purpose; ``str(err)`` is the user's message."""

    exit_code: int = EXIT_INPUT

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(EvaluatorError):
    """Bad input from the user: a file, a flag, a path, a config value."""


class GroundTruthError(InputError):
    """The ground-truth file has errors; ``problems`` lists every one of them."""

    def __init__(self, message: str, problems: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class ConfigError(InputError):
    """The options file or a command-line option is invalid."""


class BuildError(EvaluatorError):
    """The index could not be built or queried (includes a missing embedding model)."""


class ResultsError(InputError):
    """A results JSON that cannot be read: not JSON, another schema version, wrong shape."""


class GitError(InputError):
    """A git operation failed: unknown ref, shallow history, not a repository."""


class GitOutputTooLarge(GitError):
    """git printed more than the bytes its caller reads (a commit can add a line of any
    length): stopped at the cap, never read whole. ``read`` holds what was read."""

    def __init__(self, message: str, *, read: bytes = b"") -> None:
        super().__init__(message)
        self.read = read


class GitHubError(EvaluatorError):
    """The GitHub API refused or failed; never carries the token."""


class MergeError(ResultsError):
    """Partial results that do not make one evaluation: another commit, settings or ground
    truth; a shard missing or given twice; parts that overlap."""
