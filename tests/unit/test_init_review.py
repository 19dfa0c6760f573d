"""The cold reviews of init's drafts (benchmarks/init_review, issue 24): every verdict file is
complete, and the figures its README states are the ones the files hold. The first review
(requests, click, flask) is the data the drafting rules were tuned on; the ``heldout-*`` files
review repositories the rules never saw (attrs, werkzeug, itsdangerous); the ``fresh-*`` files are a
third cold review, of three more repositories neither earlier review saw (jinja, httpx, pluggy);
the ``fresh2-*`` files review the same three again, drafted by the tool after the round-3 rules,
carrying a verdict over only where the question, its source commit, grades and facts are
unchanged; the ``fresh3-*`` files are a fourth cold review, of three more repositories no earlier
review saw (starlette, packaging, cattrs); the ``fresh4-*`` files are a fifth, of three more
(structlog, tenacity, yarl); the ``fresh5-*`` files a sixth, of three more (marshmallow, tomlkit,
anyio); the ``fresh6-*`` files a seventh, of three more (uvicorn, typer, jsonschema); the
``fresh7-*`` files an eighth (urllib3, build, responses), where build's file also holds a
supplementary review of the draft made once its package was back in the universe; the
``fresh8-*`` files a ninth, of three more (pip, loguru, httpcore), after round 9; the
``fresh9-*`` files a tenth, of three more (alembic, tox, trio), after round 11; the
``fresh10-*`` files an eleventh, of three more (gunicorn, virtualenv, flake8), after round
12; the ``fresh11-*`` files a twelfth, of three more (quart, pip-tools, twine), after round
13; the ``fresh12-*`` files a thirteenth, of three more (arrow, isort, multidict), paired: the
drafts of round 13's tool (``supplementary_review``) and of round 14's (the askability score)
read in one blind pass; the ``fresh13-*`` files a fourteenth, of three more (httpie, black,
pytest-xdist), paired the same way against round 14's final tool; the ``fresh14-*`` files a
fifteenth, of three more (invoke, mkdocs, setuptools_scm), paired the same way; the ``fresh15-*``
files a sixteenth (h11, pytest-mock, pyparsing), paired against round 14's last tool; the
``fresh16-*`` files a seventeenth (humanize, python-multipart, jmespath.py), paired against
round 14's last tool; the ``fresh17-*`` files an eighteenth (pytest-asyncio, waitress,
python-dotenv), paired against round 15's facts rules, a question whose two drafts' facts
differ read with both lists; the ``fresh18-*`` files a nineteenth (pytest-cov, filelock,
mako), paired the same way against round 15 with the options rule; the ``fresh19-*`` files a
twentieth, of six (pyjwt, sqlparse, markdown, platformdirs, more-itertools, bleach), paired
against round 16's refitted askability score; the ``fresh20-*`` files a twenty-first, of six
(wheel, markupsafe, cachetools, prettytable, paramiko, babel), round 15 against round 17; the
``fresh21-*`` files a twenty-second, of six (h2, webob, pyflakes, pycodestyle, pyramid,
pyproject-hooks), round 17 before and after its facts rule."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "init_review"
FILES = sorted(FOLDER.glob("*.json"))
VERDICTS = ("keep", "edit", "reject")
ROW = re.compile(r"^\| ([^|]+?) \| (history|docstring) \| (\d+) \| (\d+) \| (\d+) \| (\d+) "
                 r"\| (\d+) % \|$")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _counts(docs: list[dict[str, Any]]) -> list[int]:
    questions = [q for doc in docs for q in doc["questions"]]
    return [len(questions), *(sum(q["verdict"] == v for q in questions) for v in VERDICTS)]


def _held_out(doc: dict[str, Any]) -> bool:
    return bool(doc.get("held_out", False))


# Each later review (its files' name prefix) and the label of its "all" row in the README table.
LABELS = {
    "heldout": "all three held out",
    "fresh": "all three fresh",
    "fresh2": "all three fresh, round 3",
    "fresh3": "all three, third fresh review",
    "fresh4": "all three, fourth fresh review",
    "fresh5": "all three, fifth fresh review",
    "fresh6": "all three, sixth fresh review",
    "fresh7": "all three, seventh fresh review",
    "fresh8": "all three, eighth fresh review",
    "fresh9": "all three, ninth fresh review",
    "fresh10": "all three, tenth fresh review",
    "fresh11": "all three, eleventh fresh review",
    "fresh12": "all three, twelfth fresh review",
    "fresh13": "all three, thirteenth fresh review",
    "fresh14": "all three, fourteenth fresh review",
    "fresh15": "all three, fifteenth fresh review",
    "fresh16": "all three, sixteenth fresh review",
    "fresh17": "all three, seventeenth fresh review",
    "fresh18": "all three, eighteenth fresh review",
    "fresh19": "all six, nineteenth fresh review",
    "fresh20": "all six, twentieth fresh review",
    "fresh21": "all six, twenty-first fresh review",
}


def _round(path: Path) -> str:
    """Which review a file belongs to: ``tuned`` (the first), or a prefix of ``LABELS``."""
    prefix = path.name.split("-", 1)[0]
    return prefix if prefix in LABELS else "tuned"


def test_the_three_history_reviews_and_the_docstring_contrast_are_there() -> None:
    routes = sorted((_load(p)["repository"], _load(p)["route"]) for p in FILES
                    if not _held_out(_load(p)))
    assert routes == [("pallets/click", "docstring"), ("pallets/click", "history"),
                      ("pallets/flask", "history"), ("psf/requests", "history")]


def test_the_held_out_review_covers_three_other_repositories() -> None:
    held_out = {p.name: _load(p) for p in FILES if _round(p) == "heldout"}
    assert sorted(held_out) == ["heldout-attrs.json", "heldout-itsdangerous.json",
                                "heldout-werkzeug.json"]
    assert all((_round(p) != "tuned") == _held_out(_load(p)) for p in FILES)
    assert sorted((d["repository"], d["route"]) for d in held_out.values()) == [
        ("pallets/itsdangerous", "history"), ("pallets/werkzeug", "history"),
        ("python-attrs/attrs", "history")]
    tuned = {_load(p)["repository"] for p in FILES if not _held_out(_load(p))}
    assert not tuned & {d["repository"] for d in held_out.values()}


def test_the_fresh_review_covers_three_repositories_neither_earlier_review_saw() -> None:
    fresh = {p.name: _load(p) for p in FILES if _round(p) == "fresh"}
    assert sorted(fresh) == ["fresh-httpx.json", "fresh-jinja.json", "fresh-pluggy.json"]
    assert sorted(d["repository"] for d in fresh.values()) == [
        "encode/httpx", "pallets/jinja", "pytest-dev/pluggy"]
    assert all(d["held_out"] and d["route"] == "history" for d in fresh.values())
    assert len({d["tool_commit"] for d in fresh.values()}) == 1
    earlier = {_load(p)["repository"] for p in FILES if _round(p) not in ("fresh", "fresh2")}
    assert not earlier & {d["repository"] for d in fresh.values()}


def test_the_second_fresh_review_redrafts_the_same_repositories_with_a_newer_tool() -> None:
    fresh = {_load(p)["repository"]: _load(p) for p in FILES if _round(p) == "fresh"}
    fresh2 = {p.name: _load(p) for p in FILES if _round(p) == "fresh2"}
    assert sorted(fresh2) == ["fresh2-httpx.json", "fresh2-jinja.json", "fresh2-pluggy.json"]
    assert sorted(d["repository"] for d in fresh2.values()) == sorted(fresh)
    assert all(d["held_out"] and d["route"] == "history" for d in fresh2.values())
    assert len({d["tool_commit"] for d in fresh2.values()}) == 1
    for doc in fresh2.values():
        earlier = fresh[doc["repository"]]
        assert doc["evaluated_commit"] == earlier["evaluated_commit"]
        assert doc["tool_commit"] != earlier["tool_commit"]
        assert doc["earlier_review"]["tool_commit"] == earlier["tool_commit"]
        assert doc["figures"]["carried"] == sum(q["carried"] for q in doc["questions"])
        by_id = {q["id"]: q for q in earlier["questions"]}
        for q in doc["questions"]:
            before = by_id.get(q["earlier_id"]) if q["earlier_id"] else None
            if before is not None:  # the same source commit asks the same question
                assert (before["source_commit"], before["question"]) == (
                    q["source_commit"], q["question"]), q["id"]
            if q["carried"]:  # a carried verdict is the earlier one, on an unchanged question
                assert before is not None, q["id"]
                assert (before["grades"], before["facts"]) == (q["grades"], q["facts"]), q["id"]
                assert [before[k] for k in ("verdict", "tags", "edit")] == [
                    q[k] for k in ("verdict", "tags", "edit")], q["id"]


@pytest.mark.parametrize(("review", "repositories"), [
    ("fresh3", ["encode/starlette", "pypa/packaging", "python-attrs/cattrs"]),
    ("fresh4", ["aio-libs/yarl", "hynek/structlog", "jd/tenacity"]),
    ("fresh5", ["agronholm/anyio", "marshmallow-code/marshmallow", "python-poetry/tomlkit"]),
    ("fresh6", ["encode/uvicorn", "fastapi/typer", "python-jsonschema/jsonschema"]),
    ("fresh7", ["getsentry/responses", "pypa/build", "urllib3/urllib3"]),
    ("fresh8", ["Delgan/loguru", "encode/httpcore", "pypa/pip"]),
    ("fresh9", ["python-trio/trio", "sqlalchemy/alembic", "tox-dev/tox"]),
    ("fresh10", ["PyCQA/flake8", "benoitc/gunicorn", "pypa/virtualenv"]),
    ("fresh11", ["jazzband/pip-tools", "pallets/quart", "pypa/twine"]),
    ("fresh12", ["PyCQA/isort", "aio-libs/multidict", "arrow-py/arrow"]),
    ("fresh13", ["httpie/cli", "psf/black", "pytest-dev/pytest-xdist"]),
    ("fresh14", ["mkdocs/mkdocs", "pyinvoke/invoke", "pypa/setuptools_scm"]),
    ("fresh15", ["pyparsing/pyparsing", "pytest-dev/pytest-mock", "python-hyper/h11"]),
    ("fresh16", ["Kludex/python-multipart", "jmespath/jmespath.py",
                 "python-humanize/humanize"]),
    ("fresh17", ["Pylons/waitress", "pytest-dev/pytest-asyncio", "theskumar/python-dotenv"]),
    ("fresh18", ["pytest-dev/pytest-cov", "sqlalchemy/mako", "tox-dev/filelock"]),
    ("fresh19", ["Python-Markdown/markdown", "andialbrecht/sqlparse", "jpadilla/pyjwt",
                 "more-itertools/more-itertools", "mozilla/bleach", "tox-dev/platformdirs"]),
    ("fresh20", ["jazzband/prettytable", "pallets/markupsafe", "paramiko/paramiko",
                 "pypa/wheel", "python-babel/babel", "tkem/cachetools"]),
    ("fresh21", ["PyCQA/pycodestyle", "PyCQA/pyflakes", "Pylons/pyramid", "Pylons/webob",
                 "pypa/pyproject-hooks", "python-hyper/h2"]),
])
def test_a_later_fresh_review_covers_repositories_no_earlier_review_saw(
        review: str, repositories: list[str]) -> None:
    docs = {p.name: _load(p) for p in FILES if _round(p) == review}
    assert sorted(docs) == sorted(f"{review}-{r.split('/')[1]}.json" for r in repositories)
    assert sorted(d["repository"] for d in docs.values()) == repositories
    assert all(d["held_out"] and d["route"] == "history" for d in docs.values())
    assert len({d["tool_commit"] for d in docs.values()}) == 1
    earlier = [_load(p) for p in FILES if _round(p) != review]
    assert not {d["repository"] for d in earlier} & {d["repository"] for d in docs.values()}
    assert {d["tool_commit"] for d in earlier}.isdisjoint(d["tool_commit"] for d in docs.values())


def _reviews_in(path: Path) -> list[dict[str, Any]]:
    """A file's review, and its supplementary review if it holds one (same shape)."""
    doc = _load(path)
    extra = doc.get("supplementary_review")
    return [doc] if extra is None else [doc, {**doc, **extra}]


