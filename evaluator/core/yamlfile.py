"""The one way this tool reads (and writes) YAML: anchors and aliases are refused.

An alias is a pointer to an earlier node; nested aliases (the "billion laughs") make a few
hundred bytes stand for billions of nodes, and everything that walks the loaded data
(validation, the options table, NeuralMind re-reading a re-dumped ``.neuralmind.yaml``)
follows every path. None of the files this tool reads needs them, so the first anchor
(``&name``) or alias (``*name``) stops the read, before anything else touches the data, with
its line. The check reads the parser's event stream (libyaml's, when installed), which
never expands an alias; it ends at the first anchor, so a bomb costs a few events.

``tests/test_design.py`` checks that no other module calls a YAML loader.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
REFUSED = "uses a YAML anchor or alias (&name / *name), which is not accepted"


class AnchorError(yaml.YAMLError):
    """An anchor or alias in a YAML document; ``line`` is 1-based."""

    def __init__(self, line: int, mark: Any) -> None:
        super().__init__(f"line {line}: {REFUSED}")
        self.line = line
        self.problem = REFUSED
        self.problem_mark = mark


def refuse_anchors(text: str) -> None:
    """:class:`AnchorError` at the first anchor or alias of ``text`` (a syntax error before
    it is raised as PyYAML's own :class:`yaml.YAMLError`)."""
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            mark = event.start_mark
            raise AnchorError(mark.line + 1 if mark is not None else 0, mark)


def load(text: str) -> Any:
    """The data of one YAML document, with safe types only and no anchors or aliases."""
    refuse_anchors(text)
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (C or Python)


def compose(text: str) -> yaml.Node | None:
    """The node tree of ``text`` (with positions), no anchors or aliases."""
    refuse_anchors(text)
    return yaml.compose(text, Loader=_LOADER)


class _PlainDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(data: Any) -> str:
    """``data`` as YAML (keys sorted), never with an anchor or alias."""
    return yaml.dump(data, Dumper=_PlainDumper, sort_keys=True)


def what_is_wrong(err: yaml.YAMLError) -> str:
    """The end of a message about a file that could not be read as YAML."""
    return REFUSED if isinstance(err, AnchorError) else "is not valid YAML"
