"""The command line: ``retrieval-eval evaluate | comment | validate | action | init | import |
merge | judge``.

``main(argv) -> int`` parses the arguments (the parser comes from the option table, see
:mod:`evaluator.settings`), layers them into :class:`Settings`, builds the real dependencies
once (:func:`evaluator.deps.real_deps`), runs the command's application function
(:mod:`evaluator.app`), publishes its outcome (:mod:`evaluator.publish`) and maps it to an
exit code: 0 floors met, 1 a floor missed, 2 bad input or a failed build, 3 internal error.

Each command imports what it needs when it runs: ``--help`` and ``validate`` start without
jinja2, requests or NeuralMind (a test checks it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from evaluator.core.groundtruth import Problem
from evaluator.core.options import ACTION_ORIGIN, Settings
from evaluator.deps import Deps, real_deps
from evaluator.errors import (
    EXIT_FLOORS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EvaluatorError,
    GroundTruthError,
)
from evaluator.neuralmind_index import example_root
from evaluator.paths import EXAMPLE_QUERIES
from evaluator.runner import Runner, neutralize
from evaluator.settings import (
    action_values,
    build_parser,
    flag_values,
    settings_for,
    workspace_of,
)

if TYPE_CHECKING:
    from evaluator.app import Outcome


@dataclass
class IO:
    """What ``main`` is given from outside: the environment and the streams (tests inject
    their own, with a fake HTTP session)."""

    env: Mapping[str, str]
    stdout: TextIO
    stderr: TextIO
    session_factory: Callable[[], Any] | None = None


def _exit_code(outcome: Outcome) -> int:
    # A shard's part is not a verdict: the merge job gates the whole.
    if outcome.passed or not outcome.settings.fail_on_floors or outcome.results.is_partial:
        return EXIT_OK
    return EXIT_FLOORS


def cmd_evaluate(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import app, publish

    outcome = app.run_evaluate(
        settings, deps, on_late_failure=lambda results, view: publish.keep_head(
            results, view, settings, deps))
    publish.publish(outcome, deps, comment=settings.comment != "never",
                    relative_to=relative_to)
    return _exit_code(outcome)


def cmd_comment(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import app, publish

    outcome = app.run_comment(settings, deps)
    if settings.preview:
        publish.preview(outcome, deps)
        return _exit_code(outcome)
    publish.publish(outcome, deps, comment=True, comment_required=True)
    return _exit_code(outcome)


def cmd_merge(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import app, publish

    outcome = app.run_merge(settings, deps)
    publish.publish(outcome, deps, comment=settings.comment != "never",
                    relative_to=relative_to)
    return _exit_code(outcome)


def cmd_validate(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import console, validation

    validations = validation.run_validate(settings, deps)
    for checked in validations:
        console.publish_validation(checked, deps, github_format=settings.format == "github")
    return EXIT_OK if all(v.ground_truth is not None for v in validations) else EXIT_INPUT


def cmd_init(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import authoring_commands, console

    if settings.review:
        console.print_lines(authoring_commands.run_review(settings, deps), deps)
    else:
        console.write_draft(authoring_commands.run_init(settings, deps), deps)
    return EXIT_OK


def cmd_import(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import authoring_commands, console

    console.write_draft(authoring_commands.run_import(settings, deps), deps)
    return EXIT_OK


def cmd_judge(settings: Settings, deps: Deps, relative_to: Path | None = None) -> int:
    from evaluator import authoring_commands, console

    console.write_judged(authoring_commands.run_judge(settings, deps), deps)
    return EXIT_OK


COMMANDS: dict[str, Callable[[Settings, Deps, Path | None], int]] = {
    "evaluate": cmd_evaluate, "comment": cmd_comment, "validate": cmd_validate,
    "init": cmd_init, "import": cmd_import, "merge": cmd_merge, "judge": cmd_judge,
}


def _action(io: IO) -> tuple[str, Settings]:
    """The Docker action: the command and settings from ``INPUT_*``."""
    command, given, defaults = action_values(io.env)
    return command, settings_for(command, given, defaults=defaults,
                                 origin=ACTION_ORIGIN, env=io.env)


def _run(argv: Sequence[str] | None, io: IO) -> int:
    args = build_parser().parse_args(argv)
    env: Mapping[str, str] = io.env
    relative_to = None
    if args.command == "action":
        command, settings = _action(io)
        relative_to = workspace_of(env)
    else:
        command = args.command
        settings = settings_for(command, flag_values(args, command), env=env)
    # The token, read once by the settings layer, goes on to the HTTP client through Deps.
    deps = real_deps(env, io.stdout, io.stderr, session_factory=io.session_factory,
                     github_token=settings.github_token)
    return COMMANDS[command](settings, deps, relative_to)


def main(argv: Sequence[str] | None = None, *, io: IO | None = None) -> int:
    io = io or IO(env=os.environ, stdout=sys.stdout, stderr=sys.stderr)
    try:
        return _run(argv, io)
    except GroundTruthError as err:
        print(neutralize(f"error: {err}"), file=io.stderr)
        runner = Runner.from_env(io.env, stream=io.stdout)
        errors = [p for p in err.problems
                  if isinstance(p, Problem) and p.severity == "error"]
        for problem in errors:  # each error, without a second "error:" (the annotation's)
            runner.annotate("error", problem.located(), title="ground truth")
        if not errors:
            runner.annotate("error", str(err).splitlines()[0], title="ground truth")
        return err.exit_code
    except EvaluatorError as err:
        print(neutralize(f"error: {err}"), file=io.stderr)
        Runner.from_env(io.env, stream=io.stdout).annotate("error", str(err))
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=io.stderr)
        return 130
    except Exception as err:
        if io.env.get("RETRIEVAL_EVAL_DEBUG"):
            raise
        print(neutralize(f"internal error ({type(err).__name__}: {err}); this is a bug in "
                         "retrieval-eval — please report it (set RETRIEVAL_EVAL_DEBUG=1 for "
                         "the traceback)"), file=io.stderr)
        return EXIT_INTERNAL


def entry_point() -> None:
    sys.exit(main())


__all__ = ["EXAMPLE_QUERIES", "IO", "build_parser", "entry_point", "example_root", "main"]
