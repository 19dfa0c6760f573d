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


class DuplicateKeyError(yaml.YAMLError):
    """A mapping that names one key twice (PyYAML would keep the last silently, so what a
    reviewer reads would not be what is used); ``line`` is 1-based."""

    def __init__(self, line: int, mark: Any, key: str) -> None:
        self.problem = f"the key {key!r} appears twice in one mapping; write it once"
        super().__init__(f"line {line}: {self.problem}")
        self.line = line
        self.problem_mark = mark


def refuse_anchors(text: str) -> None:
    """:class:`AnchorError` at the first anchor or alias of ``text``, and
    :class:`DuplicateKeyError` at a mapping's second use of one key's text (a syntax error
    before either is raised as PyYAML's own :class:`yaml.YAMLError`)."""
    frames: list[tuple[bool, list[bool], set[str]]] = []  # mapping?, [next is a key], keys

    def done() -> None:  # a node ended: in a mapping, a key is followed by a value
        if frames and frames[-1][0]:
            frames[-1][1][0] = not frames[-1][1][0]

    for event in yaml.parse(text, Loader=_LOADER):
        mark = event.start_mark
        line = mark.line + 1 if mark is not None else 0
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise AnchorError(line, mark)
        if isinstance(event, yaml.ScalarEvent):
            if frames and frames[-1][0] and frames[-1][1][0]:
                if event.value in frames[-1][2]:
                    raise DuplicateKeyError(line, mark, event.value)
                frames[-1][2].add(event.value)
            done()
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            frames.append((isinstance(event, yaml.MappingStartEvent), [True], set()))
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frames.pop()
            done()


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
    return REFUSED if isinstance(err, AnchorError) else \
        f"is not valid YAML: {err.problem}" if isinstance(err, DuplicateKeyError) else \
        "is not valid YAML"