@pytest.mark.parametrize("doc", [d for p in FILES for d in _reviews_in(p)],
                         ids=[f"{p.stem}{'-supplementary' if n else ''}"
                              for p in FILES for n, _ in enumerate(_reviews_in(p))])
def test_every_question_has_a_verdict_with_its_reason(doc: dict[str, Any]) -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", doc["tool_commit"])
    assert re.fullmatch(r"[0-9a-f]{40}", doc["evaluated_commit"])
    assert doc["command"].startswith("retrieval-eval init ")
    ids = [q["id"] for q in doc["questions"]]
    assert len(ids) == len(set(ids)) == doc["figures"]["total"]
    for q in doc["questions"]:
        assert q["question"].strip() and q["reason"].strip(), q["id"]
        assert q["verdict"] in VERDICTS, q["id"]
        assert (q["edit"] is not None) == (q["verdict"] == "edit"), q["id"]
        assert bool(q["tags"]) == (q["verdict"] != "keep"), q["id"]
        assert 3 in q["grades"].values(), q["id"]
        if doc["route"] == "history":
            assert re.fullmatch(r"[0-9a-f]{40}", q["source_commit"]), q["id"]
    figures = doc["figures"]
    assert [figures["total"], *(figures[v] for v in VERDICTS)] == _counts([doc])


