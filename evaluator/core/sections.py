"""Sections: the parts of a monorepo, each evaluated on its own root with its own questions.

The options file declares them under ``sections`` (a mapping of name to section, or a list
of sections each with a ``name``)::

    sections:
      api:
        path: packages/api/src/api                 # the indexed root (a folder of the repo)
        queries: packages/api/retrieval_queries.json   # default: PATH/retrieval_queries.json
      cli:
        path: packages/cli/src/cli
        floors: {ndcg@5: 0.6}                      # replaces the aggregate floors here only
        shape-floors: {hit_rate: 0.5}              # replaces the per-shape floors here only
        zero-miss: false
        include: ["**/*.py"]                       # the module universe, relative to PATH
        exclude: ["tests/**"]

Rules, every violation reported at once:

* a name is 1-63 characters from ``A-Z a-z 0-9 _ . -``, starting with a letter or digit
  (it appears in file names, artifact names and qualified query ids ``name/id``); two
  names that differ only in case are duplicates;
* ``path`` and ``queries`` are relative POSIX paths inside the repository (no absolute
  path, no ``..`` climbing out, no control characters); ``path`` is a folder, not the
  repository root itself;
* no two sections share a path or nest one inside the other (a file would belong to
  both), and no two sections read the same ground-truth file;
* floors start from the repository-wide policy; a section's ``floors``, ``shape-floors``
  and ``zero-miss`` replace the corresponding part for that section only;
* ``include``/``exclude`` are globs relative to ``path``: ``*`` and ``?`` match within one
  path segment, ``**`` matches any number of segments (including none). A file is in the
  section's universe when it matches some include (or there is none) and no exclude.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from evaluator.core.floors import Floor, FloorPolicy
from evaluator.core.groundtruth import has_control, normalize_module
from evaluator.errors import ConfigError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
DEFAULT_QUERIES = "retrieval_queries.json"
SECTION_KEYS = ("name", "path", "queries", "floors", "shape_floors", "zero_miss", "include",
                "exclude")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``*``/``?`` within a segment, ``**`` across segments (``a/**/b`` matches ``a/b``)."""
    out: list[str] = []
    segments = pattern.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        part = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
                       for c in segment)
        out.append(part if last else part + "/")
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the relative POSIX ``path`` matches the glob ``pattern`` (see module doc)."""
    return _glob_regex(pattern).match(path) is not None


@dataclass(frozen=True)
class Section:
    """One section: its indexed root, ground truth, floors and module universe."""

    name: str
    path: str
    queries: str
    floors: FloorPolicy
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @cached_property
    def _include(self) -> tuple[re.Pattern[str], ...]:
        return tuple(_glob_regex(p) for p in self.include)

    @cached_property
    def _exclude(self) -> tuple[re.Pattern[str], ...]:
        return tuple(_glob_regex(p) for p in self.exclude)

    def selects(self, module: str) -> bool:
        """Whether ``module`` (relative to the section's path) is in the universe."""
        if self._include and not any(p.match(module) for p in self._include):
            return False
        return not any(p.match(module) for p in self._exclude)

    def files(self, repo_files: Iterable[str]) -> tuple[str, ...]:
        """The section's files, relative to its path, from the repository's files."""
        prefix = self.path + "/"
        return tuple(rel for f in repo_files if f.startswith(prefix)
                     and self.selects(rel := f[len(prefix):]))


def _paths_overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _as_list(value: Any, where: str, errors: list[str]) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        errors.append(f"{where}: must be a glob or a list of globs")
        return ()
    out = []
    for item in items:
        glob = item.strip()
        if not glob or has_control(glob) or glob.startswith("/") or ".." in glob.split("/"):
            errors.append(f"{where}: {item!r} must be a non-empty glob relative to the "
                          "section's path")
        else:
            out.append(glob)
    return tuple(out)


def _floors(value: Any, where: str, known: frozenset[str] | None,
            errors: list[str]) -> tuple[Floor, ...]:
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be a mapping of metric to floor")
        return ()
    out = []
    for metric, spec in value.items():
        if known is not None and str(metric) not in known:
            errors.append(f"{where}: metric {metric!r} is unknown")
            continue
        try:
            out.append(Floor.parse(str(metric), spec))
        except ValueError as err:
            errors.append(f"{where}: {err}")
    return tuple(out)


def _repo_path(value: Any, where: str, errors: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{where}: must be a path relative to the repository root")
        return None
    norm = normalize_module(value)
    if norm is None:
        errors.append(f"{where}: {value!r} must be a relative path inside the repository "
                      "(not absolute, not the root itself, not climbing out with '..', no "
                      "control characters)")
    return norm


def _one(name: str, raw: Any, where: str, base: FloorPolicy, known: frozenset[str] | None,
         errors: list[str]) -> Section | None:
    if not isinstance(raw, Mapping):
        errors.append(f"{where}: must be a mapping with at least 'path'")
        return None
    data = {str(k).strip().replace("-", "_"): v for k, v in raw.items()}
    unknown = sorted(set(data) - set(SECTION_KEYS))
    if unknown:
        errors.append(f"{where}: unknown key(s) {', '.join(unknown)}; a section takes "
                      f"{', '.join(k.replace('_', '-') for k in SECTION_KEYS[1:])}")
    if "path" not in data:
        errors.append(f"{where}: 'path' is missing (the section's folder in the repository)")
        return None
    path = _repo_path(data["path"], f"{where}.path", errors)
    queries_raw = data.get("queries")
    if queries_raw is None:  # the default (no second error when the path is wrong)
        queries = None if path is None else f"{path}/{DEFAULT_QUERIES}"
    else:
        queries = _repo_path(queries_raw, f"{where}.queries", errors)
    policy = base
    if "floors" in data:
        policy = replace(policy, aggregate=_floors(data["floors"], f"{where}.floors", known,
                                                   errors))
    if "shape_floors" in data:
        policy = replace(policy, per_shape=_floors(data["shape_floors"],
                                                   f"{where}.shape-floors", known, errors))
    if "zero_miss" in data:
        if isinstance(data["zero_miss"], bool):
            policy = replace(policy, zero_miss=data["zero_miss"])
        else:
            errors.append(f"{where}.zero-miss: must be true or false")
    include = _as_list(data.get("include", []), f"{where}.include", errors)
    exclude = _as_list(data.get("exclude", []), f"{where}.exclude", errors)
    if path is None or queries is None:
        return None
    return Section(name=name, path=path, queries=queries, floors=policy, include=include,
                   exclude=exclude)


def _entries(raw: Any, origin: str, errors: list[str]) -> list[tuple[str, Any, str]]:
    """``(name, section, where)`` from the mapping or the list form."""
    if isinstance(raw, Mapping):
        return [(str(k), v, f"{origin}: sections.{k}") for k, v in raw.items()]
    if isinstance(raw, list):
        out = []
        for i, item in enumerate(raw):
            name = item.get("name") if isinstance(item, Mapping) else None
            if not isinstance(name, str):
                errors.append(f"{origin}: sections[{i}]: needs a 'name'")
                continue
            body = {k: v for k, v in item.items() if k != "name"}
            out.append((name, body, f"{origin}: sections[{i}] ({name})"))
        return out
    errors.append(f"{origin}: sections: must be a mapping of section name to section")
    return []


def _check_names(entries: Sequence[tuple[str, Any, str]], origin: str,
                 errors: list[str]) -> None:
    seen: dict[str, str] = {}
    for name, _raw, where in entries:
        if not NAME.match(name):
            shown = name.encode("unicode_escape").decode("ascii")
            errors.append(f"{where}: the name {shown!r} must be 1-63 letters, digits, '_', "
                          "'.' or '-', starting with a letter or digit")
        folded = name.casefold()
        if folded in seen:
            errors.append(f"{origin}: section name {name!r} is given twice"
                          + ("" if seen[folded] == name else f" (as {seen[folded]!r})"))
        else:
            seen[folded] = name


def _ancestors_and_self(path: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b", "a/b/c"]``."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _overlapping_pairs(sections: Sequence[Section]) -> list[tuple[int, int, str]]:
    """``(i, j, kind)`` with ``i < j``: the sections whose paths overlap ("path") or that
    read the same ground truth ("queries").

    Two paths overlap when one is the other or a folder above it, so each section looks up
    its own path and the folders above it among the paths declared first (a dict): O(n * d)
    for n sections d folders deep, not every pair (10,000 sections took 59 s). A path given
    several times is reported against its first section only, so the list stays O(n * d).
    """
    first_at: dict[str, int] = {}
    first_reading: dict[str, int] = {}
    for i, section in enumerate(sections):
        first_at.setdefault(section.path, i)
        first_reading.setdefault(section.queries, i)
    pairs: set[tuple[int, int, str]] = set()
    for j, section in enumerate(sections):
        for folder in _ancestors_and_self(section.path):
            i = first_at.get(folder, j)
            if i != j and _paths_overlap(sections[i].path, section.path):
                pairs.add((min(i, j), max(i, j), "path"))
        i = first_reading[section.queries]
        if i != j:
            pairs.add((i, j, "queries"))
    return sorted(pairs)


def overlap_problems(sections: Sequence[Section], origin: str) -> list[str]:
    """What :func:`parse_sections` says of sections that share or nest their folders or
    read one ground truth (for the adapter, once links are followed: ``origin`` says so)."""
    errors: list[str] = []
    _check_overlaps(sections, origin, errors)
    return errors


def _check_overlaps(sections: Sequence[Section], origin: str, errors: list[str]) -> None:
    for i, j, kind in _overlapping_pairs(sections):
        a, b = sections[i], sections[j]
        if kind == "path":
            errors.append(f"{origin}: sections {a.name!r} ({a.path}) and {b.name!r} "
                          f"({b.path}) overlap: a file under both paths would belong to "
                          "both; give them folders that do not contain one another")
        else:
            errors.append(f"{origin}: sections {a.name!r} and {b.name!r} read the same "
                          f"ground truth {a.queries}; each section needs its own")


def parse_sections(raw: Any, *, base_policy: FloorPolicy, known_metrics: Iterable[str] | None
                   = None, origin: str = "options file") -> tuple[Section, ...]:
    """The validated sections of an options file's ``sections`` value, in declared order.

    Raises :class:`ConfigError` listing every problem. ``known_metrics`` (when given) are
    the metric names a floor may use.
    """
    errors: list[str] = []
    entries = _entries(raw, origin, errors)
    if not entries and not errors:
        errors.append(f"{origin}: sections: declare at least one section, or remove the key")
    _check_names(entries, origin, errors)
    known = frozenset(known_metrics) if known_metrics is not None else None
    sections = [s for name, body, where in entries
                if (s := _one(name, body, where, base_policy, known, errors)) is not None]
    _check_overlaps(sections, origin, errors)
    if errors:
        raise ConfigError("invalid sections:\n  " + "\n  ".join(errors))
    return tuple(sections)


def select(sections: Sequence[Section], name: str) -> Section:
    """The section called ``name``; the error lists the declared ones."""
    for section in sections:
        if section.name == name:
            return section
    raise ConfigError(f"--section {name!r}: no such section; declared: "
                      f"{', '.join(s.name for s in sections)}")
