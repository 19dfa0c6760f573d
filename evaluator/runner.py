"""The GitHub Actions runner's files: job summary, step outputs and workflow commands.

The only module that knows ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT`` and the ``::error::``
syntax. Outside Actions (the variables unset) every method is a no-op, and the report goes
to stdout and files instead.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from evaluator.errors import InputError

_LINE_COMMAND = re.compile(r"(?m)^(\s*)::")
ZERO_WIDTH = "\u200b"


def neutralize(text: str) -> str:
    """Console text that the Actions runner cannot read as a workflow command.

    The runner takes ``::command::`` at the start of a line (after blanks) and the older
    ``##[command]`` anywhere; a zero-width space breaks both. Used for everything printed
    that can hold text from the repository or a results file (ids, shapes, paths, messages).
    """
    return _LINE_COMMAND.sub(lambda m: f"{m.group(1)}:{ZERO_WIDTH}:", text).replace(
        "##[", f"##{ZERO_WIDTH}[")


def _escape_data(text: str) -> str:
    text = text.replace("##[", f"##{ZERO_WIDTH}[")
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


@contextlib.contextmanager
def _runner_file(path: Path, variable: str) -> Iterator[TextIO]:
    """Append to a runner file; one message naming the variable when it is unusable.

    These files are the runner's to own and are only ever appended to (the runner reads
    them after the step), so they are not replaced atomically.
    """
    try:
        with path.open("a", encoding="utf-8") as handle:
            yield handle
    except OSError as err:
        raise InputError(f"{variable} points to {path}, which cannot be written: "
                         f"{err.strerror or err}",
                         hint="outside GitHub Actions, unset it; the results and report "
                              "are already written") from None


@dataclass
class Runner:
    summary_path: Path | None
    output_path: Path | None
    in_actions: bool
    stream: TextIO

    @classmethod
    def from_env(cls, env: Mapping[str, str], stream: TextIO | None = None) -> Runner:
        summary = env.get("GITHUB_STEP_SUMMARY")
        output = env.get("GITHUB_OUTPUT")
        return cls(
            summary_path=Path(summary) if summary else None,
            output_path=Path(output) if output else None,
            in_actions=env.get("GITHUB_ACTIONS") == "true",
            stream=stream if stream is not None else sys.stdout,
        )

    def append_summary(self, markdown: str) -> bool:
        if self.summary_path is None:
            return False
        with _runner_file(self.summary_path, "GITHUB_STEP_SUMMARY") as handle:
            handle.write(markdown.rstrip("\n") + "\n\n")
        return True

    def set_outputs(self, outputs: Mapping[str, str]) -> bool:
        """Step outputs; multi-line values use a random heredoc delimiter."""
        if self.output_path is None:
            return False
        with _runner_file(self.output_path, "GITHUB_OUTPUT") as handle:
            for name, value in outputs.items():
                if "\n" in value:
                    delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
                    handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
                else:
                    handle.write(f"{name}={value}\n")
        return True

    def annotate(self, level: str, message: str, *, title: str | None = None,
                 file: str | None = None, line: int | None = None) -> None:
        """``::error``/``::warning``/``::notice`` workflow commands (only inside Actions)."""
        if not self.in_actions:
            return
        props = []
        if file:
            props.append(f"file={_escape_property(file)}")
        if line:
            props.append(f"line={line}")
        if title:
            props.append(f"title={_escape_property(title)}")
        head = f"::{level}" + (" " + ",".join(props) if props else "")
        print(f"{head}::{_escape_data(message)}", file=self.stream, flush=True)