def test_the_readme_table_states_what_the_files_hold() -> None:
    rows = [m.groups() for line in (FOLDER / "README.md").read_text(encoding="utf-8").splitlines()
            if (m := ROW.match(line))]
    docs = [_load(p) for p in FILES]
    expected = []
    for doc in docs:
        total, kept, edited, rejected = _counts([doc])
        expected.append((doc["repository"], doc["route"], total, kept, edited, rejected))
    rounds = {p: _round(p) for p in FILES}
    history = [_load(p) for p in FILES if rounds[p] == "tuned" and _load(p)["route"] == "history"]
    expected.append(("all three", "history", *_counts(history)))
    for review, label in LABELS.items():
        docs_of_review = [_load(p) for p in FILES if rounds[p] == review]
        expected.append((label, "history", *_counts(docs_of_review)))
    stated = []
    for name, route, total, kept, edited, rejected, share in rows:
        assert int(share) == round(100 * int(kept) / int(total)), name
        stated.append((name, route, int(total), int(kept), int(edited), int(rejected)))
    assert sorted(stated) == sorted(expected)


@pytest.mark.parametrize("doc", [d for p in FILES for d in _reviews_in(p)
                                 if "names_its_answer" in d])
def test_the_give_away_count_is_what_the_file_names(doc: dict[str, Any]) -> None:
    names = doc["names_its_answer"]
    ids = {q["id"] for q in doc["questions"]}
    assert set(names["questions"]) <= ids
    assert names["count"] == len(names["questions"])
    assert names["share_percent"] == round(100 * names["count"] / doc["figures"]["total"])
