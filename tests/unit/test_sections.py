"""Sections: parsing, validation (every problem at once), module universes, glob matching."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evaluator.core.floors import DEFAULT_POLICY, Floor
from evaluator.core.sections import glob_matches, parse_sections, select
from evaluator.errors import ConfigError

KNOWN = {"recall@5", "ndcg@5", "hit_rate", "mrr", "precision@5", "faithfulness",
         "contradiction"}


def parse(raw: object):
    return parse_sections(raw, base_policy=DEFAULT_POLICY, known_metrics=KNOWN,
                          origin=".retrieval-eval.yml")


def errors_of(raw: object) -> str:
    with pytest.raises(ConfigError) as info:
        parse(raw)
    return str(info.value)


def test_the_issue_example():
    api, cli = parse({
        "api": {"path": "packages/api/src/api", "queries": "packages/api/retrieval_queries.json"},
        "cli": {"path": "packages/cli/src/cli",
                "queries": "packages/cli/retrieval_queries.json",
                "floors": {"ndcg@5": 0.6}},
    })
    assert (api.name, api.path, api.queries) == (
        "api", "packages/api/src/api", "packages/api/retrieval_queries.json")
    assert api.floors == DEFAULT_POLICY
    # A section's floors replace the aggregate floors for it only; the rest is inherited.
    assert cli.floors.aggregate == (Floor("ndcg@5", ">=", 0.6),)
    assert cli.floors.per_shape == DEFAULT_POLICY.per_shape
    assert cli.floors.zero_miss is DEFAULT_POLICY.zero_miss


def test_list_form_defaults_and_other_floor_keys():
    (web,) = parse([{"name": "web", "path": "./web//src/", "shape-floors": {"hit_rate": 0.5},
                     "zero-miss": False, "include": "**/*.py", "exclude": ["tests/**"]}])
    assert web.path == "web/src"
    assert web.queries == "web/src/retrieval_queries.json"
    assert web.floors.aggregate == DEFAULT_POLICY.aggregate
    assert web.floors.per_shape == (Floor("hit_rate", ">=", 0.5),)
    assert web.floors.zero_miss is False
    assert (web.include, web.exclude) == (("**/*.py",), ("tests/**",))


def test_declared_order_is_kept():
    names = [s.name for s in parse({n: {"path": f"p/{n}"} for n in ("zeta", "alpha", "mid")})]
    assert names == ["zeta", "alpha", "mid"]


@pytest.mark.parametrize(("raw", "needles"), [
    ({}, ["declare at least one section"]),
    ([], ["declare at least one section"]),
    ("api", ["must be a mapping of section name"]),
    ({"api": "packages/api"}, ["sections.api: must be a mapping"]),
    ({"api": {"queries": "q.json"}}, ["sections.api: 'path' is missing"]),
    ({"api": {"path": "/abs/api"}}, ["sections.api.path", "relative path inside"]),
    ({"api": {"path": "../elsewhere"}}, ["sections.api.path"]),
    ({"api": {"path": "."}}, ["sections.api.path", "not the root itself"]),
    ({"api": {"path": "a\nb"}}, ["sections.api.path"]),
    ({"api": {"path": 3}}, ["sections.api.path: must be a path"]),
    ({"api": {"path": "api", "queries": "../q.json"}}, ["sections.api.queries"]),
    ({"api": {"path": "api", "colour": "red"}}, ["unknown key(s) colour"]),
    ({"api": {"path": "api", "floors": {"ndcg@7": 0.5}}}, ["metric 'ndcg@7' is unknown"]),
    ({"api": {"path": "api", "floors": {"ndcg@5": "about half"}}}, ["'about half'"]),
    ({"api": {"path": "api", "floors": [0.5]}}, ["floors: must be a mapping"]),
    ({"api": {"path": "api", "zero-miss": "maybe"}}, ["zero-miss: must be true or false"]),
    ({"api": {"path": "api", "include": ["../x"]}}, ["include: '../x'"]),
    ({"api": {"path": "api", "exclude": [3]}}, ["exclude: must be a glob"]),
    ({"bad name": {"path": "api"}}, ["name 'bad name'"]),
    ({"a/b": {"path": "api"}}, ["name 'a/b'"]),
    ({"-x": {"path": "api"}}, ["name '-x'"]),
    ({"x" * 64: {"path": "api"}}, ["must be 1-63"]),
    ([{"path": "api"}], ["sections[0]: needs a 'name'"]),
])
def test_invalid_sections_are_named(raw: object, needles: list[str]):
    message = errors_of(raw)
    assert message.startswith("invalid sections:")
    for needle in needles:
        assert needle in message


def test_duplicate_names_including_case():
    message = errors_of([{"name": "api", "path": "a"}, {"name": "API", "path": "b"},
                         {"name": "api", "path": "c"}])
    assert "section name 'API' is given twice (as 'api')" in message
    assert "section name 'api' is given twice" in message


@pytest.mark.parametrize(("a", "b"), [("pkg/api", "pkg/api"), ("pkg", "pkg/api"),
                                      ("pkg/api/sub", "pkg/api/")])
def test_overlapping_paths_are_refused(a: str, b: str):
    message = errors_of({"one": {"path": a}, "two": {"path": b}})
    assert "sections 'one'" in message
    assert "'two'" in message
    assert "overlap" in message


def test_siblings_with_a_common_prefix_do_not_overlap():
    assert len(parse({"one": {"path": "pkg/api"}, "two": {"path": "pkg/api2"}})) == 2


def test_shared_ground_truth_is_refused():
    message = errors_of({"one": {"path": "a", "queries": "q.json"},
                         "two": {"path": "b", "queries": "./q.json"}})
    assert "'one' and 'two' read the same ground truth q.json" in message


def test_every_problem_at_once():
    message = errors_of({"one": {"path": "/abs"}, "bad name": {"path": "x", "what": 1},
                         "three": {"path": "x/y"}})
    assert message.count("\n  ") == 4  # path, name, unknown key, overlap x with x/y


def test_universe_from_the_repository_files():
    (section,) = parse({"api": {"path": "pkg/api", "include": ["**/*.py"],
                                "exclude": ["tests/**", "**/_vendor/*"]}})
    repo = ["pkg/api/a.py", "pkg/api/sub/b.py", "pkg/api/README.md", "pkg/api/tests/t.py",
            "pkg/api/x/_vendor/v.py", "pkg/api2/c.py", "pkg/apix.py", "top.py"]
    assert section.files(repo) == ("a.py", "sub/b.py")


def test_universe_without_globs_is_every_file_below_the_path():
    (section,) = parse({"api": {"path": "pkg/api"}})
    assert section.files(["pkg/api/a.py", "pkg/api/d/e.txt", "pkg/other.py"]) == (
        "a.py", "d/e.txt")


def test_select_by_name():
    sections = parse({"api": {"path": "a"}, "cli": {"path": "c"}})
    assert select(sections, "cli").path == "c"
    with pytest.raises(ConfigError, match="no such section; declared: api, cli"):
        select(sections, "web")


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("**/*.py", "a.py", True),
    ("**/*.py", "a/b/c.py", True),
    ("**/*.py", "a/b/c.pyc", False),
    ("*.py", "a/b.py", False),
    ("a/**/b.py", "a/b.py", True),
    ("a/**/b.py", "a/x/y/b.py", True),
    ("a/**/b.py", "ab.py", False),
    ("tests/**", "tests/x/y.py", True),
    ("tests/**", "tests2/y.py", False),
    ("?.py", "ab.py", False),
    ("a[1].py", "a[1].py", True),
    ("a[1].py", "a1.py", False),
])
def test_glob_matches(pattern: str, path: str, expected: bool):
    assert glob_matches(pattern, path) is expected


SEGMENT = st.text(alphabet="ab.x_", min_size=1, max_size=4)


@given(st.lists(st.text(alphabet="ab.x_*?", min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(SEGMENT, min_size=1, max_size=3))
def test_single_star_globs_agree_with_fnmatch_segment_by_segment(pattern_parts, path_parts):
    """Without ``**``, a glob matches when it has as many segments as the path and each
    segment matches as fnmatch (case-sensitive) matches it."""
    assume("**" not in pattern_parts)
    pattern, path = "/".join(pattern_parts), "/".join(path_parts)
    expected = len(pattern_parts) == len(path_parts) and all(
        re.fullmatch(fnmatch.translate(p), s) is not None
        for p, s in zip(pattern_parts, path_parts, strict=True))
    assert glob_matches(pattern, path) is expected


@given(st.lists(SEGMENT, min_size=0, max_size=4), st.lists(SEGMENT, min_size=0, max_size=4),
       SEGMENT)
def test_double_star_spans_any_number_of_segments(prefix, middle, name):
    path = "/".join([*prefix, *middle, name])
    pattern = "/".join([*prefix, "**", name])
    assert glob_matches(pattern, path)
    assert glob_matches("**", path)


_PATHS = st.lists(st.lists(st.sampled_from("ab"), min_size=1, max_size=4).map("/".join),
                  min_size=1, max_size=12, unique=True)


@given(_PATHS)
def test_the_overlap_check_finds_exactly_the_overlapping_pairs(paths: list[str]):
    """Against every pair, on distinct paths (issue 19 item 8 replaced the pairwise loop)."""
    raw = {f"s{i}": {"path": p} for i, p in enumerate(paths)}
    expected = {(f"s{i}", f"s{j}") for i, a in enumerate(paths) for j, b in enumerate(paths)
                if i < j and (a == b or a.startswith(b + "/") or b.startswith(a + "/"))}
    try:
        parse(raw)
        found: set[tuple[str, str]] = set()
    except ConfigError as err:
        found = set(re.findall(r"sections '(s\d+)' \(\S+\) and '(s\d+)' \(\S+\) overlap",
                               str(err)))
    assert found == expected


def test_the_overlap_check_does_not_compare_every_pair(monkeypatch):
    """10,000 sections took 59 s: every pair was compared. Now each section checks only the
    folders above it (counted here); nested and repeated paths are reported once each."""
    from evaluator.core import sections

    calls = 0
    real = sections._paths_overlap

    def counting(a: str, b: str) -> bool:
        nonlocal calls
        calls += 1
        return real(a, b)

    monkeypatch.setattr(sections, "_paths_overlap", counting)
    n = 3000
    assert len(parse({f"s{i}": {"path": f"pkg/m{i}"} for i in range(n)})) == n
    assert calls == 0
    nested = {f"s{i}": {"path": "a/b/c"[: 1 + 2 * (i % 3)]} for i in range(n)}
    message = errors_of(nested)
    assert calls <= 3 * n  # each section: its path and the folders above it
    assert message.count("overlap") <= 3 * n
    assert "sections 's0' (a) and 's1' (a/b) overlap" in message
    assert "sections 's0' (a) and 's3' (a) overlap" in message
